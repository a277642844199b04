"""The console's blueprint with its hooks: the session guard, HTML error pages, security headers."""

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
