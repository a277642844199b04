"""flask-smorest subclassed once: the Api, the Blueprint with scopes, and the error schema."""

from flask_smorest import Api as _Api
from flask_smorest import Blueprint as _Blueprint

from schemas.common import ErrorSchema
from shop.platform import errors
from shop.platform.validation import ShopParser


class Api(_Api):
    """The API object: the spec's error handlers instead of flask-smorest's."""

    ERROR_SCHEMA = ErrorSchema

    def _register_error_handlers(self):
        errors.install(self._app)

    def handle_http_exception(self, error):
        return errors.handle_http_exception(error)


class Blueprint(_Blueprint):
    """A resource blueprint whose views declare the scope they need."""

    ARGUMENTS_PARSER = ShopParser()

    def arguments(self, schema, *args, **kwargs):
        """As flask-smorest's, with one schema instance per view: given a class, webargs would
        build a new instance (fields deep-copied) on every request."""
        return super().arguments(schema() if isinstance(schema, type) else schema, *args, **kwargs)

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
        """Let a view through the suspension, plan and billing gates (the usage endpoint)."""
        func._ungated = True
        return func
