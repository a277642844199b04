"""The console's navigation: each page with the scope a key needs to see it (pages add themselves)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class NavItem:
    endpoint: str
    label: str
    scope: str | None  # None: every signed-in key
    owner: bool = False  # only a teammate with the owner role sees it (issue 27)


NAV: list[NavItem] = [
    NavItem("console.overview", "Overview", None),
    NavItem("console.webhooks", "Webhooks", "webhooks.read"),
    NavItem("console.inbox", "Inbox", "notifications.read"),
]


def add(item: NavItem) -> None:
    """Add a page to the navigation (in the order pages are registered)."""
    if item not in NAV:
        NAV.append(item)


def visible(key) -> list[NavItem]:
    """The pages this key may open; none when signed out."""
    if key is None:
        return []
    owner = getattr(key, "is_owner", False)
    return [
        item for item in NAV if (item.scope is None or item.scope in key.scopes) and (owner or not item.owner)
    ]
