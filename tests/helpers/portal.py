"""The customer pages through Flask's test client: read a form's hidden fields, hold a time, book it."""

import re

from tests.helpers.console import page_text

HIDDEN = re.compile(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)"')


def hidden_fields(html: str, form_id: str | None = None) -> dict:
    """The hidden inputs of a form (the first one, or the one with this id)."""
    if form_id:
        html = html.split(f'id="{form_id}"', 1)[1].split("</form>", 1)[0]
    return dict(HIDDEN.findall(html))


def hold(client, tenant: str, day: str, time: str, **fields):
    """Post the booking page's time form; returns the response (303 to the details form when held)."""
    page = client.get(f"/book/{tenant}?date={day}")
    data = {**hidden_fields(page_text(page), "hold-form"), "date": day, "time": time, **fields}
    return client.post(f"/book/{tenant}/hold", data={k: v for k, v in data.items() if v is not None})


def details_form(client, location: str) -> dict:
    """The hidden fields (CSRF token, signed start) of the details form at `location`."""
    return hidden_fields(page_text(client.get(location)), "details-form")
