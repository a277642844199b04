"""The OpenAPI document: flask-smorest's spec plus the spec's errors, scopes and examples."""

import copy

import yaml

# errors any authenticated operation can answer, with an example body each
COMMON_ERRORS = {
    "400": ("invalid_request_error", "invalid_field", "A parameter or field is invalid.", "param"),
    "401": ("authentication_error", "unauthorized", "Missing, malformed, revoked or expired API key.", None),
    "402": ("payment_required_error", "upgrade_required", "Your plan does not include API access.", None),
    "403": ("permission_error", "insufficient_scope", "This API key lacks the required scope.", None),
    "404": ("not_found_error", "not_found", "No such record.", None),
    "409": ("conflict_error", "idempotency_key_reuse",
            "This Idempotency-Key was used with a different request body or URL.", "Idempotency-Key"),
    "405": ("method_not_allowed_error", "method_not_allowed", "Method not allowed.", None),
    "413": ("invalid_request_error", "payload_too_large", "The request body is too large.", None),
    "415": ("unsupported_media_type_error", "unsupported_media_type", "Use application/json.", None),
    "429": ("rate_limit_error", "rate_limited", "Too many requests; retry later.", None),
    "500": ("api_error", "internal_error", "An unexpected error occurred.", None),
    "503": ("service_unavailable_error", "tenant_suspended", "This account is suspended.", None),
}
AUTH_ONLY = ("401", "402", "403", "429", "503")
WRITE_ONLY = ("413", "415")
POST_ONLY = ("409",)  # Idempotency-Key conflicts; an operation may document its own 409 besides


def _error_response(status: str) -> dict:
    kind, code, message, param = COMMON_ERRORS[status]
    example = {"error": {"type": kind, "code": code, "message": message, "param": param,
                         "details": None, "request_id": "req_5f2c0e5b9a1d4c7e8f0a1b2c"}}
    return {"description": message,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"},
                                             "example": example}}}


IDEMPOTENCY_HEADER = {
    "name": "Idempotency-Key", "in": "header", "required": False,
    "description": "Makes a retry safe: the first response is saved for 24 hours and replayed. "
                   "1 to 255 visible ASCII characters (rotate_secret: required, at least 8).",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"},
}


def _add_idempotency_header(operation: dict) -> None:
    parameters = operation.setdefault("parameters", [])
    if not any(p.get("in") == "header" and p.get("name") == "Idempotency-Key" for p in parameters):
        parameters.append(dict(IDEMPOTENCY_HEADER))


def _add_errors(operation: dict, method: str) -> None:
    if method == "post":
        _add_idempotency_header(operation)
    responses = operation.setdefault("responses", {})
    public = operation.get("security") == []
    for status in COMMON_ERRORS:
        if public and status in AUTH_ONLY:
            continue
        if method not in ("post", "put", "patch", "delete") and status in WRITE_ONLY:
            continue
        if method != "post" and status in POST_ONLY:
            continue
        responses.setdefault(status, _error_response(status))
    responses.pop("default", None)


# how each kind of id in a path is written; anything else is answered 400 invalid_id (numeric
# ids) or 404 not_found (webhook ids), so the document says what the routes accept
PATH_IDS = {
    "numeric": ({"type": "string", "pattern": "^[0-9]{1,10}$", "example": "200"},
                "A positive 32-bit integer written in digits; anything else is 400 invalid_id."),
    "webhooks": ({"type": "string", "maxLength": 64, "example": "whsub_3f9a2c1b7e8d4f6011223344"},
                 "A webhook subscription id (whsub_...)."),
    "delivery_id": ({"type": "string", "maxLength": 64, "example": "whd_8c1e2f3a4b5d6e7f00112233"},
                    "A webhook delivery id (whd_...)."),
}


def _describe_path_ids(path: str, item: dict) -> None:
    for parameter in item.get("parameters", []):
        if parameter.get("in") != "path":
            continue
        kind = (parameter["name"] if parameter["name"] == "delivery_id"
                else "webhooks" if path.startswith("/api/v1/webhooks/") else "numeric")
        schema, description = PATH_IDS[kind]
        parameter.update(schema=dict(schema), description=description)


def openapi_document(api) -> dict:
    """The full OpenAPI 3 document as a dict."""
    spec = copy.deepcopy(api.spec.to_dict())
    spec["servers"] = [{"url": "/"}]
    spec["security"] = [{"bearerAuth": []}]
    for name, path in spec.get("paths", {}).items():
        _describe_path_ids(name, path)
        for method, operation in path.items():
            if method in ("get", "post", "put", "patch", "delete"):
                _add_errors(operation, method)
    return spec


def openapi_yaml(api) -> str:
    """The same document as YAML."""
    return yaml.safe_dump(openapi_document(api), sort_keys=False, allow_unicode=True)
