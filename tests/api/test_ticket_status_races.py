"""Two status changes of one ticket at once: each event is a real transition from the status the
other left, or none; never two transitions from the same status (a lost one between them)."""

import pytest

from shop.domain import actor
from shop.domain.records.tickets import update_ticket
from shop.models import Ticket
from tests.helpers import tenant_fixture
from tests.helpers.records_api import events
from tests.platform.test_rule_locks import OtherWriter, in_thread, waiting_for_locks

pytestmark = pytest.mark.postgres_only  # SQLite's write transaction already orders them; no row locks


def change(status: str):
    return lambda: update_ticket("acme", {"id": 1001, "status": status}, actor.api_key("key_acme"))


def transitions() -> list[tuple[str, str]]:
    return [(data["previous_status"], data["status"]) for _, data in events("ticket.status_changed")]


@pytest.mark.parametrize(
    "statuses", [("Ready", "Resolved"), ("Ready", "Ready")], ids=["two different", "the same twice"]
)
def test_racing_status_changes_each_see_the_status_the_other_left(app, load, statuses):
    # another connection holds the ticket's row while both changes arrive, so both have read
    # (without a lock: the same "New") before either writes; then it lets go
    load(tenant_fixture("acme", tickets=[{"id": "1001", "status": "New"}]))
    database = app.config["DATABASE"]
    other = OtherWriter(database)
    other.execute("UPDATE ticket SET updated_at = updated_at WHERE id = 1001")
    first, first_outcome = in_thread(change(statuses[0]))
    waiting_for_locks(database, 1, or_finished=first)
    second, second_outcome = in_thread(change(statuses[1]))
    waiting_for_locks(database, 2, or_finished=second)
    other.commit_later(0)
    first.join(timeout=30)
    second.join(timeout=30)
    assert "error" not in first_outcome and "error" not in second_outcome, (first_outcome, second_outcome)
    chain = transitions()
    assert chain[0][0] == "New"
    assert all(before == after for (_, after), (before, _) in zip(chain, chain[1:], strict=False)), chain
    assert chain[-1][1] == Ticket.get_by_id(1001).status
    expected = 2 if statuses[0] != statuses[1] else 1
    assert len(chain) == expected, chain
