"""Schemathesis over every operation of the served OpenAPI document, against the in-process app."""

import re
import uuid
from urllib.parse import quote

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from playhouse.shortcuts import model_to_dict
from schemathesis import checks

from schemas.common import CURSOR_PATTERN
from shop import clock, gunicorn_conf
from shop.models import (
    Appointment,
    CalendarFeed,
    Customer,
    Estimate,
    Invoice,
    Lead,
    Notification,
    Payment,
    Refund,
    Ticket,
    WebhookDelivery,
    WebhookDeliveryAttempt,
    WebhookSubscription,
)
from shop.platform.ids import ID_PATTERN
from tests.helpers import auth_headers, tenant_fixture

KEY = "sk_test_acme_token_0001"
METRICS_TOKEN = "metrics-token-for-the-contract-run"
# the ids the document gives as path examples, so the examples phase reaches real records
SUBSCRIPTION_ID = "whsub_3f9a2c1b7e8d4f6011223344"
DELIVERY_ID = "whd_8c1e2f3a4b5d6e7f00112233"
ATTEMPT_ID = "whatt_8c1e2f3a4b5d6e7f00112233"
FEED_ID = "calfeed_5f2c0e5b9a1d4c7e8f0a1b2c"


def contract_tenant() -> dict:
    """A tenant with a record behind every documented path example."""
    return tenant_fixture(
        "acme",
        users=[{"id": 7, "email": "sam@acme.test", "name": "Sam"}],
        customers=[
            {
                "id": 1,
                "display_name": "Ann Lee",
                "email": "ann@example.com",
                "phone": "+15555550100",
                "sms_consent": True,
            }
        ],
        tickets=[{"id": "1001", "customer_id": 1, "subject": "Cracked screen", "status": "In Progress"}],
        leads=[{"id": 6001, "name": "Cy Park", "email": "cy@example.com", "source": "web_form"}],
        conversations=[
            {
                "id": 10,
                "customer_id": 1,
                "messages": [
                    {
                        "id": 100,
                        "channel": "sms",
                        "direction": "inbound",
                        "body": "Is it ready?",
                        "sender": "+15555550100",
                    }
                ],
            }
        ],
        notifications=[
            {
                "id": 50,
                "scope": "global",
                "type": "new_ticket",
                "message": "New ticket 1001",
                "ticket_id": "1001",
            }
        ],
        appointments=[
            {
                "id": 200,
                "customer_name": "Ann Lee",
                "customer_phone": "+15555550100",
                "scheduled_date": "2026-12-01",
                "scheduled_time": "10:00",
                "ticket_id": "1001",
            }
        ],
        webhook_subscriptions=[
            {"id": SUBSCRIPTION_ID, "url": "https://hooks.example.com/repair-shop", "events": ["*"]}
        ],
        # a sent estimate and a sent invoice part paid, so send, approve, decline, void and pay can succeed
        estimates=[{"id": 5001, "ticket_id": 1001, "status": "sent", "total": 12000}],
        invoices=[{"id": 3001, "ticket_id": 1001, "status": "sent", "total": 10**9}],
        payments=[{"id": 4001, "invoice_id": 3001, "amount": 100000}],
        refunds=[{"id": 6001, "payment_id": 4001, "amount": 10}],
        booking={
            "enabled": True,
            "hours": {day: [["09:00", "17:00"]] for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")},
        },
    )


EXAMPLE_ROWS = []  # (model, row) of every record a path example names, as loaded


def restore_example_records() -> None:
    """Put the example records back as loaded, so an earlier case (a delete, a cancel, a rotation)
    does not turn every later positive case into a 404 or a state refusal."""
    for model, row in EXAMPLE_ROWS:
        key = model._meta.primary_key
        if model.update(**row).where(key == row[key.name]).execute() == 0:
            model.insert(**row).execute()


def unique_idempotency_key(case) -> None:
    """Make a generated Idempotency-Key unique (still valid): hypothesis repeats small values like "0",
    and the same key with another body is a correct 409 that would hide the operation's success."""
    key = (case.headers or {}).get("Idempotency-Key")
    if isinstance(key, str) and case.meta.generation.mode.is_positive:
        case.headers["Idempotency-Key"] = f"{key[:200]}-{uuid.uuid4().hex}"


@pytest.fixture
def contract_schema(app, client, load, monkeypatch):
    """The served document, loaded over WSGI, with limits lifted and the example records in place."""
    monkeypatch.setitem(app.config, "RATE_LIMIT_CAPACITY", 10**9)
    monkeypatch.setitem(app.config, "AUTH_FAILURES_PER_MINUTE", 10**9)
    monkeypatch.setitem(app.config, "METRICS_TOKEN", METRICS_TOKEN)  # /metrics on, so its 200 is checked
    load(contract_tenant())
    ping = client.post(f"/api/v1/webhooks/{SUBSCRIPTION_ID}/ping", headers=auth_headers(KEY))
    assert ping.status_code == 202, ping.get_data(as_text=True)
    WebhookDelivery.update(id=DELIVERY_ID, status="delivered").where(
        WebhookDelivery.id == ping.get_json()["id"]
    ).execute()
    # an attempt in the delivery's log, so its list dumps a real record
    WebhookDeliveryAttempt.create(
        id=ATTEMPT_ID,
        tenant="acme",
        delivery=DELIVERY_ID,
        subscription=SUBSCRIPTION_ID,
        number=1,
        trigger="initial",
        status="succeeded",
        started_at=clock.now(),
        finished_at=clock.now(),
        duration_ms=12,
        address="203.0.113.9",
        request_headers={"Content-Type": "application/json"},
        response_status=200,
        response_headers={"Content-Type": "application/json"},
        response_body="{}",
    )
    CalendarFeed.create(id=FEED_ID, tenant="acme", token_hash="0" * 64, created_at=clock.now())
    EXAMPLE_ROWS[:] = [
        (model, model_to_dict(model.get_by_id(pk), recurse=False))
        for model, pk in (
            (Customer, 1),
            (Ticket, 1001),
            (Lead, 6001),
            (Appointment, 200),
            (Notification, 50),
            (WebhookSubscription, SUBSCRIPTION_ID),
            (WebhookDelivery, DELIVERY_ID),
            (WebhookDeliveryAttempt, ATTEMPT_ID),
            (CalendarFeed, FEED_ID),
            (Estimate, 5001),
            (Invoice, 3001),
            (Payment, 4001),
            (Refund, 6001),
        )
    ]
    # the key goes in as the document's bearerAuth scheme, so cases without it stay without it
    schemes = {"bearerAuth": {"bearer": KEY}, "metricsToken": {"bearer": METRICS_TOKEN}}
    config = schemathesis.Config.from_dict({"auth": {"openapi": schemes}})
    return schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app, config=config)


