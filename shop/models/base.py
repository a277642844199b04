"""The base model and field helpers shared by every model."""

import json
from datetime import datetime

from peewee import AutoField, DateTimeField, Model, TextField

from shop.db import db, driver_sql, named_sql, on_postgres, run_sql

_INSERT_SQL: dict = {}


class JSONField(TextField):
    """A JSON value stored as text (portable between SQLite and PostgreSQL)."""

    def db_value(self, value):
        return None if value is None else json.dumps(value, separators=(",", ":"))

    def python_value(self, value):
        return None if value is None else json.loads(value)


class UTCDateTimeField(DateTimeField):
    """A naive UTC datetime, read back with the C parser rather than strptime guesses."""

    def python_value(self, value):
        if isinstance(value, str):
            try:
                return datetime.fromisoformat(value)
            except ValueError:
                pass
        return super().python_value(value)


class BaseModel(Model):
    class Meta:
        database = db
        legacy_table_names = False

    def save(self, force_insert=False, only=None):
        """Save; a row inserted with an id of its own moves the id sequence past it on PostgreSQL.

        Fixtures and in-app activity keep the ids they are given; SQLite's next id is always
        past the largest, but a PostgreSQL sequence knows nothing of an id it did not hand out.
        """
        pk = self._meta.primary_key
        explicit = force_insert and isinstance(pk, AutoField) and self._pk is not None
        saved = super().save(force_insert=force_insert, only=only)
        if explicit and on_postgres():
            # never backwards: nextval is atomic, so concurrent inserts only ever move it forward
            db.execute_sql(
                "SELECT setval(pg_get_serial_sequence(%s, %s), GREATEST(%s, "
                "nextval(pg_get_serial_sequence(%s, %s))))",
                (self._meta.table_name, pk.column_name, self._pk) + (self._meta.table_name, pk.column_name),
            )
        return saved

    @classmethod
    def columns(cls, alias: str | None = None) -> str:
        """The select list of every column of this model, for a constant hot-path query."""
        prefix = f"{alias}." if alias else ""
        return ", ".join(f"{prefix}{field.column_name}" for field in cls._meta.sorted_fields)

    @classmethod
    def from_row(cls, row) -> "BaseModel":
        """An instance from the values of columns(), converted as a peewee query would."""
        pairs = zip(cls._meta.sorted_fields, row, strict=True)
        instance = cls(__no_default__=True)
        # the values straight into the instance's data, as peewee's own row reader does: setting each
        # through its field's descriptor cost more than the whole read on the webhook hot path
        instance.__data__ = {field.name: field.python_value(value) for field, value in pairs}
        instance._dirty = set(instance.__data__)
        return instance

    @classmethod
    def insert_row(cls, **values) -> "BaseModel":
        """Insert one row with an explicit primary key through constant SQL; the row as an instance.

        The SQL text depends only on the model and the columns given, so it is built once and the
        driver prepares it once: for rows written on hot paths (events, deliveries).
        """
        sql, params = cls.insert_statement(**values)
        db.execute_sql(driver_sql(sql), params)
        if any(isinstance(value, Model) for value in values.values()):  # a related row: peewee's setter
            return cls(__no_default__=True, **values)
        instance = cls(__no_default__=True)
        instance.__data__, instance._dirty = dict(values), set(values)
        return instance

    @classmethod
    def create_row(cls, **values) -> "BaseModel":
        """create() through constant SQL: peewee's defaults filled in, the new id read back with
        RETURNING; for rows of an automatic id written on hot paths (inbound messages). A row given
        an id of its own goes through create(), whose save() moves PostgreSQL's sequence past it."""
        pk = cls._meta.primary_key
        if values.get(pk.name) is not None:
            return cls.create(**values)
        instance = cls(**values)
        instance.__data__.pop(pk.name, None)  # an id given as None: the database assigns it
        sql, params = cls.insert_statement(**instance.__data__)
        instance.__data__[pk.name] = run_sql(f"{sql} RETURNING {pk.column_name}", params)[0][0]
        instance._dirty.clear()  # as saved, like create()'s
        return instance

    @classmethod
    def insert_statement(cls, **values) -> tuple[str, dict]:
        """insert_row's constant named_sql INSERT and its parameters (named after the fields)."""
        key = (cls, tuple(values))
        fields = [cls._meta.fields[name] for name in values]
        sql = _INSERT_SQL.get(key)
        if sql is None:
            columns = ", ".join(field.column_name for field in fields)
            params = ", ".join(f":{field.name}" for field in fields)
            table = cls._meta.table_name
            sql = _INSERT_SQL[key] = named_sql(f"INSERT INTO {table} ({columns}) VALUES ({params})")
        return sql, {field.name: field.db_value(values[field.name]) for field in fields}

    @classmethod
    def for_tenant(cls, tenant_id: str):
        """Every query of a tenant's data starts here, so the tenant condition is never forgotten."""
        return cls.select().where(cls.tenant == tenant_id)
