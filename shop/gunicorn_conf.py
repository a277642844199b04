"""gunicorn settings for the API: `gunicorn -c python:shop.gunicorn_conf 'shop:create_app()'`.

The same command works from an installed wheel and from a checkout (where `gunicorn.conf.py`, read
by gunicorn when no -c is given, imports this module). Anything given on the command line or in
GUNICORN_CMD_ARGS wins over these defaults (docs/operations.md).

gunicorn answers a request line or header beyond these limits itself, with an HTML 400/414 the
app never sees. The OpenAPI document bounds every path and query parameter (maxLength, patterns,
enums, maxima) so that any request it calls valid fits: tests/api/test_openapi_contract.py
computes the longest request line each operation allows and checks it against this limit.
"""

import multiprocessing

# gunicorn's maximum (8190 bytes; only 0, "unlimited", is larger)
limit_request_line = 8190
# one header line: Authorization (a key of at most 200 characters) and Idempotency-Key (255) fit
limit_request_field_size = 8190
limit_request_fields = 100

# loopback: the reverse proxy on the same box is the only client (docs/operations.md)
bind = "127.0.0.1:8000"
# a worker process per core, each with 4 threads: a request mostly waits on the database
workers = multiprocessing.cpu_count()
threads = 4
# no request waits on a webhook subscriber or a provider (the consumer does): 30 s is generous
timeout = 30
# a stop or restart lets requests in flight finish first
graceful_timeout = 30


def child_exit(server, worker):
    """A worker gone: drop its live-gauge files from the metrics directory (prometheus_client's
    multiprocess bookkeeping; its counters stay, so the box's totals never go back)."""
    import os

    path = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if path and os.path.isdir(path):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid, path)
