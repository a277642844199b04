"""A decision on an estimate the store has not seen: recorded on its visible ticket, else refused.

Starts from DESIGN.md's own fixture (tests/data/design_fixture.json, which has no estimates) and
runs DESIGN.md's own example through the real CLI.
"""

import json

import pytest

from shop import clock
from shop.domain.fixtures import load_fixture
from shop.models import Estimate, Event
from tests.helpers import DESIGN_FIXTURE, tenant_fixture
from tests.helpers.records import activity, events, snapshot

DESIGN_EXAMPLE = {
    "id": "5001",
    "ticket_id": "1001",
    "declined_by": "customer",
    "decline_reason": "Too expensive",
}


@pytest.fixture
def design_shop():
    """DESIGN.md's example fixture, plus a hidden and a deleted ticket of acme and a second tenant."""
    document = json.loads(DESIGN_FIXTURE.read_text())
    document["tenants"][0]["tickets"] += [
        {"id": "1002", "customer_id": 1, "hidden": True},
        {"id": "1003", "customer_id": 1, "deleted": True},
    ]
    document["tenants"].append(
        tenant_fixture(
            "globex",
            customers=[{"id": 21}],
            tickets=[{"id": "2001", "customer_id": 21}],
            estimates=[{"id": 5901, "ticket_id": "2001", "status": "sent"}],
        )
    )
    document["tenants"][0]["estimates"] = [{"id": 5002, "ticket_id": "1001", "status": "sent"}]
    load_fixture(document)


def iso(value) -> str:
    return clock.isoformat(value)


def test_the_design_example_records_the_estimate_and_emits_the_decline(design_shop, runner):
    record = activity(runner, "estimate.declined", DESIGN_EXAMPLE)
    estimate = Estimate.get_by_id(5001)
    assert (estimate.tenant_id, estimate.ticket_id, estimate.customer_id, estimate.status) == (
        "acme",
        1001,
        1,
        "declined",
    )
    assert (estimate.declined_by, estimate.decline_reason, estimate.number) == (
        "customer",
        "Too expensive",
        "EST-5001",
    )
    assert record["id"] == "5001" and record["status"] == "declined"
    assert events() == [
        (
            "estimate.declined",
            {
                "object": "estimate",
                "id": "5001",
                "ticket_id": "1001",
                "status": "declined",
                "declined_at": iso(estimate.declined_at),
                "declined_by": "customer",
                "decline_reason": "Too expensive",
                "source_kind": "observed",
            },
        )
    ]


def test_an_approval_of_an_unseen_estimate_is_recorded_too(design_shop, runner):
    record = activity(runner, "estimate.approved", {"id": 5005, "ticket_id": 1001, "approved_by": "staff"})
    estimate = Estimate.get_by_id(5005)
    assert (estimate.ticket_id, estimate.status, estimate.approved_by) == (1001, "approved", "staff")
    assert record["status"] == "approved"
    assert events() == [
        (
            "estimate.approved",
            {
                "object": "estimate",
                "id": "5005",
                "ticket_id": "1001",
                "status": "approved",
                "approved_at": iso(estimate.approved_at),
                "approved_by": "staff",
                "source_kind": "observed",
            },
        )
    ]


def test_a_second_decision_on_the_recorded_estimate_is_refused(design_shop, runner):
    activity(runner, "estimate.declined", DESIGN_EXAMPLE)
    before = snapshot()
    result = activity(runner, "estimate.approved", {"id": "5001", "ticket_id": "1001"})
    assert result.exit_code != 0 and "already declined" in result.output
    assert snapshot() == before


REFUSED = [
    ({"id": "5002", "ticket_id": "1002"}, "No estimate", "a known estimate named with another ticket"),
    ({"id": "5901", "ticket_id": "1001"}, "No estimate 5901", "another tenant's estimate id"),
    ({"id": "5007", "ticket_id": "2001"}, "No ticket 2001", "another tenant's ticket"),
    ({"id": "5007", "ticket_id": "1002"}, "No ticket 1002", "a hidden ticket"),
    ({"id": "5007", "ticket_id": "1003"}, "No ticket 1003", "a deleted ticket"),
    ({"id": "5007", "ticket_id": "1999"}, "No ticket 1999", "an unknown ticket"),
    ({"id": "5007"}, "No estimate 5007", "an unseen estimate without its ticket"),
]


@pytest.mark.parametrize("kind", ["estimate.declined", "estimate.approved"])
@pytest.mark.parametrize("data, message, _", REFUSED, ids=[case[2] for case in REFUSED])
def test_a_decision_that_cannot_be_placed_is_refused_with_nothing_changed(
    design_shop, runner, kind, data, message, _
):
    before = snapshot()
    result = activity(runner, kind, data)
    assert result.exit_code == 1 and message in result.output
    assert snapshot() == before and Event.select().count() == 0
