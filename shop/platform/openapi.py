"""The OpenAPI document: flask-smorest's spec plus the spec's errors, headers, scopes and examples."""

import copy
import re

import yaml

from shop.platform.ids import ID_PATTERN

REQUEST_ID_EXAMPLE = "req_5f2c0e5b9a1d4c7e8f0a1b2c"

# every status the service can answer, with the example body of its most common code
ERRORS = {
    "400": ("invalid_request_error", "invalid_field", "A parameter, header or field is invalid.", "param"),
    "401": ("authentication_error", "unauthorized", "Missing, malformed, revoked or expired API key.", None),
    "402": (
        "payment_required_error",
        "upgrade_required",
        "The plan lacks API access or billing needs attention (upgrade_required, payment_required, "
        "billing_subscription_required).",
        None,
    ),
    "403": ("permission_error", "insufficient_scope", "This API key lacks the required scope.", None),
    "404": (
        "not_found_error",
        "not_found",
        "No such record, or another tenant's (the same answer); param names the path parameter: id.",
        "id",
    ),
    "405": (
        "method_not_allowed_error",
        "method_not_allowed",
        "Method not allowed on this path; the Allow header lists the accepted ones.",
        None,
    ),
    "409": (
        "conflict_error",
        "idempotency_key_reuse",
        "This Idempotency-Key was used with a different request, or its first request is still "
        "running (idempotency_in_progress).",
        "Idempotency-Key",
    ),
    "413": ("invalid_request_error", "payload_too_large", "The request body is too large.", None),
    "415": (
        "unsupported_media_type_error",
        "unsupported_media_type",
        "A write with a body must use Content-Type: application/json.",
        None,
    ),
    "422": ("unprocessable_error", "unprocessable", "A business rule refused the request.", None),
    "429": (
        "rate_limit_error",
        "rate_limited",
        "Too many requests for this key, or too many failed authentications from this address.",
        None,
    ),
    "500": ("api_error", "internal_error", "An unexpected error occurred.", None),
    "503": ("service_unavailable_error", "tenant_suspended", "This account is suspended.", None),
    "504": (
        "api_error",
        "api_usage_timeout",
        "The usage rollup exceeded its time budget; retry with a shorter window.",
        None,
    ),
}
WRITE_METHODS = ("post", "put", "patch", "delete")
HTTP_METHODS = ("get", "head", "post", "put", "patch", "delete", "options", "trace")

HEADERS = {
    "X-Request-Id": ("The request's id, also in error bodies as request_id.", {"type": "string"}),
    "RateLimit-Limit": ("The key's bucket capacity.", {"type": "integer", "minimum": 0}),
    "RateLimit-Remaining": ("Tokens left in the key's bucket.", {"type": "integer", "minimum": 0}),
    "RateLimit-Reset": (
        "Seconds until the bucket is full (on 429: equal to Retry-After).",
        {"type": "integer", "minimum": 0},
    ),
    "Retry-After": ("Seconds to wait before retrying.", {"type": "integer", "minimum": 0}),
    "WWW-Authenticate": (
        'The scheme to authenticate with (RFC 6750): `Bearer realm="api"`, plus '
        '`error="invalid_token"` when the token sent is unknown, revoked or expired.',
        {"type": "string"},
    ),
}
RATE_HEADERS = ("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset")

IDEMPOTENCY_HEADER = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "Makes a retry safe: the first response is saved for 24 hours and replayed to an "
    "identical retry. 1 to 255 visible ASCII characters, else 400 invalid_idempotency_key.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"},
}

# how each kind of id in a path is written; a numeric id outside ID_PATTERN is 400 invalid_id, an
# unknown webhook or delivery id is 404; examples name records of the demo and contract fixtures
NUMERIC_ID = {"type": "string", "pattern": ID_PATTERN, "maxLength": 10}
NUMERIC_ID_TEXT = (
    "A positive integer of at most 2,147,483,647 written in 1 to 10 ASCII digits (leading "
    "zeros allowed); anything else is 400 invalid_id."
)
PATH_EXAMPLES = {
    "/api/v1/customers": "1",
    "/api/v1/tickets": "1001",
    "/api/v1/leads": "6001",
    "/api/v1/appointments": "200",
    "/api/v1/messages/conversations": "10",
    "/api/v1/messages": "100",
    "/api/v1/messages/suppressions": "3",
    "/api/v1/notifications": "50",
    "/api/v1/estimates": "5001",
    "/api/v1/invoices": "3001",
    "/api/v1/payments": "4001",
    "/api/v1/refunds": "6001",
}
STRING_IDS = {
    "webhooks": (
        {
            "type": "string",
            "pattern": "^whsub_[A-Za-z0-9_-]{8,34}$",
            "maxLength": 40,
            "example": "whsub_3f9a2c1b7e8d4f6011223344",
        },
        "A webhook subscription id (whsub_...); an unknown one is 404.",
    ),
    "delivery_id": (
        {
            "type": "string",
            "pattern": "^whd_[A-Za-z0-9_-]{8,34}$",
            "maxLength": 38,
            "example": "whd_8c1e2f3a4b5d6e7f00112233",
        },
        "A webhook delivery id (whd_...); an unknown one is 404.",
    ),
    "hold_id": (
        {
            "type": "string",
            "pattern": "^hold_[0-9a-f]{24}$",
            "maxLength": 29,
            "example": "hold_5f2c0e5b9a1d4c7e8f0a1b2c",
        },
        "A slot hold id (hold_...); an unknown one, or another shop's, is 404.",
    ),
    "feed_id": (
        {
            "type": "string",
            "pattern": "^calfeed_[0-9a-f]{24}$",
            "maxLength": 32,
            "example": "calfeed_5f2c0e5b9a1d4c7e8f0a1b2c",
        },
        "A calendar feed id (calfeed_...); an unknown or revoked one, or another shop's, is 404.",
    ),
}


