"""The customers' pages: the online booking page at /book/<tenant_id>, and the estimate and invoice
pages at /portal/...."""


def register(app) -> None:
    """Mount the customer pages (their view modules add routes to the blueprint when imported)."""
    from shop.portal import booking, documents  # noqa: F401
    from shop.portal.blueprint import bp

    app.register_blueprint(bp)
