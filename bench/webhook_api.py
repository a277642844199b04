"""Cost of the webhook management endpoints and the destination screen, against baselines run in the same go.

In-process (Flask test client, one thread, a temporary SQLite file): what the webhook code adds on
top of the request pipeline, not what a server sustains. Bounded: --count requests per endpoint,
each phase stopped after --max-seconds.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "sk_test_bench_webhooks_0001"
URLS = [
    "https://hooks.example.com/repair-shop",
    "https://0x7f.1/x",
    "https://[::ffff:10.0.0.1]/x",
    "https://8.8.8.8:8443/hook?a=1",
    "https://bücher.example/x",
    "https://user:pw@example.com/",
]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=1000, help="requests per endpoint (default 1000)")
    parser.add_argument("--max-seconds", type=float, default=20, help="time cap per phase (default 20)")
    args = parser.parse_args()
    if not (1 <= args.count <= 20000 and 0 < args.max_seconds <= 120):
        parser.error("keep it bounded: count 1-20000, max-seconds up to 120")
    return args


def timed(fn, count: int, max_seconds: float) -> float:
    """Calls per second of fn over at most `count` calls and `max_seconds`."""
    started = time.perf_counter()
    done = 0
    while done < count and time.perf_counter() - started < max_seconds:
        fn()
        done += 1
    return done / (time.perf_counter() - started)


def setup_environment() -> str:
    folder = tempfile.mkdtemp(prefix="bench-webhooks-")
    os.environ.update(
        SHOP_INSTANCE_PATH=folder,
        SHOP_DATABASE=os.path.join(folder, "shop.sqlite3"),
        SHOP_SECRET_KEY="bench-secret-key",
        SHOP_RATE_LIMIT_CAPACITY="1000000000",
        SHOP_RATE_LIMIT_REFILL="1000000000",
    )
    # bench/platform.py would shadow the standard `platform` module: import from the root instead
    sys.path[0] = str(ROOT)
    return folder


def main() -> int:
    args = parse_args()
    folder = setup_environment()
    try:
        from shop import create_app
        from shop.domain.fixtures import load_fixture
        from shop.domain.webhooks.destinations import UrlRejected, screen_url

        app = create_app()
        scopes = ["webhooks.read", "webhooks.write", "tickets.read"]
        load_fixture(
            {
                "tenants": [
                    {
                        "id": "bench",
                        "name": "Bench",
                        "api_keys": [{"id": "key_bench", "token": TOKEN, "scopes": scopes}],
                    }
                ]
            }
        )
        client = app.test_client()
        headers = {"Authorization": f"Bearer {TOKEN}"}
        body = {"url": URLS[0], "events": ["ticket.created"]}

        def check(response, status):
            if response.status_code != status:
                raise SystemExit(f"unexpected {response.status_code}: {response.get_data(as_text=True)}")

        def screen_all():
            for url in URLS:
                try:
                    screen_url(url)
                except UrlRejected:
                    pass

        figures = {
            "GET /api/v1/me (baseline)": timed(
                lambda: check(client.get("/api/v1/me", headers=headers), 200), args.count, args.max_seconds
            ),
            "POST /api/v1/webhooks": timed(
                lambda: check(client.post("/api/v1/webhooks", json=body, headers=headers), 201),
                args.count,
                args.max_seconds,
            ),
            "GET /api/v1/webhooks (25 per page)": timed(
                lambda: check(client.get("/api/v1/webhooks", headers=headers), 200),
                args.count,
                args.max_seconds,
            ),
            "GET /api/v1/webhooks/event_types": timed(
                lambda: check(client.get("/api/v1/webhooks/event_types", headers=headers), 200),
                args.count,
                args.max_seconds,
            ),
        }
        baseline = figures["GET /api/v1/me (baseline)"]
        for name, rate in figures.items():
            print(f"{name:40s} {rate:9.0f} req/s   ratio to /me {rate / baseline:5.2f}")
        split_rate = timed(lambda: [urlsplit(url) for url in URLS], args.count * 10, args.max_seconds)
        screen_rate = timed(screen_all, args.count * 10, args.max_seconds)
        print(f"{'urlsplit of 6 URLs (baseline)':40s} {split_rate:9.0f} /s")
        ratio = screen_rate / split_rate
        print(f"{'screen_url of the same 6 URLs':40s} {screen_rate:9.0f} /s   ratio {ratio:5.2f}")
        return 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
