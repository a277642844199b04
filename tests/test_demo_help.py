"""What `flask shop demo` prints: its create-appointment curl books a free slot on every run."""

import json
import shlex
from datetime import UTC, datetime, timedelta
from importlib import resources
from zoneinfo import ZoneInfo

import pytest

from shop import clock
from shop.cli import demo_help
from shop.domain.fixtures import load_fixture

DAY = 86400


def demo_shop() -> None:
    load_fixture(json.loads(resources.files("shop").joinpath("demo/demo_shop.json").read_text()))


def printed_curl(app, path: str) -> tuple[dict, dict]:
    """The body and headers of the printed curl that posts to `path`, as the demo prints it now."""
    with app.app_context():
        text = demo_help("127.0.0.1", 5000)
    line = next(line for line in text.splitlines() if line.endswith(f"/api/v1{path}"))
    args = shlex.split(line)
    headers = dict(args[i + 1].split(": ", 1) for i, arg in enumerate(args) if arg == "-H")
    return json.loads(args[args.index("-d") + 1]), headers


@pytest.mark.parametrize("days_later", [0, 8, 45, 400], ids=lambda d: f"{d} days from now")
def test_the_printed_booking_books_a_free_future_slot(app, client, days_later):
    clock.advance(days_later * DAY)
    demo_shop()
    body, headers = printed_curl(app, "/appointments")
    shop_zone = ZoneInfo("America/New_York")
    starts = datetime.fromisoformat(f"{body['scheduled_date']}T{body['scheduled_time']}").replace(
        tzinfo=shop_zone
    )
    now = clock.now().replace(tzinfo=UTC)
    assert now + timedelta(minutes=60) <= starts  # the demo shop's min_notice_minutes
    assert starts.date() <= now.astimezone(shop_zone).date() + timedelta(days=60)  # its max_days_ahead
    slots = client.get(
        f"/api/v1/appointments/slots?date={body['scheduled_date']}", headers=headers
    ).get_json()
    assert {"time": body["scheduled_time"], "available": True} in [
        {"time": s["time"], "available": s["available"]} for s in slots["data"]
    ]
    response = client.post("/api/v1/appointments", json=body, headers=headers)
    assert response.status_code == 201, response.get_data(as_text=True)


def test_each_start_up_finds_a_slot_that_is_still_free(app, client):
    demo_shop()
    for _ in range(5):  # capacity is 2 a slot: a fixed slot would be full by the third run
        body, headers = printed_curl(app, "/appointments")
        response = client.post("/api/v1/appointments", json=body, headers=headers)
        assert response.status_code == 201, response.get_data(as_text=True)


def test_the_other_printed_writes_work_too(app, client):
    demo_shop()
    body, headers = printed_curl(app, "/messages/send")
    assert client.post("/api/v1/messages/send", json=body, headers=headers).status_code == 202
