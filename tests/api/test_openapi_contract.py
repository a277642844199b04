"""Schemathesis over every operation of the served OpenAPI document, against the in-process app."""

import pytest
import schemathesis
from schemathesis import checks
from hypothesis import HealthCheck, settings

from shop.models import WebhookDelivery
from tests.conftest import auth_headers, tenant_fixture

KEY = "sk_test_acme_token_0001"
# the ids the document gives as path examples, so the examples phase reaches real records
SUBSCRIPTION_ID = "whsub_3f9a2c1b7e8d4f6011223344"
DELIVERY_ID = "whd_8c1e2f3a4b5d6e7f00112233"


def contract_tenant() -> dict:
    """A tenant with a record behind every documented path example."""
    return tenant_fixture(
        "acme",
        users=[{"id": 7, "email": "sam@acme.test", "name": "Sam"}],
        customers=[{"id": 1, "display_name": "Ann Lee", "email": "ann@example.com", "phone": "+15555550100",
                    "sms_consent": True}],
        tickets=[{"id": "1001", "customer_id": 1, "subject": "Cracked screen", "status": "In Progress"}],
        conversations=[{"id": 10, "customer_id": 1, "messages": [
            {"id": 100, "channel": "sms", "direction": "inbound", "body": "Is it ready?",
             "sender": "+15555550100"}]}],
        notifications=[{"id": 50, "scope": "global", "type": "new_ticket", "message": "New ticket 1001",
                        "ticket_id": "1001"}],
        appointments=[{"id": 200, "customer_name": "Ann Lee", "customer_phone": "+15555550100",
                       "scheduled_date": "2026-12-01", "scheduled_time": "10:00", "ticket_id": "1001"}],
        webhook_subscriptions=[{"id": SUBSCRIPTION_ID, "url": "https://hooks.example.com/repair-shop",
                                "events": ["*"]}],
        booking={"enabled": True, "hours": {day: [["09:00", "17:00"]] for day in
                                            ("mon", "tue", "wed", "thu", "fri", "sat", "sun")}},
    )


@pytest.fixture
def contract_schema(app, client, load, monkeypatch):
    """The served document, loaded over WSGI, with limits lifted and the example records in place."""
    monkeypatch.setitem(app.config, "RATE_LIMIT_CAPACITY", 10**9)
    monkeypatch.setitem(app.config, "AUTH_FAILURES_PER_MINUTE", 10**9)
    load(contract_tenant())
    ping = client.post(f"/api/v1/webhooks/{SUBSCRIPTION_ID}/ping", headers=auth_headers(KEY))
    assert ping.status_code == 202, ping.get_data(as_text=True)
    WebhookDelivery.update(id=DELIVERY_ID, status="delivered").where(
        WebhookDelivery.id == ping.get_json()["id"]).execute()
    # the key goes in as the document's bearerAuth scheme, so cases without it stay without it
    config = schemathesis.Config.from_dict({"auth": {"openapi": {"bearerAuth": {"bearer": KEY}}}})
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
    response = case.call()
    case.validate_response(response, excluded_checks=excused_checks(case, response))


# what a document cannot express, each with its reason: a refusal with this (code, param) lifts
# positive_data_acceptance for that one response; param None matches any
EXCUSED_REFUSALS = {
    ("invalid_cursor", "cursor"): "a cursor is valid only as issued: signed, bound to endpoint and query",
    ("invalid_service_id", "service_id"): "the service must exist in the shop's booking settings",
    ("invalid_field", "url"): "a webhook host must be public: no private, loopback or metadata address",
    # rules joining two fields or parameters: OpenAPI 3.0 cannot say them
    ("missing_user_email", "user_email"): "user_email is required only when scope=user",
    ("invalid_status", "status"): "a terminal status must be the only field of a PATCH",
    ("conflicting_aliases", "content"): "content and body must agree when both are sent",
    ("missing_field", None): "send: content is required for SMS, body for email",
    ("invalid_field", "subject"): "send: subject applies to email only",
    ("invalid_field", "to"): "send: an email `to` must be the ticket customer's address",
    # the state of the record the earlier cases left, not the shape of the request
    ("cancel_failed", None): "the appointment is already cancelled",
    ("status_transition_failed", None): "the appointment's status does not allow the move",
    ("status_reset_required", None): "the appointment's status does not allow the move",
    ("update_failed", None): "the appointment's status does not allow the change",
    ("slot_unavailable", None): "the slot is taken or outside business hours",
    ("subscription_disabled", None): "an earlier case disabled the subscription",
    ("delivery_in_flight", None): "an earlier case queued the delivery again",
    ("rotation_in_progress", None): "an earlier case rotated the secret",
    ("send_failed", None): "the recipient is suppressed or lacks consent",
    ("idempotency_key_reuse", None): "an earlier case sent the same generated key with another request",
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
