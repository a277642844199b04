"""The console's pages, a module per page; importing them adds their routes to the blueprint."""

from shop.console.views import calendar, conversations, inbox, overview, session, webhooks

MODULES = (session, overview, webhooks, inbox, calendar, conversations)
