"""Run by test_concurrency in separate processes: fire requests at one key, print the statuses.

usage: python -m tests.platform.hammer TOKEN COUNT [IDEMPOTENCY_KEY]
"""

import json
import sys
from collections import Counter

from shop import create_app
from tests.helpers.probe import register_probe


def main() -> None:
    token, count = sys.argv[1], int(sys.argv[2])
    idempotency_key = sys.argv[3] if len(sys.argv) > 3 else None
    app = create_app()
    register_probe(app)
    client = app.test_client()
    headers = {"Authorization": f"Bearer {token}"}
    statuses = Counter()
    for _ in range(count):
        if idempotency_key:
            response = client.post(
                "/api/v1/_probe",
                json={"display_name": "Race", "delay_ms": 50},
                headers={**headers, "Idempotency-Key": idempotency_key},
            )
            label = (
                f"{response.status_code} replay"
                if response.headers.get("Idempotent-Replayed")
                else str(response.status_code)
            )
        else:
            label = str(client.get("/api/v1/me", headers=headers).status_code)
        statuses[label] += 1
    print(json.dumps(statuses))


if __name__ == "__main__":
    main()