# a path that names a record by an id: its 404 names that parameter; any other 404 is a route's
RECORD_IN_PATH = re.compile(r"\{\w*id\}")


def _error_response(status: str, path: str, description: str | None = None) -> dict:
    kind, code, message, param = ERRORS[status]
    if status == "404" and not RECORD_IN_PATH.search(path):
        param = None  # /metrics while it is off: the unknown route's 404
    example = {
        "error": {
            "type": kind,
            "code": code,
            "message": message,
            "param": param,
            "details": None,
            "request_id": REQUEST_ID_EXAMPLE,
        }
    }
    return {
        "description": description or message,
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/Error"}, "example": example}
        },
    }


def _header_ref(name: str, required: bool) -> dict:
    return {"$ref": f"#/components/headers/{name}{'Required' if required else ''}"}


def _components_headers() -> dict:
    headers = {}
    for name, (description, schema) in HEADERS.items():
        headers[name] = {"description": description, "schema": schema}
        headers[f"{name}Required"] = {"description": description, "schema": schema, "required": True}
    return headers


def _describe_path_ids(path: str, item: dict) -> None:
    """Path parameters with the exact form the routes accept and an example of a real record."""
    for parameter in item.get("parameters", []):
        if parameter.get("in") != "path":
            continue
        kind = (
            parameter["name"]
            if parameter["name"] in ("delivery_id", "hold_id", "feed_id")
            else ("webhooks" if path.startswith("/api/v1/webhooks/") else None)
        )
        if kind:
            schema, description = STRING_IDS[kind]
            parameter.update(schema=dict(schema), description=description)
            continue
        # a numeric id sits right after its collection; an id elsewhere keeps what its view declares
        prefix = next((p for p in PATH_EXAMPLES if path.startswith(f"{p}/{{{parameter['name']}}}")), None)
        if prefix is not None:
            parameter.update(
                schema={**NUMERIC_ID, "example": PATH_EXAMPLES[prefix]}, description=NUMERIC_ID_TEXT
            )


def _can_be_invalid(operation: dict, path_parameters: list) -> bool:
    """400 applies when a body, a numeric path id, a header or a strictly read query param is sent."""
    if "requestBody" in operation:
        return True
    if any(p["schema"].get("pattern") == ID_PATTERN for p in path_parameters):
        return True
    return any(
        p["in"] == "header" or p["in"] == "query" and not p["schema"].get("x-ignored-when-malformed")
        for p in operation.get("parameters", [])
    )


def _statuses(
    path: str, method: str, operation: dict, path_parameters: list, ungated: bool, lenient: bool
) -> set[str]:
    """The error statuses this operation can answer, from what it takes and how it is guarded."""
    statuses = {"405", "500"}
    if not lenient:  # a query parameter the operation does not name is 400 invalid_query (any route)
        statuses.add("400")
    if operation.get("security") == []:
        return statuses
    if not _keyed(operation):  # /metrics: its own token, no key, no limits; 404 while it is off
        return statuses | {"401", "404"}
    statuses |= {"401", "429"}
    if not ungated:
        statuses |= {"402", "503"}
    if operation.get("x-required-scope"):
        statuses.add("403")
    if "{" in path:
        statuses.add("404")
    if method == "post":
        statuses.add("409")  # Idempotency-Key reuse or a first request still in progress
    if method in WRITE_METHODS and "requestBody" in operation:
        statuses |= {"413", "415"}
    if _can_be_invalid(operation, path_parameters):
        statuses.add("400")
    return statuses


def _keyed(operation: dict) -> bool:
    """Whether an operation takes an API key (the default) rather than no credential or its own."""
    security = operation.get("security")
    return security is None or any("bearerAuth" in requirement for requirement in security)


