"""SQLite's plan of a statement, for tests that show which index a hot-path read takes."""

from shop.db import db


def sqlite_plan(statement: str, params: dict) -> str:
    """The steps of `EXPLAIN QUERY PLAN` for the statement, joined by spaces (SQLite only)."""
    return " ".join(str(row[-1]) for row in db.execute_sql(f"EXPLAIN QUERY PLAN {statement}", params))
