"""flask-smorest subclassed once: the Api, the Blueprint with scopes, and the error schema.

Every view declares its contract with decorators of this Blueprint, side by side, in this order
(outermost first; the ones a view does not need are left out):

    path_id, arguments, response, refuses, public / ungated, scope, idempotency, sensitive, doc

path_id is outermost so that a bad numeric id is 400 invalid_id before the body is looked at; the
marks (scope, idempotency, sensitive, public, ungated) sit inside the wrappers, whose functools.wraps
carries them out to the view the request pipeline reads. doc(operationId=...) comes last.
"""

from functools import wraps

from flask_smorest import Api as _Api
from flask_smorest import Blueprint as _Blueprint

from schemas.common import ErrorSchema
from shop.platform import errors
from shop.platform.ids import parse_id
from shop.platform.validation import ShopParser


def declared_openapi(self, field, **kwargs) -> dict:
    """The OpenAPI properties a custom field declares for its own rule (its OPENAPI attribute):
    apispec cannot read a rule written in `_deserialize`, so the field writes it down."""
    return dict(getattr(field, "OPENAPI", {}))


def query_names(schema) -> frozenset[str]:
    """The names a query schema reads (a field's data_key where it has one)."""
    return frozenset(field.data_key or name for name, field in schema.fields.items() if not field.dump_only)


def _view_functions(view) -> list:
    """The functions a route runs: a view function, or each HTTP method of a MethodView."""
    if isinstance(view, type):
        names = [method.lower() for method in view.methods or ()]
        return [getattr(view, name) for name in names if hasattr(view, name)]
    return [view]


class Api(_Api):
    """The API object: the spec's error handlers instead of flask-smorest's."""

    ERROR_SCHEMA = ErrorSchema

    def _init_spec(self, **kwargs):
        super()._init_spec(**kwargs)
        self.ma_plugin.converter.add_attribute_function(declared_openapi)

    def _register_error_handlers(self):
        errors.install(self._app)

    def handle_http_exception(self, error):
        return errors.handle_http_exception(error)


class Blueprint(_Blueprint):
    """A resource blueprint whose views declare the scope they need."""

    ARGUMENTS_PARSER = ShopParser()

    def route(self, rule, *, parameters=None, tags=None, **options):
        """As flask-smorest's; every view registered here is held to the query rule
        (validation.refuse_unknown_query): a parameter its query schema does not name is 400."""
        register = super().route(rule, parameters=parameters, tags=tags, **options)

        def decorator(view):
            for func in _view_functions(view):
                func._query_checked = True
            return register(view)

        return decorator

    def arguments(self, schema, *args, **kwargs):
        """As flask-smorest's, with one schema instance per view: given a class, webargs would
        build a new instance (fields deep-copied) on every request. A query schema's parameter
        names are what the view accepts in its query string (the unknown-parameter rule)."""
        instance = schema() if isinstance(schema, type) else schema
        register = super().arguments(instance, *args, **kwargs)
        if kwargs.get("location", "json") not in ("query", "querystring"):
            return register

        def decorator(func):
            func = register(func)
            func._query_names = getattr(func, "_query_names", frozenset()) | query_names(instance)
            return func

        return decorator

    def lenient_query(self, func):
        """Mark a view whose spec ignores what it cannot read in the query (the usage endpoint):
        no parameter of its query string is refused for being unknown (x-lenient-query is read and
        dropped by the document's builder: no 400 for it)."""
        func = self.doc(**{"x-lenient-query": True})(func)
        func._lenient_query = True
        return func

    def path_id(self, name: str = "id"):
        """Parse the numeric path id `name` before anything else (the body included): 400 invalid_id."""

        def decorator(func):
            @wraps(func)
            def wrapper(*args, **kwargs):
                kwargs[name] = parse_id(kwargs[name])
                return func(*args, **kwargs)

            return wrapper

        return decorator

    def sensitive(self, func):
        """Mark a view whose response shows a secret: its saved idempotent response is stored encrypted."""
        func._sensitive_response = True
        return func

    def refuses(self, status: int, description: str):
        """Document an error status a view answers beyond the common ones (codes in the description)."""
        return self.alt_response(status, schema=ErrorSchema, description=description)

    def idempotency(self, *, required: bool, min_length: int):
        """Ask for an Idempotency-Key (rotate_secret: required, at least 8 characters), in both the
        rule the request pipeline enforces and the header the document declares."""

        def decorator(func):
            header = {
                "name": "Idempotency-Key",
                "in": "header",
                "required": required,
                "description": f"{min_length} to 255 visible ASCII characters, else 400 "
                "invalid_idempotency_key; an identical retry gets the first response.",
                "schema": {
                    "type": "string",
                    "minLength": min_length,
                    "maxLength": 255,
                    "pattern": "^[!-~]+$",
                },
            }
            func = self.doc(parameters=[header])(func)
            func._idempotency_required, func._idempotency_min_length = required, min_length
            return func

        return decorator

    def scope(self, name: str | None):
        """Mark a view method with the scope it requires (None: any verified key)."""

        def decorator(func):
            func = self.doc(security=[{"bearerAuth": []}], **{"x-required-scope": name})(func)
            func._required_scope = name
            return func

        return decorator

    def public(self, func):
        """Mark a view as an unauthenticated discovery endpoint."""
        func = self.doc(security=[])(func)
        func._public = True
        return func

    def ungated(self, func):
        """Let a view through the suspension, plan and billing gates (the usage endpoint); the
        document then lists neither 402 nor 503 for it (x-ungated is read and dropped there)."""
        func = self.doc(**{"x-ungated": True})(func)
        func._ungated = True
        return func
