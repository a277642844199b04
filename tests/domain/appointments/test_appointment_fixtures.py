"""The `booking` and `appointments` fixture sections: ids kept, defaults filled, bad entries named."""

import pytest

from shop.domain.fixtures import FixtureError
from shop.models import Appointment, Tenant
from tests.helpers import tenant_fixture
from tests.helpers.appointments import BOOKING

APPOINTMENT = {
    "id": 200,
    "customer_name": "Ann Lee",
    "customer_phone": "+15555550100",
    "customer_email": "ann@example.com",
    "service_description": "Screen",
    "scheduled_date": "2026-12-01",
    "scheduled_time": "10:00",
    "duration_minutes": 60,
    "status": "scheduled",
    "tech_id": "alex",
    "ticket_id": "1001",
    "location_id": 1,
    "notes": None,
    "source": "staff",
}


def test_the_design_example_loads_with_its_ids(load):
    load(tenant_fixture("acme", booking=BOOKING, appointments=[APPOINTMENT]))
    stored = Appointment.get_by_id(200)
    assert (stored.tenant_id, stored.tech_id, stored.duration_minutes, stored.source) == (
        "acme",
        "alex",
        60,
        "staff",
    )
    assert stored.updated_at is None and stored.created_at is not None
    assert Tenant.get_by_id("acme").booking["services"][0]["minutes"] == 90


def test_booking_defaults_are_filled(load):
    load(tenant_fixture("acme", booking={"hours": {"mon": [["09:00", "17:00"]]}}))
    booking = Tenant.get_by_id("acme").booking
    assert (booking["enabled"], booking["slot_minutes"], booking["capacity"]) == (True, 30, 1)
    assert booking["closed_dates"] == [] and booking["techs"] == []


@pytest.mark.parametrize(
    "fields, path",
    [
        ({"booking": {**BOOKING, "colour": "red"}}, "tenants[0].booking.colour"),
        ({"booking": {**BOOKING, "hours": {"monday": []}}}, "tenants[0].booking.hours"),
        ({"booking": {**BOOKING, "hours": {"mon": [["17:00", "09:00"]]}}}, "tenants[0].booking.hours"),
        (
            {"booking": {**BOOKING, "hours": {"mon": [["09:00", "13:00"], ["12:00", "17:00"]]}}},
            "tenants[0].booking.hours",
        ),
        ({"booking": {**BOOKING, "capacity": 0}}, "tenants[0].booking.capacity"),
        ({"booking": {**BOOKING, "closed_dates": ["2026-02-30"]}}, "tenants[0].booking.closed_dates[0]"),
        ({"booking": {**BOOKING, "services": [{"id": "x"}]}}, "tenants[0].booking.services[0].minutes"),
        ({"appointments": [{**APPOINTMENT, "status": "done"}]}, "tenants[0].appointments[0].status"),
        (
            {"appointments": [{**APPOINTMENT, "scheduled_time": "25:00"}]},
            "tenants[0].appointments[0].scheduled_time",
        ),
        ({"appointments": [{**APPOINTMENT, "colour": "red"}]}, "tenants[0].appointments[0].colour"),
        ({"appointments": [APPOINTMENT, APPOINTMENT]}, "tenants[0].appointments[1]"),
    ],
    ids=[
        "unknown booking key",
        "unknown weekday",
        "interval ending before it starts",
        "overlapping intervals",
        "zero capacity",
        "impossible closed date",
        "service without minutes",
        "unknown status",
        "impossible time",
        "unknown appointment key",
        "duplicate appointment id",
    ],
)
def test_bad_entries_are_named_and_nothing_is_loaded(load, fields, path):
    with pytest.raises(FixtureError) as caught:
        load(tenant_fixture("acme", **fields))
    assert caught.value.path == path
    assert Tenant.select().count() == 0 and Appointment.select().count() == 0