@pytest.fixture(autouse=True)
def _node_id_for_schemathesis(request):
    """schemathesis 4.32 renames the running node through `_nodeid`, which pytest 9 no longer has."""
    if not hasattr(request.node, "_nodeid"):
        request.node._nodeid = request.node.nodeid


# the test suite's probe route is registered on the shared app; it is no part of the service
schema = schemathesis.pytest.from_fixture("contract_schema").exclude(path="/api/v1/_probe")


@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_every_operation_keeps_the_contract(case):
    restore_example_records()
    unique_idempotency_key(case)
    response = case.call()
    case.validate_response(response, checks=every_check(), excluded_checks=excused_checks(case, response))


def every_check() -> list:
    """Every check schemathesis ships (its registry), not only the ones its configuration enables."""
    checks.load_all_checks()
    return [checks.CHECKS.get_one(name) for name in checks.CHECKS.get_all_names()]


def test_the_contract_run_uses_every_check_schemathesis_ships():
    names = {check.__name__ for check in every_check()}
    assert {
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
        "negative_data_rejection",
        "positive_data_acceptance",
        "missing_required_header",
        "unsupported_method",
        "allow_header_conformance",
        "ignored_auth",
    } <= names


# what a document cannot express, each with its reason: a refusal with this (code, param) lifts
# positive_data_acceptance for that one response; param None matches any
EXCUSED_REFUSALS = {
    ("invalid_cursor", "cursor"): "a cursor is valid only as issued: signed, bound to endpoint and query",
    ("invalid_service_id", "service_id"): "the service must exist in the shop's booking settings",
    ("invalid_field", "tech_id"): "a hold's tech must be on the shop's roster",
    ("invalid_time", "time"): "a hold's wall time must exist that day (not in a DST gap)",
    ("invalid_field", "Service-Version"): "a version date must not precede the first API version",
    ("invalid_field", "url"): "a webhook host must be public: no private, loopback or metadata address",
    ("invalid_field", "status"): "a ticket status must be one of the shop's ticket_statuses",
    ("invalid_field", "assigned_user_id"): "a ticket's assignee must be a teammate of the shop",
    # rules joining two fields or parameters: OpenAPI 3.0 cannot say them
    ("missing_user_email", "user_email"): "user_email is required only when scope=user",
    ("invalid_status", "status"): "a terminal status must be the only field of a PATCH",
    ("conflicting_aliases", "content"): "content and body must agree when both are sent",
    ("missing_field", None): "send: content or body must hold more than whitespace",
    ("invalid_field", "address"): "a suppression's address must suit its channel (a phone, an email)",
    ("invalid_field", "to"): "send: an email `to` must be the ticket customer's address",
    # the state of the record the earlier cases left, not the shape of the request
    ("status_transition_failed", None): "the appointment's status does not allow the move",
    ("status_reset_required", None): "the appointment's status does not allow the move",
    ("update_failed", None): "the appointment's status does not allow the change",
    ("slot_unavailable", None): "the slot is taken or outside business hours",
    ("send_failed", None): "the recipient is suppressed or lacks consent",
    ("recovery_in_progress", None): "an earlier case's recovery of the subscription is still running",
    ("invalid_field", "customer_id"): "an invoice's customer_id must be the customer of its ticket_id",
    ("invalid_field", "line_items"): "the line items' total must fit 32 bits: a sum no schema bounds",
    ("unprocessable", None): "the money record's state: what is due or left, draft, sent or decided",
    # recover: a window is [since, until), so until must come after since (two fields again)
    ("invalid_field", "until"): "recover: until must be later than since",
}
# the spec: malformed usage parameters are ignored, never an error; the document's maxLength only
# bounds the request line, so a longer value is accepted like any other malformed one
LENIENT_OPERATIONS = {"getUsage"}


