"""Prometheus metrics: what the API and the consumer count, and the text a scrape of /metrics reads.

Every process of a box (gunicorn's workers, the consumers) writes its counters to files in one
shared directory (prometheus_client's multiprocess mode); a scrape of any API worker adds them
up. The queue's depth and the oldest due work are read from the database at scrape time, so they
hold for every box. Recording is on in a process once `setup()` saw SHOP_METRICS_TOKEN; no label
carries a tenant, a key or anything a request sent beyond its method and route template.
"""

import functools
import hmac
import logging
import os
import threading
import time
from pathlib import Path

from flask import current_app, g, request

from shop import clock

ROUTE_UNMATCHED = "<unmatched>"  # any path no route knows: one label, whatever was sent
METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
ATTEMPT_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

log = logging.getLogger("shop.metrics")
_lock = threading.Lock()
_metrics: dict = {}  # name -> metric, filled by setup()


def directory(config) -> Path:
    """The shared directory: SHOP_METRICS_DIR, else PROMETHEUS_MULTIPROC_DIR, else instance/metrics."""
    configured = config.get("METRICS_DIR") or os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    return Path(configured or Path(config.root_path) / "metrics").resolve()


def setup(config) -> bool:
    """Turn recording on in this process when a metrics token is configured (once; idempotent)."""
    if not config.get("METRICS_TOKEN"):
        return False
    with _lock:
        if not _metrics:
            _start(directory(config))
    return True


def _start(path: Path) -> None:
    """Multiprocess mode in `path`, then the metrics (their values live in that directory's files)."""
    path.mkdir(parents=True, exist_ok=True)
    # prometheus_client picks its value class from this variable when it is first imported; set
    # both, so the mode holds even if something imported it before the configuration was read
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)
    from prometheus_client import CollectorRegistry, Counter, Histogram, values

    if not values.ValueClass.__name__.startswith("Mmaped"):
        values.ValueClass = values.MultiProcessValue()
    registry = CollectorRegistry()  # not the global one: a scrape reads the files, not the objects
    _metrics.update(
        requests=Counter(
            "shop_http_requests",
            "HTTP requests answered, by route template, method and status.",
            ["route", "method", "status"],
            registry=registry,
        ),
        latency=Histogram(
            "shop_http_request_duration_seconds",
            "Time to answer an HTTP request, by route template and method.",
            ["route", "method"],
            buckets=REQUEST_BUCKETS,
            registry=registry,
        ),
        auth_failures=Counter(
            "shop_auth_failures",
            "Requests refused 401: a missing, unknown, revoked or expired key.",
            registry=registry,
        ),
        rate_limited=Counter(
            "shop_rate_limited",
            "Requests refused 429, by limit: key (the key's bucket), address (failed authentications "
            "from one address), send_rate (a tenant's message send rate).",
            ["limit"],
            registry=registry,
        ),
        attempts=Counter(
            "shop_webhook_attempts",
            "Webhook delivery attempts by outcome: success, http_4xx, http_5xx, timeout, network_error, "
            "blocked, disabled.",
            ["outcome"],
            registry=registry,
        ),
        attempt_latency=Histogram(
            "shop_webhook_attempt_duration_seconds",
            "Time from an attempt's request to its answer (or failure), by outcome.",
            ["outcome"],
            buckets=ATTEMPT_BUCKETS,
            registry=registry,
        ),
        deliveries=Counter(
            "shop_webhook_deliveries",
            "Webhook deliveries by the state an attempt left them in: delivered, retrying, dead.",
            ["outcome"],
            registry=registry,
        ),
        sends=Counter(
            "shop_message_sends",
            "Outbound message send attempts by channel and outcome: sent, retry, failed.",
            ["channel", "outcome"],
            registry=registry,
        ),
    )


# --- recording (a no-op in a process where metrics are off) ---


def never_fails(record):
    """A recording function whose failure (a full disk under the metrics directory...) is logged
    and dropped: counting must never fail a request or the job that delivers or sends."""

    @functools.wraps(record)
    def guarded(*args, **kwargs):
        try:
            record(*args, **kwargs)
        except Exception:
            log.warning("metrics: %s failed", record.__name__, exc_info=True)

    return guarded


