"""Path ids: positive integers that fit a signed 32-bit column, else 400 invalid_id."""

from shop.platform.errors import ApiError

INT32_MAX = 2_147_483_647


def parse_id(raw: str, param: str = "id") -> int:
    """The integer in a path segment, or 400 invalid_id (digits only, 1..2,147,483,647)."""
    if not raw.isascii() or not raw.isdigit() or len(raw) > 10 or int(raw) < 1 or int(raw) > INT32_MAX:
        raise ApiError(400, "invalid_id", f"{param} must be a positive integer no larger than {INT32_MAX}.",
                       param=param)
    return int(raw)
