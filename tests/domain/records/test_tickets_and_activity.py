"""Ticket visibility and the `flask shop activity` command."""

import json

import pytest

from shop.domain.records.tickets import get_visible_ticket
from shop.models import Ticket
from shop.platform.errors import ApiError
from shop.platform.ids import parse_id
from tests.helpers import tenant_fixture


@pytest.fixture
def tickets(load):
    load(
        tenant_fixture(
            "acme",
            tickets=[
                {"id": "1001"},
                {"id": "1002", "billing_only": True},
                {"id": "1003", "hidden": True},
                {"id": "1004", "deleted": True},
            ],
        ),
        tenant_fixture("globex", tickets=[{"id": "2001"}]),
    )


def test_visible_tickets_exclude_hidden_deleted_and_other_tenants(tickets):
    assert get_visible_ticket("acme", "1001").id == 1001
    assert get_visible_ticket("acme", 1001).id == 1001
    assert get_visible_ticket("acme", "1002").id == 1002
    assert get_visible_ticket("acme", "1002", allow_billing_only=False) is None
    for hidden in ("1003", "1004", "2001", "abc", "", "99999999999", "-1"):
        assert get_visible_ticket("acme", hidden) is None


def test_activity_hides_a_ticket(tickets, runner):
    result = runner.invoke(
        args=["shop", "activity", "ticket.hidden", "--tenant", "acme", "--data", '{"id": "1001"}']
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"object": "ticket", "id": "1001", "hidden": True, "deleted": False}
    assert get_visible_ticket("acme", "1001") is None
    assert Ticket.get_by_id(1001).hidden is True


def test_activity_deletes_a_ticket(tickets, runner):
    result = runner.invoke(
        args=["shop", "activity", "ticket.deleted", "--tenant", "acme", "--data", '{"id": "1001"}']
    )
    assert result.exit_code == 0, result.output
    assert get_visible_ticket("acme", "1001") is None


@pytest.mark.parametrize(
    "args, message",
    [
        (["no.such.kind", "--tenant", "acme"], "Unknown activity"),
        (["ticket.hidden", "--tenant", "nobody", "--data", '{"id": "1001"}'], "No tenant"),
        (["ticket.hidden", "--tenant", "acme", "--data", "{oops"], "not valid JSON"),
        (["ticket.hidden", "--tenant", "acme", "--data", "[1]"], "JSON object"),
        (["ticket.hidden", "--tenant", "acme", "--data", '{"id": "2001"}'], "Error: No ticket 2001.\n"),
        (["ticket.hidden", "--tenant", "acme", "--data", '{"id": "\u00b2"}'], "digit string"),
        (["ticket.hidden", "--tenant", "acme", "--data", '{"id": "\u0661"}'], "digit string"),
    ],
    ids=[
        "unknown kind",
        "unknown tenant",
        "bad json",
        "not an object",
        "another tenant's ticket",
        "superscript digit id",
        "arabic-indic digit id",
    ],
)
def test_activity_refusals_change_nothing(tickets, runner, args, message):
    result = runner.invoke(args=["shop", "activity", *args])
    assert result.exit_code != 0 and message in result.output
    assert not Ticket.get_by_id(2001).hidden


@pytest.mark.parametrize("raw", ["0", "-1", "abc", "1.5", "2147483648", "99999999999", "１２", " 1", ""])
def test_parse_id_refuses_what_is_not_a_32_bit_positive_integer(raw):
    with pytest.raises(ApiError) as caught:
        parse_id(raw)
    assert (caught.value.status, caught.value.code, caught.value.param) == (400, "invalid_id", "id")


def test_parse_id_accepts_the_range():
    assert parse_id("1") == 1 and parse_id("2147483647") == 2147483647