def excused_checks(case, response) -> list:
    """The checks a listed exclusion lifts for this response (none for almost every case)."""
    if case.operation.definition.raw.get("operationId") in LENIENT_OPERATIONS:
        return [checks.negative_data_rejection]
    if response.status_code not in (400, 409, 422):
        return []
    error = (response.json() or {}).get("error") or {}
    code, param = error.get("code"), error.get("param")
    if (code, param) in EXCUSED_REFUSALS or (code, None) in EXCUSED_REFUSALS:
        return [checks.positive_data_acceptance]
    return []


# renaming an operationId breaks generated clients: change this list only on purpose
OPERATION_IDS = {
    ("get", "/api/v1"): "getApiIndex",
    ("get", "/api/v1/health"): "getHealth",
    ("get", "/api/v1/openapi.json"): "getOpenApiJson",
    ("get", "/api/v1/openapi.yaml"): "getOpenApiYaml",
    ("get", "/api/v1/docs"): "getApiDocs",
    ("get", "/api/v1/docs/assets/{filename}"): "getApiDocsAsset",
    ("get", "/api/v1/me"): "getApiKeyIdentity",
    ("get", "/api/v1/customers"): "listCustomers",
    ("post", "/api/v1/customers"): "createCustomer",
    ("get", "/api/v1/customers/{id}"): "getCustomer",
    ("patch", "/api/v1/customers/{id}"): "updateCustomer",
    ("get", "/api/v1/tickets"): "listTickets",
    ("post", "/api/v1/tickets"): "createTicket",
    ("get", "/api/v1/tickets/{id}"): "getTicket",
    ("patch", "/api/v1/tickets/{id}"): "updateTicket",
    ("get", "/api/v1/leads"): "listLeads",
    ("post", "/api/v1/leads"): "createLead",
    ("get", "/api/v1/leads/{id}"): "getLead",
    ("patch", "/api/v1/leads/{id}"): "updateLead",
    ("post", "/api/v1/leads/{id}/convert"): "convertLead",
    ("get", "/api/v1/appointments"): "listAppointments",
    ("post", "/api/v1/appointments"): "createAppointment",
    ("get", "/api/v1/appointments/slots"): "listAppointmentSlots",
    ("post", "/api/v1/appointments/slots/holds"): "createAppointmentSlotHold",
    ("delete", "/api/v1/appointments/slots/holds/{hold_id}"): "releaseAppointmentSlotHold",
    ("get", "/api/v1/appointments/{id}"): "getAppointment",
    ("patch", "/api/v1/appointments/{id}"): "updateAppointment",
    ("get", "/api/v1/appointments/{id}/reminders"): "listAppointmentReminders",
    ("post", "/api/v1/appointments/{id}/cancel"): "cancelAppointment",
    ("post", "/api/v1/appointments/{id}/complete"): "completeAppointment",
    ("post", "/api/v1/appointments/{id}/no_show"): "markAppointmentNoShow",
    ("post", "/api/v1/appointments/{id}/link_ticket"): "linkAppointmentTicket",
    ("get", "/api/v1/appointments/calendar_feeds"): "listCalendarFeeds",
    ("post", "/api/v1/appointments/calendar_feeds"): "createCalendarFeed",
    ("delete", "/api/v1/appointments/calendar_feeds/{feed_id}"): "deleteCalendarFeed",
    ("get", "/api/v1/messages/conversations"): "listConversations",
    ("get", "/api/v1/messages"): "listConversationsAlias",
    ("get", "/api/v1/messages/conversations/{conversation_id}"): "getConversation",
    ("get", "/api/v1/messages/conversations/{conversation_id}/messages"): "listConversationMessages",
    ("patch", "/api/v1/messages/conversations/{conversation_id}"): "updateConversation",
    ("post", "/api/v1/messages/conversations/{conversation_id}/read"): "markConversationRead",
    ("get", "/api/v1/messages/suppressions"): "listSuppressions",
    ("post", "/api/v1/messages/suppressions"): "createSuppression",
    ("delete", "/api/v1/messages/suppressions/{suppression_id}"): "deleteSuppression",
    ("get", "/api/v1/messages/{message_id}"): "getMessage",
    ("post", "/api/v1/messages/send"): "sendMessage",
    ("get", "/api/v1/notifications"): "listNotifications",
    ("get", "/api/v1/notifications/count"): "countUnreadNotifications",
    ("post", "/api/v1/notifications/archive-read"): "archiveReadNotifications",
    ("get", "/api/v1/notifications/{id}"): "getNotification",
    ("post", "/api/v1/notifications/{id}/read"): "markNotificationRead",
    ("post", "/api/v1/notifications/{id}/unread"): "markNotificationUnread",
    ("post", "/api/v1/notifications/{id}/archive"): "archiveNotification",
    ("post", "/api/v1/notifications/{id}/unarchive"): "unarchiveNotification",
    ("get", "/api/v1/usage"): "getUsage",
    ("get", "/api/v1/webhooks/event_types"): "listWebhookEventTypes",
    ("get", "/api/v1/webhooks"): "listWebhooks",
    ("post", "/api/v1/webhooks"): "createWebhook",
    ("get", "/api/v1/webhooks/{id}"): "getWebhook",
    ("patch", "/api/v1/webhooks/{id}"): "updateWebhook",
    ("delete", "/api/v1/webhooks/{id}"): "deleteWebhook",
    ("post", "/api/v1/webhooks/{id}/rotate_secret"): "rotateWebhookSecret",
    ("post", "/api/v1/webhooks/{id}/ping"): "pingWebhook",
    ("get", "/api/v1/webhooks/{id}/deliveries"): "listWebhookDeliveries",
    ("get", "/api/v1/webhooks/{id}/deliveries/summary"): "getWebhookDeliverySummary",
    ("post", "/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver"): "redeliverWebhookDelivery",
    ("get", "/api/v1/webhooks/{id}/deliveries/{delivery_id}"): "getWebhookDelivery",
    ("get", "/api/v1/webhooks/{id}/deliveries/{delivery_id}/attempts"): "listWebhookDeliveryAttempts",
    ("post", "/api/v1/webhooks/{id}/recover"): "recoverWebhookDeliveries",
    ("get", "/api/v1/webhooks/{id}/stats"): "getWebhookEndpointStats",
    ("get", "/metrics"): "getMetrics",
    ("get", "/api/v1/estimates"): "listEstimates",
    ("post", "/api/v1/estimates"): "createEstimate",
    ("get", "/api/v1/estimates/{id}"): "getEstimate",
    ("patch", "/api/v1/estimates/{id}"): "updateEstimate",
    ("post", "/api/v1/estimates/{id}/send"): "sendEstimate",
    ("post", "/api/v1/estimates/{id}/approve"): "approveEstimate",
    ("post", "/api/v1/estimates/{id}/decline"): "declineEstimate",
    ("get", "/api/v1/invoices"): "listInvoices",
    ("post", "/api/v1/invoices"): "createInvoice",
    ("get", "/api/v1/invoices/{id}"): "getInvoice",
    ("patch", "/api/v1/invoices/{id}"): "updateInvoice",
    ("post", "/api/v1/invoices/{id}/send"): "sendInvoice",
    ("post", "/api/v1/invoices/{id}/void"): "voidInvoice",
    ("get", "/api/v1/payments"): "listPayments",
    ("post", "/api/v1/payments"): "createPayment",
    ("get", "/api/v1/payments/{id}"): "getPayment",
    ("get", "/api/v1/refunds"): "listRefunds",
    ("post", "/api/v1/refunds"): "createRefund",
    ("get", "/api/v1/refunds/{id}"): "getRefund",
}
METHODS = ("get", "put", "post", "patch", "delete", "head", "options", "trace")


