"""Databases as the release of commit 0ff0c57 left them (tests/data), on SQLite and PostgreSQL."""

import json
import os
import struct
import subprocess
import sys
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
from peewee import PostgresqlDatabase, SqliteDatabase

from tests.helpers.processes import ROOT

DATA = Path(__file__).resolve().parents[1] / "data"
ROWS = json.loads((DATA / "rows_0ff0c57.json").read_text())
TOKEN = ROWS["api_key_token"]
SECRET_KEY = "make-0ff0c57-secret"  # the instance key the release encrypted webhook secrets with
# Huey's queue tables are named by their storage: PostgresStorage prefixes them
QUEUE_TABLES = {"kv", "schedule", "task", "counter"}
PG_URL = os.environ.get("SHOP_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


def table_name(db, table: str) -> str:
    """The name of a table of the release's rows in `db` (the queue's differ on PostgreSQL)."""
    return f"huey_{table}" if isinstance(db, PostgresqlDatabase) and table in QUEUE_TABLES else table


def create_old_schema(db) -> None:
    """Run the release's DDL (tests/data/schema_0ff0c57.<backend>.sql) in `db`."""
    backend = "postgres" if isinstance(db, PostgresqlDatabase) else "sqlite"
    text = (DATA / f"schema_0ff0c57.{backend}.sql").read_text()
    with db.atomic():
        for statement in text.split(";\n"):
            lines = [line for line in statement.splitlines() if not line.startswith("--")]
            if "".join(lines).strip():
                db.execute_sql("\n".join(lines))


def insert_old_rows(db) -> None:
    """Insert the rows the release wrote (raw column values, as they were stored)."""
    with db.atomic():
        for table, content in ROWS["tables"].items():
            name, columns = table_name(db, table), content["columns"]
            quoted = ", ".join(f'"{column}"' for column in columns)
            sql = f'INSERT INTO "{name}" ({quoted}) VALUES ({", ".join([db.param] * len(columns))})'
            for row in content["rows"]:
                db.execute_sql(sql, [bytes.fromhex(v["hex"]) if isinstance(v, dict) else v for v in row])
            if isinstance(db, PostgresqlDatabase) and "id" in columns:  # serial ids continue after them
                sequence = db.execute_sql("SELECT pg_get_serial_sequence(%s, 'id')", (name,)).fetchone()[0]
                if sequence and content["rows"]:
                    db.execute_sql(f'SELECT setval(%s, (SELECT MAX(id) FROM "{name}"))', (sequence,))


def contents(db) -> dict:
    """Every row of every table of the release, in a stable order."""
    result = {}
    for table, content in ROWS["tables"].items():
        columns = ", ".join(f'"{c}"' for c in content["columns"])
        rows = db.execute_sql(f'SELECT {columns} FROM "{table_name(db, table)}"').fetchall()
        if isinstance(db, PostgresqlDatabase):
            rows = [map(as_stored, row) for row in rows]
        result[table] = sorted((tuple(row) for row in rows), key=repr)
    return result


def as_stored(value):
    """A float as the release's PostgreSQL REAL column held it (4 bytes): migration 0003 widens
    those columns to double precision, which keeps each number exactly but prints more digits."""
    return struct.unpack("f", struct.pack("f", value))[0] if isinstance(value, float) else value


def old_sqlite_file(path: Path) -> Path:
    """A SQLite file with the release's schema and rows."""
    db = SqliteDatabase(str(path))
    create_old_schema(db)
    insert_old_rows(db)
    db.close()
    return path


@contextmanager
def throwaway_postgres():
    """A new PostgreSQL database (peewee) and its URL, dropped afterwards; skip without a server."""
    try:
        import psycopg
    except ImportError:
        pytest.skip("psycopg is not installed (pip install -e '.[postgres]')")
    try:
        admin = psycopg.connect(PG_URL, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as error:
        pytest.skip(f"no PostgreSQL server at {PG_URL} ({str(error).strip()}); set SHOP_TEST_POSTGRES_URL")
    name = f"shop_migrate_{uuid.uuid4().hex[:12]}"
    admin.execute(f"CREATE DATABASE {name}")
    info = admin.info
    db = PostgresqlDatabase(
        name, host=info.host, port=info.port, user=info.user, password=info.password or None
    )
    try:
        yield db, f"postgresql://{info.user}@{info.host}:{info.port}/{name}"
    finally:
        db.close()
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.close()


def flask_shop(database: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """`flask --app app shop ARGS` on `database`, from the checkout."""
    env = dict(os.environ, SHOP_DATABASE=database)
    result = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", "shop", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result


SMOKE = """
import json, sys
from shop import create_app
client = create_app().test_client()
answers = {}
for path in sys.argv[2:]:
    response = client.get("/api/v1" + path, headers={"Authorization": "Bearer " + sys.argv[1]})
    answers[path] = [response.status_code, response.get_json()]
print(json.dumps(answers))
"""


def api_reads(database: str, paths: list[str]) -> dict:
    """GET each path through the app built on `database` (in its own process): {path: [status, body]}."""
    env = dict(os.environ, SHOP_DATABASE=database, SHOP_SECRET_KEY=SECRET_KEY)
    result = subprocess.run(
        [sys.executable, "-c", SMOKE, TOKEN, *paths],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)
