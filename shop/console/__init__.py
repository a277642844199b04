"""The browser console at /console/: server-rendered pages over the API's own domain functions."""

from flask import Blueprint
from werkzeug.exceptions import HTTPException

from shop.console import guard, pages
from shop.platform.errors import ApiError

bp = Blueprint("console", __name__, url_prefix="/console")
bp.before_request(guard.check_request)
bp.after_request(pages.secure_headers)
bp.register_error_handler(ApiError, pages.handle_api_error)
bp.register_error_handler(HTTPException, pages.handle_http_exception)
bp.register_error_handler(Exception, pages.handle_unexpected)


def register(app) -> None:
    """Mount the console (its page modules add their routes to the blueprint when imported)."""
    from shop.console.views import MODULES  # noqa: F401

    app.register_blueprint(bp)
