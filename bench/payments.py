"""A payment POST against GET /api/v1/me in the same run (goal >= 0.5): the records API's heaviest write.

A payment is the money routes' heaviest write: the invoice's row locked, the amount due summed, the
payment and its payment.recorded event written in one transaction, the answer dumped with its sums.
GET /api/v1/me is the cheapest authenticated route: the ratio me_ms / payment_ms says what share of
that rate a payment keeps. (The records API's other benchmark, bench/records.py, is the ticket list
at 100,000 tickets against 1,000.)

Runs in-process through the real app (Flask test client: authentication, rate limit, parsing, the
domain code and the JSON dump, on a temporary SQLite file in WAL mode); no network. Each figure is
the median of a bounded number of calls, the two routes called in turn so load changes hit both.

    python bench/payments.py           # exits 0 when the goal is met, 1 otherwise
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_result import report_result  # before the line below takes bench/ off the path

ROOT = Path(__file__).resolve().parent.parent
# the script's own folder holds bench/platform.py, which would shadow the standard `platform` module
sys.path[0] = str(ROOT)
FOLDER = tempfile.mkdtemp(prefix="shop-bench-records-")
os.environ.update(
    SHOP_INSTANCE_PATH=FOLDER,
    SHOP_DATABASE=os.path.join(FOLDER, "shop.sqlite3"),
    SHOP_SECRET_KEY="bench-secret",
    SHOP_RATE_LIMIT_CAPACITY="1000000000",
    SHOP_RATE_LIMIT_REFILL="1000000000",
    SHOP_USAGE_READ_SAMPLE_RATE="0",
)

from shop import create_app  # noqa: E402
from shop.domain.fixtures import load_fixture  # noqa: E402

PAYMENT_GOAL = 0.5
TOKEN = "sk_test_payer_bench_0001"
SCOPES = ["invoices.read", "invoices.write", "payments.read", "payments.write"]


def paired_median_ms(fns, calls: int) -> list[float]:
    """Median wall time of each function, calling them in turn so that load changes hit all alike."""
    samples = [[] for _ in fns]
    for _ in range(5):
        for fn in fns:
            fn()
    for _ in range(calls):
        for fn, bucket in zip(fns, samples, strict=True):
            started = time.perf_counter()
            fn()
            bucket.append((time.perf_counter() - started) * 1000)
    return [statistics.median(bucket) for bucket in samples]


def payer_tenant(invoices: int) -> dict:
    """A shop with a customer, a ticket and `invoices` sent invoices large enough for every payment."""
    return {
        "id": "payer",
        "name": "Payer",
        "api_keys": [{"id": "key_payer", "token": TOKEN, "mode": "test", "scopes": SCOPES}],
        "customers": [{"id": 1, "display_name": "Ann"}],
        "tickets": [{"id": "1001", "customer_id": 1}],
        "invoices": [
            {"id": 3001 + n, "ticket_id": 1001, "status": "sent", "total": 2_000_000_000}
            for n in range(invoices)
        ],
    }


def bench_payments(client, calls: int) -> dict:
    """POST /api/v1/payments (1 cent against a large invoice, each one recorded) vs GET /api/v1/me."""
    invoices = 10  # payments spread over a few invoices, so no one invoice's sums grow with the run alone
    load_fixture({"tenants": [payer_tenant(invoices)]})
    headers = {"Authorization": f"Bearer {TOKEN}"}
    made = [0]

    def me():
        response = client.get("/api/v1/me", headers=headers)
        assert response.status_code == 200, response.get_data(as_text=True)

    def pay():
        body = {"invoice_id": str(3001 + made[0] % invoices), "amount": 1, "method": "card"}
        response = client.post("/api/v1/payments", json=body, headers=headers)
        assert response.status_code == 201, response.get_data(as_text=True)
        made[0] += 1

    figures = {}
    figures["me_ms"], figures["payment_ms"] = paired_median_ms([me, pay], calls)
    figures["payments_recorded"] = made[0]
    figures["payment_ratio"] = figures["me_ms"] / figures["payment_ms"]
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500, help="timed calls per figure (default 500)")
    args = parser.parse_args()
    if not 10 <= args.calls <= 5000:
        parser.error("keep it bounded: calls 10-5000")
    app = create_app()
    client = app.test_client()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    payments = bench_payments(client, args.calls)
    for name, value in payments.items():
        print(f"{name:28s} {value:10.3f}" if isinstance(value, float) else f"{name:28s} {value:10d}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    # rates are the inverse of the median times: a payment's rate against /me's
    payment_ok = report_result(
        "POST /payments against GET /me",
        1000 / payments["payment_ms"],
        1000 / payments["me_ms"],
        "req/s",
        PAYMENT_GOAL,
        at_least=True,
    )
    verdict = "met" if payment_ok else "MISSED"
    print(f"payment POST vs GET /me: {payments['payment_ratio']:.2f} (goal >= {PAYMENT_GOAL}) {verdict}")
    return 0 if payment_ok else 1


if __name__ == "__main__":
    sys.exit(main())
