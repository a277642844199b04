"""Staff accounts (issue 27): a teammate's password hash, role, disabled flag and failed sign-ins,
and console sessions signed in by a teammate instead of an API key."""

from peewee import SQL, BooleanField, CharField, DateTimeField, ForeignKeyField, IntegerField, Model


def _user_model(db):
    """user as this version refers to it (only its key), bound to `db`."""

    class User(Model):
        id = IntegerField(primary_key=True)

        class Meta:
            database = db
            table_name = "user"

    return User


def up(migrator, db) -> None:
    """Add the user's sign-in columns (existing teammates: staff, enabled, no password yet) and the
    session's user; a session's key becomes optional (a teammate's session has none)."""
    user = _user_model(db)
    migrator.migrate(
        migrator.add_column("user", "password_hash", CharField(max_length=255, null=True)),
        migrator.add_column(
            "user", "role", CharField(max_length=8, default="staff", constraints=[SQL("DEFAULT 'staff'")])
        ),
        migrator.add_column(
            "user", "disabled", BooleanField(default=False, constraints=[SQL("DEFAULT FALSE")])
        ),
        migrator.add_column(
            "user", "failed_sign_ins", IntegerField(default=0, constraints=[SQL("DEFAULT 0")])
        ),
        migrator.add_column("user", "failed_sign_in_at", DateTimeField(null=True)),
        migrator.add_column(
            "console_session",
            "user_id",
            ForeignKeyField(user, field=user.id, null=True, on_delete="CASCADE"),
        ),
        migrator.drop_not_null("console_session", "api_key_id"),
    )
