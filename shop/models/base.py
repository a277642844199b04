"""The base model and field helpers shared by every model."""

import json
from datetime import datetime

from peewee import DateTimeField, Model, TextField

from shop.db import db


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

    @classmethod
    def columns(cls, alias: str | None = None) -> str:
        """The select list of every column of this model, for a constant hot-path query."""
        prefix = f"{alias}." if alias else ""
        return ", ".join(f"{prefix}{field.column_name}" for field in cls._meta.sorted_fields)

    @classmethod
    def from_row(cls, row) -> "BaseModel":
        """An instance from the values of columns(), converted as a peewee query would."""
        pairs = zip(cls._meta.sorted_fields, row, strict=True)
        return cls(__no_default__=True, **{field.name: field.python_value(value) for field, value in pairs})

    @classmethod
    def for_tenant(cls, tenant_id: str):
        """Every query of a tenant's data starts here, so the tenant condition is never forgotten."""
        return cls.select().where(cls.tenant == tenant_id)