def served_operations(client) -> dict:
    """(method, path) -> operation of the served document, the test suite's probe route left out."""
    spec = client.get("/api/v1/openapi.json").get_json()
    return {
        (method, path): operation
        for path, item in spec["paths"].items()
        if path != "/api/v1/_probe"
        for method, operation in item.items()
        if method in METHODS
    }


def test_every_operation_has_its_pinned_unique_operation_id(client):
    operations = served_operations(client)
    ids = [operation.get("operationId") for operation in operations.values()]
    assert None not in ids
    assert len(ids) == len(set(ids))
    assert {key: operation["operationId"] for key, operation in operations.items()} == OPERATION_IDS


def test_every_operation_has_one_described_tag(client):
    spec = client.get("/api/v1/openapi.json").get_json()
    described = {tag["name"] for tag in spec["tags"] if tag.get("description")}
    for key, operation in served_operations(client).items():
        assert len(operation["tags"]) == 1 and operation["tags"][0] in described, key


@pytest.mark.parametrize(
    ("method", "path", "present", "absent"),
    [
        ("get", "/api/v1/health", {"200", "400", "405", "500", "503"}, {"401", "404"}),
        ("get", "/api/v1/me", {"400", "401", "402", "429", "503"}, {"403", "404", "409"}),
        ("get", "/api/v1/usage", {"401", "429", "504"}, {"400", "402", "403", "503"}),
        ("get", "/api/v1/appointments", {"400", "401", "403"}, {"404", "409", "413", "415"}),
        ("get", "/api/v1/appointments/{id}", {"400", "404"}, {"409", "415"}),
        ("patch", "/api/v1/appointments/{id}", {"400", "404", "409", "413", "415", "422"}, set()),
        ("post", "/api/v1/messages/send", {"404", "409", "422", "429"}, set()),
        ("get", "/api/v1/webhooks/{id}", {"400", "404"}, {"409"}),
        ("post", "/api/v1/webhooks/{id}/rotate_secret", {"400", "404", "409"}, {"422"}),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_each_operation_lists_the_statuses_it_can_answer(client, method, path, present, absent):
    responses = served_operations(client)[(method, path)]["responses"]
    assert present <= set(responses) and not absent & set(responses)
    assert "405" in responses  # every documented path answers other methods with a JSON 405


def test_free_text_in_requests_documents_that_a_nul_is_refused(client):
    """The parser refuses a NUL in any text (PostgreSQL cannot store one): the document says so,
    or a schema-valid request would be refused (schemathesis's positive_data_acceptance)."""
    spec = client.get("/api/v1/openapi.json").get_json()
    schemas = spec["components"]["schemas"]
    listing = served_operations(client)[("get", "/api/v1/appointments")]
    email = next(p for p in listing["parameters"] if p["name"] == "customer_email")
    ticket = schemas["LinkTicket"]["properties"]["ticket_id"]["anyOf"][0]
    for schema in (schemas["AppointmentCreate"]["properties"]["notes"], email["schema"], ticket):
        assert re.search(schema["pattern"], "a b \u00e9") and not re.search(schema["pattern"], "a\x00b")
    usage = served_operations(client)[("get", "/api/v1/usage")]["parameters"]
    assert not any("pattern" in p["schema"] for p in usage)  # ignored when malformed, NUL included


def test_rotate_secret_requires_its_idempotency_key_in_the_document(client):
    operation = served_operations(client)[("post", "/api/v1/webhooks/{id}/rotate_secret")]
    header = next(p for p in operation["parameters"] if p["name"] == "Idempotency-Key")
    assert header["required"] is True
    assert (header["schema"]["minLength"], header["schema"]["maxLength"]) == (8, 255)


def test_responses_document_request_id_rate_limit_and_retry_after(client):
    spec = client.get("/api/v1/openapi.json").get_json()
    listing = served_operations(client)[("get", "/api/v1/appointments")]["responses"]
    assert set(listing["200"]["headers"]) == {
        "X-Request-Id",
        "RateLimit-Limit",
        "RateLimit-Remaining",
        "RateLimit-Reset",
    }
    assert "Retry-After" in listing["429"]["headers"] and "RateLimit-Limit" not in listing["401"]["headers"]
    assert spec["components"]["headers"]["Retry-AfterRequired"]["required"] is True
    health = served_operations(client)[("get", "/api/v1/health")]["responses"]
    assert set(health["200"]["headers"]) == {"X-Request-Id"}


def test_every_401_documents_www_authenticate(client):
    operations = served_operations(client).values()
    unauthorized = [op["responses"]["401"] for op in operations if "401" in op["responses"]]
    assert len(unauthorized) >= 37  # every operation behind a key
    assert all(response["headers"]["WWW-Authenticate"] for response in unauthorized)


@pytest.mark.parametrize(
    ("raw", "accepted"),
    [
        ("1", True),
        ("007", True),
        ("0000000001", True),
        ("2147483647", True),
        ("0214748364", True),
        ("0", False),
        ("0000000000", False),
        ("00000000001", False),
        ("2147483648", False),
        ("9999999999", False),
        ("-1", False),
        ("1.0", False),
        ("\uff11", False),
    ],
)
def test_the_documented_id_pattern_is_the_parser(client, acme, raw, accepted):
    item = client.get("/api/v1/openapi.json").get_json()["paths"]["/api/v1/appointments/{id}"]
    assert bool(re.search(item["parameters"][0]["schema"]["pattern"], raw)) is accepted
    status = client.get(f"/api/v1/appointments/{raw}", headers=acme).status_code
    assert status == (404 if accepted else 400)


# patterns whose every match is URL-unreserved ASCII (letters, digits, - . _ ~): one byte a character
UNRESERVED_PATTERNS = {
    ID_PATTERN,
    CURSOR_PATTERN,
    "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    "^whsub_[A-Za-z0-9_-]{8,34}$",
    "^whd_[A-Za-z0-9_-]{8,34}$",
}


def longest_in_url(schema: dict) -> int:
    """Bytes the longest value the document allows takes in a URL, percent-encoded."""
    if "enum" in schema:
        return max(len(quote(str(value), safe="")) for value in schema["enum"])
    if schema["type"] == "integer":
        return max(len(str(schema["maximum"])), len(str(schema.get("minimum", 0))))
    if schema["type"] == "boolean":
        return len("false")
    assert schema["type"] == "string" and "maxLength" in schema, schema  # every string is bounded
    # any other character is at most 4 UTF-8 bytes, each written %XX
    return schema["maxLength"] * (1 if schema.get("pattern") in UNRESERVED_PATTERNS else 12)


def longest_request_line(method: str, path: str, parameters: list) -> int:
    """`METHOD /path?query HTTP/1.1` with every parameter at its longest."""
    for parameter in (p for p in parameters if p["in"] == "path"):
        path = path.replace(f"{{{parameter['name']}}}", "x" * longest_in_url(parameter["schema"]))
    # a parameter the server ignores when malformed (the usage report's, by the spec) is a free string
    # in the document: no value of it is refused, so it bounds nothing here (issue 23, item 10)
    bounded = [
        p for p in parameters if p["in"] == "query" and not p["schema"].get("x-ignored-when-malformed")
    ]
    query = [len(p["name"]) + 1 + longest_in_url(p["schema"]) for p in bounded]
    return len(method) + 1 + len(path) + (sum(query) + len(query) if query else 0) + len(" HTTP/1.1")


def test_every_request_the_document_allows_fits_the_servers_request_line(client):
    spec = client.get("/api/v1/openapi.json").get_json()
    longest = {}
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method in METHODS and path != "/api/v1/_probe":
                parameters = item.get("parameters", []) + operation.get("parameters", [])
                longest[operation["operationId"]] = longest_request_line(method.upper(), path, parameters)
    assert max(longest.values()) <= gunicorn_conf.limit_request_line, max(longest.items(), key=lambda i: i[1])
    assert longest["listAppointments"] > 7000  # the filters at their longest: the bound is not vacuous


def test_the_send_subject_documents_that_control_characters_are_refused(client):
    """check_subject refuses line breaks and other controls in a subject: the document says so, or a
    schema-valid request would be refused (a vertical tab found it)."""
    send = served_operations(client)[("post", "/api/v1/messages/send")]
    body = send["requestBody"]["content"]["application/json"]["schema"]
    ref = body.get("$ref") or body["allOf"][0]["$ref"]
    schema = client.get("/api/v1/openapi.json").get_json()["components"]["schemas"][ref.rsplit("/", 1)[1]]
    pattern = schema["properties"]["subject"]["pattern"]
    assert re.search(pattern, "Re: your phone \u00e9")
    for bad in ("a\x0bb", "a\r\nBcc: x", "a\u2028b", "a\x85b", "a\x00b"):
        assert not re.search(pattern, bad), repr(bad)