@never_fails
def request_finished(response) -> None:
    """after_request: count the request by route template, method and status, time it, and note a
    401 or a 429 by the limit that refused it."""
    if not current_app.config.get("METRICS_TOKEN") or not setup(current_app.config):
        return
    rule = request.url_rule.rule if request.url_rule is not None else ROUTE_UNMATCHED
    method = request.method if request.method in METHODS else "OTHER"
    status = response.status_code
    _metrics["requests"].labels(rule, method, str(status)).inc()
    started = g.get("started")
    if started is not None:
        _metrics["latency"].labels(rule, method).observe(time.perf_counter() - started)
    if status == 401:
        _metrics["auth_failures"].inc()
    elif status == 429:
        _metrics["rate_limited"].labels(_limit()).inc()


def _limit() -> str:
    """Which limit a 429 came from: no key yet is the address limit; a refused bucket sets
    Retry-After among the key's headers; past both, the tenant's send rate."""
    if "api_key" not in g:
        return "address"
    return "key" if "Retry-After" in g.get("rate_headers", {}) else "send_rate"


@never_fails
def attempt_finished(status: str, outcome) -> None:
    """A webhook attempt ended (an engine Outcome); `status` is the state it left the delivery in."""
    if not _metrics:
        return
    label = attempt_outcome(outcome)
    _metrics["attempts"].labels(label).inc()
    if outcome.ms is not None:
        _metrics["attempt_latency"].labels(label).observe(outcome.ms / 1000)
    _metrics["deliveries"].labels(status).inc()


def attempt_outcome(outcome) -> str:
    """A bounded label for an attempt's outcome (never the error text, which names hosts)."""
    if outcome.reply is not None:
        code = outcome.reply.status
        return "success" if 200 <= code < 300 else f"http_{code // 100}xx"
    error = outcome.error or ""
    if error == "timeout":
        return "timeout"
    if error.startswith("blocked target"):
        return "blocked"
    if error.startswith("subscription disabled"):
        return "disabled"
    return "network_error"


@never_fails
def message_finished(channel: str, outcome: str) -> None:
    """An outbound message send ended: sent, retry (a transient failure) or failed (for good)."""
    if _metrics:
        _metrics["sends"].labels(channel if channel in ("email", "sms") else "other", outcome).inc()


def install(app) -> None:
    """Count every request of `app`, and start recording now if a metrics token is configured."""
    app.after_request(_count_request)
    setup(app.config)


def _count_request(response):
    request_finished(response)
    return response


# --- the scrape ---


def authorized(config) -> bool:
    """Whether the request carries `Authorization: Bearer <SHOP_METRICS_TOKEN>` (constant time)."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    expected = str(config["METRICS_TOKEN"]).encode()
    return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), expected)


def exposition(config) -> bytes:
    """Every process's counters from the shared directory, and the backlog read now."""
    from prometheus_client import CollectorRegistry, generate_latest, multiprocess

    setup(config)
    folder = directory(config)
    folder.mkdir(parents=True, exist_ok=True)  # emptied by hand while running: a scrape, not a 500
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=str(folder))
    registry.register(BacklogCollector(config))
    return generate_latest(registry)


class BacklogCollector:
    """Gauges read from the database at scrape time: the queue, the due work, the consumers."""

    def __init__(self, config):
        self.config = config

    def collect(self):
        from prometheus_client.core import GaugeMetricFamily

        from shop.domain import backlog

        try:
            figures = backlog.figures(float(self.config["HEALTH_HEARTBEAT_STALE_SECONDS"]), clock.now())
        except Exception:  # the counters are still worth serving; say the database did not answer
            log.warning("metrics: the backlog could not be read", exc_info=True)
            figures = {}
        up = ("Whether the database answered this scrape's backlog queries.", int(bool(figures)))
        for name, (help_text, value) in {"database_up": up, **figures}.items():
            yield GaugeMetricFamily(f"shop_{name}", help_text, value=value)
