"""Regenerate schema_0ff0c57.* and rows_0ff0c57.json from the release of commit 0ff0c57 (run once).

    git worktree add --detach /tmp/old 0ff0c57
    cd /tmp/old && PYTHONPATH=/tmp/old python /path/to/tests/data/make_0ff0c57.py OUT_DIR [PG_URL]

It runs the OLD release's own code: create_app() creates its tables in a new SQLite file, the demo
shop is loaded and some API calls and activity write rows into every table; then the schema
(sqlite_master, in creation order) and every row (raw column values, booleans as JSON booleans) are
written out. Given a PostgreSQL URL it also binds the old models to a throwaway PostgreSQL database
and records the DDL peewee runs there, plus Huey's PostgresStorage DDL.
"""

import json
import os
import sys
import tempfile
import uuid

OUT = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="old-0ff0c57-")
os.environ.update(
    SHOP_DATABASE=os.path.join(WORK, "old.sqlite3"),
    SHOP_INSTANCE_PATH=WORK,
    SHOP_SECRET_KEY="make-0ff0c57-secret",
    SHOP_WEBHOOK_ALLOW_HTTP="1",
    SHOP_WEBHOOK_TRUSTED_NETWORKS="127.0.0.0/8",
)

from peewee import BooleanField  # noqa: E402

from shop import create_app  # noqa: E402
from shop.db import db  # noqa: E402
from shop.domain.activity import run_activity  # noqa: E402
from shop.domain.fixtures import load_fixture  # noqa: E402
from shop.models import ALL_MODELS  # noqa: E402
from shop.platform import usage_log  # noqa: E402


def write_rows() -> None:
    """Rows in every table, written by the old release's own code paths."""
    app = create_app()
    with open("shop/demo/demo_shop.json", encoding="utf-8") as handle:
        summary = load_fixture(json.load(handle))
    token = next(k["token"] for k in summary["api_keys"]) if "api_keys" in summary else None
    client = app.test_client()
    headers = {"Authorization": f"Bearer {token}"}
    client.get("/api/v1/me", headers={"Authorization": "Bearer sk_test_wrong"})  # an auth failure
    created = client.post(
        "/api/v1/webhooks",
        headers={**headers, "Idempotency-Key": "make-1"},
        json={"url": "http://127.0.0.1:9/hook", "events": ["ticket.status_changed"]},
    )
    assert created.status_code == 201, created.get_json()
    run_activity(
        "ticket.status_changed",
        "acme",
        {"id": "1001", "status": "Ready", "changed_by": "sam@acme.test", "change_source": "queue_drag"},
    )
    run_activity(
        "notification",
        "acme",
        {
            "scope": "user",
            "user_email": "sam@acme.test",
            "type": "mention",
            "message": "Hi",
            "ticket_id": "1001",
        },
    )
    run_activity("payment.refunded", "acme", {"payment_id": 4001, "amount": 1000, "reason": "goodwill"})
    for path in ("/me", "/customers", "/notifications", "/usage"):
        client.get(f"/api/v1{path}", headers=headers)
    usage_log.buffer.flush()
    db.execute_sql(
        "INSERT INTO schedule (queue, data, timestamp) VALUES (?, ?, ?)",
        ("shop", b"\x80\x04N.", 4102444800.0),
    )  # a queued retry (a pickled None)
    db.execute_sql("INSERT INTO kv (queue, key, value) VALUES (?, ?, ?)", ("shop", "r1", b"\x80\x04N."))
    db.execute_sql("INSERT INTO counter (queue, key, value) VALUES (?, ?, ?)", ("shop", "c1", 3))
    return token


def dump_sqlite(token) -> None:
    """The schema in creation order and every row as raw values."""
    statements = [
        sql for (sql,) in db.execute_sql("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
    ]
    with open(os.path.join(OUT, "schema_0ff0c57.sqlite.sql"), "w", encoding="utf-8") as handle:
        handle.write("-- the SQLite schema of the release of commit 0ff0c57 (tests/data/make_0ff0c57.py)\n")
        handle.write("".join(f"{sql};\n" for sql in statements))
    booleans = {
        (m._meta.table_name, f.column_name)
        for m in ALL_MODELS
        for f in m._meta.sorted_fields
        if isinstance(f, BooleanField)
    }
    tables = [
        name
        for (name,) in db.execute_sql(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
        )
    ]
    rows = {"api_key_token": token, "tables": {}}
    for table in tables:
        cursor = db.execute_sql(f'SELECT * FROM "{table}"')
        columns = [d[0] for d in cursor.description]
        values = []
        for row in cursor.fetchall():
            values.append(
                [
                    {"hex": v.hex()}
                    if isinstance(v, bytes)
                    else bool(v)
                    if (table, c) in booleans and v is not None
                    else v
                    for c, v in zip(columns, row, strict=True)
                ]
            )
        rows["tables"][table] = {"columns": columns, "rows": values}
        print(f"{table}: {len(values)} rows", file=sys.stderr)
    with open(os.path.join(OUT, "rows_0ff0c57.json"), "w", encoding="utf-8") as handle:
        json.dump(rows, handle, indent=1)
        handle.write("\n")


def dump_postgres(url: str) -> None:
    """The DDL peewee runs for the old models on PostgreSQL, then Huey's PostgresStorage DDL."""
    import psycopg
    from huey.storage import PostgresStorage
    from peewee import PostgresqlDatabase

    name = f"shop_make_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        seen = []

        class Recording(PostgresqlDatabase):
            def execute_sql(self, sql, params=None, *args, **kwargs):
                if sql.lstrip().upper().startswith("CREATE"):
                    assert not params, (sql, params)
                    seen.append(sql)
                return super().execute_sql(sql, params, *args, **kwargs)

        pg = Recording(name, host="127.0.0.1", user="postgres")
        with pg.bind_ctx(ALL_MODELS):
            pg.create_tables(ALL_MODELS)
        seen.extend(PostgresStorage(create_tables=False).ddl)
        pg.close()
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name}")
    with open(os.path.join(OUT, "schema_0ff0c57.postgres.sql"), "w", encoding="utf-8") as handle:
        handle.write(
            "-- the 0ff0c57 models created on PostgreSQL by peewee, and Huey's PostgresStorage "
            "tables (tests/data/make_0ff0c57.py)\n"
        )
        handle.write("".join(f"{sql};\n" for sql in seen))


if __name__ == "__main__":
    dump_sqlite(write_rows())
    if len(sys.argv) > 2:
        dump_postgres(sys.argv[2])
