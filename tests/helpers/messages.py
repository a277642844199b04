"""The messaging shop the message tests share, and a send through the API."""

from tests.helpers import tenant_fixture

ANN_PHONE = "+15555550100"


def shop_fixture(**extra):
    return tenant_fixture(
        "acme",
        customers=[
            {
                "id": 1,
                "display_name": "Ann Lee",
                "email": "Ann@Example.com",
                "phone": ANN_PHONE,
                "sms_consent": True,
            },
            {"id": 2, "display_name": "Bo Chen", "email": "bo@example.com", "phone": "+15555550101"},
            {"id": 3, "display_name": "Cy Bounce", "email": "bounced@example.com", "sms_consent": True},
            {"id": 4, "display_name": "Di NoMail", "phone": "+15555550104", "sms_consent": True},
        ],
        tickets=[
            {"id": "1001", "customer_id": 1, "subject": "Cracked screen"},
            {"id": "1002", "customer_id": 2},
            {"id": "1003", "customer_id": 1, "hidden": True},
            {"id": "1004"},
            {"id": "1005", "customer_id": 3},
            {"id": "1006", "customer_id": 4},
            {"id": "1007", "customer_id": 1, "deleted": True},
        ],
        suppressions=[
            {"channel": "email", "address": "BOUNCED@example.com"},
            {"channel": "sms", "address": "+1 555 555 0199"},
        ],
        **extra,
    )


def send(client, headers, **body):
    return client.post("/api/v1/messages/send", json=body, headers=headers)