def _document_headers(operation: dict) -> None:
    """X-Request-Id on every response; WWW-Authenticate on 401; for a keyed operation, a verified
    key's RateLimit-* and Retry-After on 429."""
    keyed = _keyed(operation)
    for status, response in operation["responses"].items():
        headers = response.setdefault("headers", {})
        headers["X-Request-Id"] = _header_ref("X-Request-Id", True)
        if status == "401":
            headers["WWW-Authenticate"] = _header_ref("WWW-Authenticate", True)
        if not keyed:
            continue
        verified = status not in ("401", "413", "415")  # refused before the key is looked at
        for name in RATE_HEADERS if verified else ():
            headers[name] = _header_ref(name, status.startswith("2"))
        if status == "429":
            headers["Retry-After"] = _header_ref("Retry-After", True)


def _complete_operation(path: str, method: str, operation: dict, path_parameters: list) -> None:
    """Errors, the Idempotency-Key header and response headers of one operation."""
    ungated = operation.pop("x-ungated", False)
    lenient = operation.pop("x-lenient-query", False)
    responses = operation.setdefault("responses", {})
    responses.pop("default", None)
    if responses.get("422", {}).get("$ref"):  # flask-smorest's automatic 422: validation here is 400
        del responses["422"]
    if method == "post":
        parameters = operation.setdefault("parameters", [])
        if not any(p.get("in") == "header" and p.get("name") == "Idempotency-Key" for p in parameters):
            parameters.append(copy.deepcopy(IDEMPOTENCY_HEADER))
    for status in sorted(_statuses(path, method, operation, path_parameters, ungated, lenient)):
        responses.setdefault(status, _error_response(status, path))
    for status, response in responses.items():
        if status in ERRORS and "content" not in response:
            responses[status] = _error_response(status, path, response.get("description"))
    operation["responses"] = dict(sorted(responses.items()))
    _document_headers(operation)


# what the parser refuses in any text it is sent (shop.platform.validation.refuse_unstorable): a NUL
NO_NUL_PATTERN = "^[^\\u0000]*$"


def _no_nul(schema: dict, schemas: dict, seen: set) -> None:
    """Write the parser's NUL rule on every free-text string of a request schema (one without an
    enum, a format or a pattern of its own), so a client or a contract test knows it is refused."""
    ref = schema.get("$ref", "")
    if ref:
        name = ref.rsplit("/", 1)[-1]
        if name not in seen and name in schemas:
            seen.add(name)
            _no_nul(schemas[name], schemas, seen)
        return
    if schema.get("type") == "string" and not {"enum", "format", "pattern"} & set(schema):
        schema["pattern"] = NO_NUL_PATTERN
    for nested in schema.get("properties", {}).values():
        _no_nul(nested, schemas, seen)
    if isinstance(schema.get("items"), dict):
        _no_nul(schema["items"], schemas, seen)
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []) + schema.get("allOf", []):
        _no_nul(branch, schemas, seen)


def _document_no_nul(operation: dict, schemas: dict, seen: set) -> None:
    """The NUL rule on an operation's body and its strictly parsed query parameters."""
    for parameter in operation.get("parameters", []):
        if parameter.get("in") == "query" and not parameter["schema"].get("x-ignored-when-malformed"):
            _no_nul(parameter["schema"], schemas, seen)
    body = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if body:
        _no_nul(body["schema"], schemas, seen)


def _schema_rules(api, schemas: dict) -> None:
    """Whole-body rules a schema class declares in OPENAPI (AppointmentUpdate: minProperties)."""
    for key, name in api.ma_plugin.converter.refs.items():
        if name in schemas:
            schemas[name].update(getattr(key[0], "OPENAPI", {}))


def openapi_document(api) -> dict:
    """The full OpenAPI 3 document as a dict."""
    spec = copy.deepcopy(api.spec.to_dict())
    _schema_rules(api, spec.get("components", {}).get("schemas", {}))
    spec["servers"] = [{"url": "/"}]
    spec["security"] = [{"bearerAuth": []}]
    components = spec.setdefault("components", {})
    components["headers"] = _components_headers()
    components.pop("responses", None)  # flask-smorest's DEFAULT_ERROR and 422: replaced above
    seen: set = set()  # request schemas already given the NUL rule
    for name, path in spec.get("paths", {}).items():
        _describe_path_ids(name, path)
        for method, operation in path.items():
            if method in HTTP_METHODS:
                _complete_operation(name, method, operation, path.get("parameters", []))
                _document_no_nul(operation, components.get("schemas", {}), seen)
    return spec


def openapi_yaml(api) -> str:
    """The same document as YAML."""
    return yaml.safe_dump(openapi_document(api), sort_keys=False, allow_unicode=True)
