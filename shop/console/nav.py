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


# the order a shop works in: the day's work, the customers and the money, the messages, then the
# integrator's and the owner's pages (a page not named here comes after, as it registered)
ORDER = (
    "console.overview",
    "console.board",
    "console.calendar_week",
    "console.customers",
    "console.leads",
    "console.estimates",
    "console.invoices",
    "console.conversations_list",
    "console.inbox",
    "console.webhooks",
    "console.keys",
    "console.teammates",
    "console.appointment_settings",
)


def add(item: NavItem) -> None:
    """Add a page to the navigation (placed by ORDER, whatever order the pages register in)."""
    if item not in NAV:
        NAV.append(item)
        NAV.sort(key=lambda i: ORDER.index(i.endpoint) if i.endpoint in ORDER else len(ORDER))


def visible(key) -> list[NavItem]:
    """The pages this key may open; none when signed out."""
    if key is None:
        return []
    owner = getattr(key, "is_owner", False)
    return [
        item for item in NAV if (item.scope is None or item.scope in key.scopes) and (owner or not item.owner)
    ]
