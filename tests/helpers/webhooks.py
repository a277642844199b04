"""Helpers shared by the webhook API tests."""

URL = "https://hooks.example.com/repair-shop"


def create(client, headers, **body):
    """POST /api/v1/webhooks with sensible defaults; returns the response."""
    body = {"url": URL, "events": ["ticket.created"], **body}
    return client.post("/api/v1/webhooks", json=body, headers=headers)


def rotate(client, headers, sub_id, key="rotate-key-0001"):
    """POST .../rotate_secret with an Idempotency-Key."""
    return client.post(
        f"/api/v1/webhooks/{sub_id}/rotate_secret", headers={**headers, "Idempotency-Key": key}
    )
