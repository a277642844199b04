"""Path ids: positive integers that fit a signed 32-bit column, else 400 invalid_id."""

import re

from shop.platform.errors import ApiError

INT32_MAX = 2_147_483_647
MAX_ID_DIGITS = 10


def _at_most(limit: str) -> list[str]:
    """Regex alternatives for digit strings of len(limit) digits, no leading zero, at most limit."""
    alternatives = []
    for place, digit in enumerate(limit):
        low = "1" if place == 0 else "0"
        if int(digit) > int(low):
            below = f"[{low}-{int(digit) - 1}]" if int(digit) - 1 > int(low) else low
            alternatives.append(
                limit[:place]
                + below
                + (f"[0-9]{{{len(limit) - place - 1}}}" if place < len(limit) - 1 else "")
            )
    alternatives.append(limit)
    return alternatives


def _id_pattern() -> str:
    """Every way the id parser accepts: up to 10 ASCII digits, leading zeros allowed, 1..INT32_MAX."""
    # nine digits or fewer are always in range, and so is anything with a leading zero
    short = [f"[1-9][0-9]{{0,{MAX_ID_DIGITS - 2}}}"]
    padded = [f"0{{{zeros}}}[1-9][0-9]{{0,{MAX_ID_DIGITS - 1 - zeros}}}" for zeros in range(1, MAX_ID_DIGITS)]
    return "^(?:" + "|".join(short + padded + _at_most(str(INT32_MAX))) + ")$"


# the document publishes this pattern and the parser matches with it: one definition for both
ID_PATTERN = _id_pattern()
_ID = re.compile(ID_PATTERN.replace("$", r"\Z"))


def parse_id(raw: str, param: str = "id") -> int:
    """The integer in a path segment, or 400 invalid_id (digits only, 1..2,147,483,647)."""
    if not _ID.match(raw):
        raise ApiError(
            400, "invalid_id", f"{param} must be a positive integer no larger than {INT32_MAX}.", param=param
        )
    return int(raw)
