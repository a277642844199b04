"""One blueprint per resource; MODULES is the tuple the API registers."""

from shop.api import customers, discovery, identity, notifications, usage

MODULES = (discovery, identity, customers, usage, notifications)


def register_blueprints(api) -> None:
    """Register every resource blueprint under /api/v1."""
    for module in MODULES:
        api.register_blueprint(module.blp, url_prefix="/api/v1")
