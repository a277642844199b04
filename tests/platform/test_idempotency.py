"""Idempotency-Key on POST: one run, replays for 24 h, conflicts, key rules, pruning."""

import threading
from datetime import timedelta

import pytest

from shop import clock
from shop.domain.retention import prune_idempotency
from shop.models import Customer, IdempotencyRecord
from shop.platform import idempotency
from tests.helpers import assert_error


def post(client, headers, body, key=None, path="/api/v1/_probe"):
    extra = {"Idempotency-Key": key} if key is not None else {}
    return client.post(path, json=body, headers={**headers, **extra})


def test_without_a_key_each_post_runs(client, acme):
    post(client, acme, {"display_name": "Ann"})
    post(client, acme, {"display_name": "Ann"})
    assert Customer.select().count() == 2


def test_a_retry_replays_the_saved_response(client, acme):
    first = post(client, acme, {"display_name": "Ann"}, key="create-ann-1")
    second = post(client, acme, {"display_name": "Ann"}, key="create-ann-1")
    assert first.status_code == second.status_code == 201
    assert second.get_json() == first.get_json()
    assert second.headers["X-Request-Id"] == first.headers["X-Request-Id"]
    assert second.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert Customer.select().count() == 1


def test_replay_lasts_24_hours_then_the_key_is_fresh(client, acme):
    post(client, acme, {"display_name": "Ann"}, key="create-ann-1")
    clock.advance(24 * 3600 - 60)
    assert (
        post(client, acme, {"display_name": "Ann"}, key="create-ann-1").headers.get("Idempotent-Replayed")
        == "true"
    )
    clock.advance(120)
    response = post(client, acme, {"display_name": "Ann"}, key="create-ann-1")
    assert response.status_code == 201 and "Idempotent-Replayed" not in response.headers
    assert Customer.select().count() == 2


def test_a_different_body_is_409_key_reuse(client, acme):
    post(client, acme, {"display_name": "Ann"}, key="k-1")
    response = post(client, acme, {"display_name": "Bob"}, key="k-1")
    error = assert_error(response, 409, "idempotency_key_reuse", param="Idempotency-Key")
    assert error["type"] == "conflict_error"
    assert Customer.select().count() == 1


def test_a_different_url_is_409_key_reuse(client, acme):
    post(client, acme, {"display_name": "Ann"}, key="k-1")
    response = post(client, acme, {"display_name": "Ann"}, key="k-1", path="/api/v1/_probe?x=1")
    assert_error(response, 409, "idempotency_key_reuse", param="Idempotency-Key")


def test_keys_belong_to_the_calling_api_key(client, acme, load):
    from tests.helpers import auth_headers, tenant_fixture

    load(tenant_fixture("globex"))
    post(client, acme, {"display_name": "Ann"}, key="shared-key")
    response = post(
        client, auth_headers("sk_test_globex_token_0001"), {"display_name": "Ann"}, key="shared-key"
    )
    assert response.status_code == 201 and "Idempotent-Replayed" not in response.headers
    assert Customer.select().count() == 2


def test_client_errors_are_saved_and_replayed_without_changes(client, acme):
    first = post(client, acme, {"display_name": "Ann", "fail": "conflict"}, key="k-err")
    second = post(client, acme, {"display_name": "Ann", "fail": "conflict"}, key="k-err")
    assert first.status_code == second.status_code == 409
    assert second.get_json() == first.get_json()
    # the replayed error names the request that ran, and is answered under that same id
    assert second.get_json()["error"]["request_id"] == second.headers["X-Request-Id"]
    assert Customer.select().count() == 0


def test_server_errors_release_the_key(client, acme):
    first = post(client, acme, {"display_name": "Ann", "fail": "crash"}, key="k-crash")
    assert first.status_code == 500
    assert IdempotencyRecord.select().count() == 0
    assert Customer.select().count() == 0


@pytest.mark.parametrize(
    "key",
    ["", "a" * 256, "has space", "tab\tkey", "ünïcode"],
    ids=["empty", "256 chars", "space", "tab", "non-ascii"],
)
def test_bad_keys_are_400_invalid_idempotency_key(client, acme, key):
    response = client.post(
        "/api/v1/_probe",
        json={"display_name": "Ann"},
        headers={**acme, "Idempotency-Key": key.encode("utf-8").decode("latin-1")},
    )
    assert_error(response, 400, "invalid_idempotency_key", param="Idempotency-Key")
    assert Customer.select().count() == 0


def test_the_longest_key_is_accepted(client, acme):
    assert post(client, acme, {"display_name": "Ann"}, key="k" * 255).status_code == 201


def test_two_concurrent_requests_exactly_one_runs(app, acme):
    barrier = threading.Barrier(2)
    results = []

    def worker():
        with app.test_client() as client:
            barrier.wait()
            results.append(post(client, acme, {"display_name": "Ann", "delay_ms": 400}, key="race-1"))

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    ran = [r for r in results if r.status_code == 201 and "Idempotent-Replayed" not in r.headers]
    others = [r for r in results if r not in ran]
    assert len(ran) == 1 and len(others) == 1
    # the other one either saw the claim in progress or, if it was held back until the first
    # committed, got the replay: never a second run
    other = others[0]
    if other.status_code == 409:
        assert other.get_json()["error"]["code"] == "idempotency_in_progress"
    else:
        assert other.headers["Idempotent-Replayed"] == "true"
        assert other.get_json() == ran[0].get_json()
    assert Customer.select().count() == 1


def test_an_abandoned_claim_is_taken_over_after_its_lock(client, acme):
    IdempotencyRecord.create(
        api_key_id="key_acme",
        key="k-stale",
        fingerprint="0" * 64,
        locked_until=clock.now() + timedelta(seconds=60),
        created_at=clock.now(),
    )
    # a claim left by a process that died: same fingerprint as the retry
    IdempotencyRecord.update(fingerprint=_fingerprint_of(client, acme)).execute()
    assert_error(
        post(client, acme, {"display_name": "Ann"}, key="k-stale"),
        409,
        "idempotency_in_progress",
        param="Idempotency-Key",
    )
    clock.advance(61)
    assert post(client, acme, {"display_name": "Ann"}, key="k-stale").status_code == 201
    assert Customer.select().count() == 1


def _fingerprint_of(client, headers):
    """The fingerprint the probe request below would have (same method, path and body)."""
    from flask import json

    app = client.application
    body = json.dumps({"display_name": "Ann"}).encode()
    with app.test_request_context(
        "/api/v1/_probe", method="POST", data=body, content_type="application/json"
    ):
        return idempotency.fingerprint()


def test_prune_removes_only_expired_records(client, acme):
    post(client, acme, {"display_name": "Ann"}, key="old")
    clock.advance(25 * 3600)
    post(client, acme, {"display_name": "Bob"}, key="new")
    assert sum(prune_idempotency(timedelta(hours=24), 1000)) == 1
    assert [r.key for r in IdempotencyRecord.select()] == ["new"]


def test_get_requests_ignore_the_header(client, acme):
    response = client.get("/api/v1/me", headers={**acme, "Idempotency-Key": "bad key with spaces"})
    assert response.status_code == 200
