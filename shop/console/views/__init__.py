"""The console's pages, a module per page; importing them adds their routes to the blueprint.

Adding a page: a module here whose views are `@bp.route(...)` then `@page("scope.read")` (the guard
checks the session, the key's gates, CSRF on POST and that scope), that call the domain functions
the API calls and return `render("console/<page>.html", section=...)`; form values are read with
shop/console/forms.py (or the API's schema via `forms.load`); add the module to MODULES and its
entry to shop/console/nav.py (`nav.add(NavItem(endpoint, label, scope))`) so keys with the scope
see it in the navigation.
"""

from shop.console.views import (
    appointment_settings,
    board,
    calendar,
    calendar_feeds,
    conversations,
    customers,
    inbox,
    keys,
    money,
    overview,
    session,
    teammates,
    webhooks,
)

MODULES = (
    session,
    overview,
    webhooks,
    inbox,
    calendar,
    calendar_feeds,
    conversations,
    teammates,
    keys,
    board,
    customers,
    money,
    appointment_settings,
)
