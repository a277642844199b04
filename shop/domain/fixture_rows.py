"""What every fixture section loader shares: FixtureError, which names the entry, and insert()."""

from peewee import IntegrityError

from shop.platform.errors import ApiError


class FixtureError(Exception):
    """A fixture entry that cannot be loaded; `path` names it (tenants[0].api_keys[1].scopes)."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def insert(path: str, fn, *args, **kwargs):
    """Run one insert, naming the entry if the store refuses it."""
    try:
        return fn(*args, **kwargs)
    except IntegrityError as error:
        raise FixtureError(path, f"conflicts with an existing record ({error}).") from None
    except ApiError as error:
        raise FixtureError(f"{path}.{error.param}" if error.param else path, error.message) from None
