"""The console through Flask's test client: sign in, read a form's CSRF token, post a form."""

import re

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_token(html: str) -> str:
    """The CSRF token of the first form on a page."""
    found = CSRF.search(html)
    assert found, "no form with a CSRF token on this page"
    return found.group(1)


def sign_in(client, token: str) -> str:
    """Sign the test client in with an API key; returns the session's CSRF token."""
    form = client.get("/console/sign-in")
    response = client.post(
        "/console/sign-in", data={"csrf_token": csrf_token(form.get_data(as_text=True)), "api_key": token}
    )
    assert response.status_code == 303, response.get_data(as_text=True)
    return csrf_token(client.get("/console/").get_data(as_text=True))


def page_text(response) -> str:
    return response.get_data(as_text=True)


def fill_ids(value, ids: dict):
    """A bad-input case's path or form value with {tenant.name} placeholders (`{acme.sub}`) filled in."""
    if isinstance(value, list):
        return [fill_ids(item, ids) for item in value]
    if isinstance(value, str):
        for tenant in ("acme", "globex"):
            for name, real in ids[tenant].items():
                value = value.replace(f"{{{tenant}.{name}}}", real)
    return value


def alert_text(response) -> str:
    """The message a refusal page shows (what a failing assertion prints)."""
    html = page_text(response)
    start = html.find('role="alert"')
    return html[start : start + 300] if start >= 0 else html[:300]


def assert_page(response, status: int) -> None:
    """A console answer with this status as an HTML page, never a traceback (the refusal's message
    is what a failing assertion prints)."""
    assert response.status_code == status, alert_text(response)
    assert response.mimetype == "text/html" and "Traceback" not in page_text(response)


# teammates of the shops the teammate tests load (issue 27): email, password, role
OWNER = ("olga@acme.test", "owner-password-1", "owner")
STAFF = ("sid@acme.test", "staff-password-1", "staff")


def teammates(*people) -> list[dict]:
    """Fixture `users` for (email, password, role) triples."""
    return [{"email": email, "password": password, "role": role} for email, password, role in people]


def sign_in_as(client, email: str, password: str, **extra):
    """Post the teammate sign-in form; returns the response (303 to the Overview when signed in)."""
    form = client.get("/console/sign-in")
    data = {"csrf_token": csrf_token(form.get_data(as_text=True)), "email": email, "password": password}
    return client.post("/console/sign-in", data={**data, **extra})
