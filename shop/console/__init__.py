"""The browser console at /console/: server-rendered pages over the API's own domain functions."""


def register(app) -> None:
    """Mount the console (its page modules add their routes to the blueprint when imported)."""
    from shop.console.blueprint import bp
    from shop.console.views import MODULES  # noqa: F401

    app.register_blueprint(bp)
