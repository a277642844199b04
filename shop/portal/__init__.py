"""The customers' pages: the online booking page at /book/<tenant_id> (and, later, /portal/...)."""


def register(app) -> None:
    """Mount the customer pages (their view modules add routes to the blueprint when imported)."""
    from shop.portal import booking  # noqa: F401
    from shop.portal.blueprint import bp

    app.register_blueprint(bp)
