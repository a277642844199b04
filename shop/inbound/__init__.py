"""Provider webhooks at /inbound/: adapters that verify and parse each provider's format into one
InboundMessage (shop.domain.messaging.inbound) or one delivery receipt; the rules live there."""


def register(app) -> None:
    """Mount the blueprint (each adapter module adds its routes to it when imported)."""
    from shop.inbound import email, gateway, twilio  # noqa: F401
    from shop.inbound.blueprint import bp

    app.register_blueprint(bp)
