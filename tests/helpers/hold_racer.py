"""One process of a hold race: `python -m tests.helpers.hold_racer DATABASE START BODY_JSON`.

Opens DATABASE itself (a SQLite path or a PostgreSQL URL), waits for the wall-clock instant START
(so several processes ask at once), asks for the hold through the domain function and prints the
outcome: `201 <hold id>` or `<status> <code>`. The app's clock offset comes from SHOP_CLOCK_OFFSET.
"""

import json
import sys
import time


def main() -> None:
    database, start, body = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3])
    from schemas.appointments import SlotHoldCreateSchema
    from shop.db import db, init_database
    from shop.domain.appointments.holds import create_hold
    from shop.platform.errors import ApiError

    init_database(database)
    db.connect(reuse_if_open=True)
    time.sleep(max(0.0, start - time.time()))
    try:
        print(f"201 {create_hold('acme', SlotHoldCreateSchema().load(body)).id}")
    except ApiError as error:
        print(f"{error.status} {error.code}")
    finally:
        db.close()


if __name__ == "__main__":
    main()
