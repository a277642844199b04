"""gunicorn settings for the API: `gunicorn -c python:shop.gunicorn_conf app:app`.

gunicorn answers a request line or header beyond these limits itself, with an HTML 400/414 the
app never sees. The OpenAPI document bounds every path and query parameter (maxLength, patterns,
enums, maxima) so that any request it calls valid fits: tests/api/test_openapi_contract.py
computes the longest request line each operation allows and checks it against this limit.
"""

# gunicorn's maximum (8190 bytes; only 0, "unlimited", is larger)
limit_request_line = 8190
# one header line: Authorization (a key of at most 200 characters) and Idempotency-Key (255) fit
limit_request_field_size = 8190
limit_request_fields = 100


def child_exit(server, worker):
    """A worker gone: drop its live-gauge files from the metrics directory (prometheus_client's
    multiprocess bookkeeping; its counters stay, so the box's totals never go back)."""
    import os

    path = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if path and os.path.isdir(path):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid, path)
