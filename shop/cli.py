"""The `flask shop ...` commands: init-db, migrate, backup, restore, copy-to, load, demo, worker, key,
activity, rotate-secret-key."""

import json
import os
import shutil
import signal
import subprocess
import sys
from importlib import resources
from pathlib import Path

import click
from flask import current_app
from flask.cli import AppGroup, ScriptInfo
from werkzeug.serving import run_simple

from shop import backup, clock, migrations, models
from shop.backup import PAGES_PER_STEP
from shop.domain import health, teammates
from shop.domain.activity import ACTIVITIES, run_activity
from shop.domain.appointments.slots import next_free_slot
from shop.domain.fixtures import FixtureError, load_fixture
from shop.domain.keys import MODES, SCOPES, create_key, list_keys, revoke_key
from shop.models import Tenant
from shop.platform.errors import ApiError

# the commands that may meet a database at another version: a backup comes before a migrate, and
# a restore may put back one that a migrate then upgrades
SCHEMA_COMMANDS = ("init-db", "migrate", "backup", "restore")
# the commands that serve or deliver: they refuse a key that does not open the stored secrets
SERVING_COMMANDS = ("worker", "demo")
# the commands that may make a new database; every other one needs the shop's existing data
CREATING_COMMANDS = ("init-db", "migrate", "load", "demo", "restore")


@click.pass_context
def _refuse_an_old_schema(ctx: click.Context) -> None:
    """Run no command but the schema's own on a database the app refused (shop.create_app), and
    none that needs the shop's data on a database this very start made (the wrong folder)."""
    if ctx.resilient_parsing:
        return
    app = ctx.ensure_object(ScriptInfo).load_app()
    new_database = app.extensions.get("shop.new_database")
    if new_database and ctx.invoked_subcommand not in CREATING_COMMANDS:
        _remove_new_database(app, new_database)
        raise click.ClickException(
            f"No shop database at {new_database}: `{ctx.invoked_subcommand}` works on an existing one. "
            "Run it in the folder whose ./instance holds the shop, or set SHOP_INSTANCE_PATH (or "
            "SHOP_DATABASE); `flask --app shop shop init-db` or `demo` makes a new one."
        )
    if ctx.invoked_subcommand in SCHEMA_COMMANDS:
        return
    problem = app.extensions.get("shop.schema_problem")
    if not problem and ctx.invoked_subcommand in SERVING_COMMANDS:
        problem = app.extensions.get("shop.secret_problem")
    if problem:
        raise click.ClickException(problem)


def _remove_new_database(app, path: str) -> None:
    """Take back what this start made: the new SQLite file (and its -wal, -shm and writer lock
    files), and the instance folder with its new secret key where this process created the folder."""
    from shop.config import CREATED_FOLDERS
    from shop.db import db
    from shop.queue import huey

    huey.storage.close()
    db.close()
    for suffix in ("", "-wal", "-shm", "-writers"):
        Path(path + suffix).unlink(missing_ok=True)
    folder = Path(app.instance_path).resolve()
    if folder in CREATED_FOLDERS:
        shutil.rmtree(folder, ignore_errors=True)


shop = AppGroup("shop", help="Repair-Shop Service commands.", callback=_refuse_an_old_schema)
key = AppGroup("key", help="Create, list and revoke API keys.")
shop.add_command(key)
user = AppGroup("user", help="Create teammates, set their passwords and roles, disable them.")
shop.add_command(user)

DEMO_TENANT = "acme"
# the demo shop's teammates (shop/demo/demo_shop.json): email and password
DEMO_OWNER = ("sam@acme.test", "acme-owner-demo")
DEMO_STAFF = ("kim@acme.test", "acme-staff-demo")


def _print_json(value) -> None:
    click.echo(json.dumps(value, indent=2))


@shop.command("init-db")
def init_db() -> None:
    """Create every table at the current schema version (idempotent; see `migrate` for upgrades)."""
    try:
        models.create_tables()
    except migrations.SchemaOutOfDate as error:
        raise click.ClickException(str(error)) from None
    _print_json(
        {"database": current_app.config["DATABASE"], "initialized": True, "schema_version": migrations.head()}
    )


@shop.command("migrate")
def migrate() -> None:
    """Bring the database to the current schema version in place, keeping its data (idempotent).

    Prints the versions applied as JSON; progress goes to stderr. Back the database up first.
    """
    from shop.db import db

    def progress(line: str) -> None:
        click.echo(line, err=True)

    try:
        result = migrations.migrate(db, models.ALL_MODELS, progress)
        models.create_tables()  # the queue's tables, when missing
    except migrations.MigrationError as error:
        raise click.ClickException(f"migration failed, the failed step was rolled back: {error}") from None
    if current_app.extensions.get("shop.new_database"):  # made by this start, at the current version
        result["created"] = True
        progress(f"created a new database at the current version ({result['to_version']}): it is current")
    _print_json({"database": current_app.config["DATABASE"], **result})


def _stderr(line: str) -> None:
    click.echo(line, err=True)


@shop.command("backup")
@click.argument("dest", type=click.Path(path_type=Path))
@click.option(
    "--pages-per-step",
    default=PAGES_PER_STEP,
    show_default=True,
    type=click.IntRange(1),
    help="SQLite: pages copied between progress reports.",
)
def backup_command(dest: Path, pages_per_step: int) -> None:
    """Copy the database and the instance secret key into the new folder DEST while the service runs.

    SQLite: one consistent snapshot through the online backup API; PostgreSQL: pg_dump (custom
    format), or the exact command when pg_dump is not on PATH. Progress on stderr, JSON on stdout.
    """
    try:
        _print_json(backup.backup(dest, current_app.config, _stderr, pages_per_step))
    except (backup.BackupError, OSError) as error:  # OSError: a folder not writable, a full disk
        raise click.ClickException(f"no backup taken: {error}") from None


@shop.command("restore")
@click.argument("src", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Replace a database that holds rows.")
def restore_command(src: Path, force: bool) -> None:
    """Put back the backup in folder SRC (made by `shop backup`): the database and its secret key.

    Stop the API and the consumers first. A database holding rows is only replaced with --force;
    the backup's files are checked against its manifest and the database's integrity before.
    """
    try:
        _print_json(backup.restore(src, current_app.config, force, _stderr))
    except (backup.BackupError, OSError) as error:  # the database is swapped in last: still the old one
        raise click.ClickException(f"nothing restored: {error}") from None


@shop.command("copy-to")
@click.argument("url")
def copy_to(url: str) -> None:
    """Copy this database (every table, the queue's jobs too) into an empty PostgreSQL database at URL.

    Stop the API and the consumers first. The target is created at the current schema version when
    it has no tables, refused when any table holds a row; one transaction, counts verified, printed.
    """
    from shop.transfer import CopyError
    from shop.transfer import copy_to as copy_database

    try:
        _print_json(copy_database(url))
    except CopyError as error:
        raise click.ClickException(f"nothing was copied: {error}") from None


@shop.command("load")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
def load(path: str) -> None:
    """Load a fixture file in one transaction (all or nothing)."""
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
        summary = load_fixture(document)
    except json.JSONDecodeError as error:
        raise click.ClickException(f"{path} is not valid JSON: {error}") from None
    except FixtureError as error:
        raise click.ClickException(f"nothing loaded: {error}") from None
    _print_json(summary)


@key.command("create")
@click.option("--tenant", "tenant_id", required=True, help="Tenant id.")
@click.option("--scope", "scopes", multiple=True, type=click.Choice(SCOPES), help="Repeat per scope.")
@click.option("--no-scopes", is_flag=True, help="Create a key that holds no scope at all.")
@click.option("--mode", type=click.Choice(MODES), default="test", show_default=True)
def key_create(tenant_id: str, scopes: tuple, no_scopes: bool, mode: str) -> None:
    """Create an API key and print its token (shown this once)."""
    # a key without scopes is refused by every resource: only make one when asked in so many words
    if not scopes and not no_scopes:
        raise click.UsageError(
            "give the key's scopes with --scope (repeat it per scope), "
            "or --no-scopes for a key without any scope."
        )
    if scopes and no_scopes:
        raise click.UsageError("--scope and --no-scopes contradict each other: give one of them.")
    try:
        created, token = create_key(tenant_id, list(scopes), mode=mode)
    except ApiError as error:
        raise click.ClickException(error.message) from None
    _print_json(
        {"id": created.id, "tenant": tenant_id, "mode": mode, "scopes": created.scopes, "token": token}
    )


@key.command("revoke")
@click.argument("key_id")
def key_revoke(key_id: str) -> None:
    """Revoke an API key."""
    try:
        revoked = revoke_key(key_id)
    except ApiError as error:
        raise click.ClickException(error.message) from None
    _print_json({"id": revoked.id, "revoked": True})


@key.command("list")
@click.option("--tenant", "tenant_id", required=True, help="Tenant id.")
def key_list(tenant_id: str) -> None:
    """List a tenant's API keys as JSON (id, mode, scopes, revoked, expires_at, created_at)."""
    try:
        _print_json(list_keys(tenant_id))
    except ApiError as error:
        raise click.ClickException(error.message) from None


calendar_feed = AppGroup("calendar-feed", help="Make calendar feeds (iCalendar subscription URLs).")
shop.add_command(calendar_feed)


@calendar_feed.command("create")
@click.option("--tenant", "tenant_id", required=True, help="Tenant id.")
@click.option("--tech", "tech_id", default=None, help="A roster tech: only that tech's appointments.")
@click.option("--hide-customer-names", is_flag=True, help="Events say Appointment, not the customer's name.")
@click.option("--description", default=None, help="What the feed is for (at most 255 characters).")
@click.option(
    "--base-url",
    default=None,
    help="The public root of the URL [default: SHOP_PUBLIC_URL, else http://127.0.0.1:5000].",
)
def calendar_feed_create(tenant_id, tech_id, hide_customer_names, description, base_url) -> None:
    """Make a feed and print it as JSON with its url and webcal link (shown this once)."""
    from shop.domain import actor
    from shop.domain.appointments import feeds

    if Tenant.get_or_none(Tenant.id == tenant_id) is None:
        raise click.ClickException(f"no tenant {tenant_id!r}")
    if description is not None and len(description) > 255:
        raise click.ClickException("--description: at most 255 characters")
    body = {"tech_id": tech_id, "hide_customer_names": hide_customer_names, "description": description}
    root = base_url or current_app.config.get("PUBLIC_URL") or "http://127.0.0.1:5000"
    try:
        feed = feeds.create_feed(tenant_id, body, actor.SYSTEM, root)
    except ApiError as error:
        raise click.ClickException(error.message) from None
    from schemas.calendar_feeds import CalendarFeedCreatedSchema

    _print_json({**CalendarFeedCreatedSchema().dump(feed), "webcal_url": feeds.webcal_url(feed.url)})


@user.command("create")
@click.option("--tenant", "tenant_id", required=True, help="Tenant id.")
@click.option("--email", required=True, help="The teammate's email (their sign-in name).")
@click.option("--name", default=None, help="The teammate's name.")
@click.option("--role", type=click.Choice(("owner", "staff")), default="staff", show_default=True)
def user_create(tenant_id: str, email: str, name: str | None, role: str) -> None:
    """Add a teammate and print a generated password (shown this once)."""
    try:
        created, password = teammates.create_teammate(tenant_id, email, name, role)
    except ApiError as error:
        raise click.ClickException(error.message) from None
    _print_json(
        {"tenant": tenant_id, "email": created.email, "name": name, "role": role, "password": password}
    )


@user.command("set-password")
@click.option("--tenant", "tenant_id", required=True, help="Tenant id.")
@click.option("--email", required=True, help="The teammate's email.")
def user_set_password(tenant_id: str, email: str) -> None:
    """Read a new password from standard input (its first line); the teammate's sessions end."""
    password = sys.stdin.readline().rstrip("\r\n")
    try:
        changed = teammates.set_password(tenant_id, email, password)
    except ApiError as error:
        raise click.ClickException(error.message) from None
    _print_json({"tenant": tenant_id, "email": changed.email, "password_set": True})


@user.command("disable")
@click.option("--tenant", "tenant_id", required=True, help="Tenant id.")
@click.option("--email", required=True, help="The teammate's email.")
def user_disable(tenant_id: str, email: str) -> None:
    """Stop a teammate signing in; their sessions end now."""
    try:
        disabled = teammates.disable_teammate(tenant_id, email)
    except ApiError as error:
        raise click.ClickException(error.message) from None
    _print_json({"tenant": tenant_id, "email": disabled.email, "disabled": True})


@user.command("set-role")
@click.option("--tenant", "tenant_id", required=True, help="Tenant id.")
@click.option("--email", required=True, help="The teammate's email.")
@click.option("--role", type=click.Choice(("owner", "staff")), required=True)
def user_set_role(tenant_id: str, email: str, role: str) -> None:
    """Make a teammate an owner or staff (in force from their next page)."""
    try:
        changed = teammates.set_role(tenant_id, email, role)
    except ApiError as error:
        raise click.ClickException(error.message) from None
    _print_json({"tenant": tenant_id, "email": changed.email, "role": changed.role})


# \b keeps click from re-wrapping the list: one KIND a line, from the table the command dispatches on
ACTIVITY_KINDS_HELP = "KIND is one of:\n\n\b\n" + "\n".join(f"  {kind}" for kind in ACTIVITIES)


@shop.command("activity", epilog=ACTIVITY_KINDS_HELP)
@click.argument("kind")
@click.option("--tenant", "tenant_id", required=True, help="Tenant id.")
@click.option("--data", "data", default="{}", show_default=True, help="JSON object describing the change.")
def activity(kind: str, tenant_id: str, data: str) -> None:
    """Apply in-app activity KIND (an event type the API cannot cause, `notification`, ...)."""
    try:
        record = run_activity(kind, tenant_id, json.loads(data))
    except json.JSONDecodeError as error:
        raise click.ClickException(f"--data is not valid JSON: {error}") from None
    except ApiError as error:
        raise click.ClickException(error.message) from None
    _print_json(record)


@shop.command("worker")
@click.option("--workers", default=4, show_default=True, help="Worker threads.")
@click.option(
    "--no-periodic",
    "no_periodic",
    is_flag=True,
    help="Do not run the periodic tasks (sweeps, pruning): another consumer on the same "
    "database runs them. Give it to every consumer but one.",
)
def worker(workers: int, no_periodic: bool) -> None:
    """Run the Huey consumer (the same as `huey_consumer tasks.huey`)."""
    # the consumer's entry is the tasks package, which the app never imports: it runs in our place
    env = dict(os.environ, SHOP_DATABASE=current_app.config["DATABASE"], SHOP_CONSUMER_WORKERS=str(workers))
    argv = [sys.executable, "-m", "tasks"] + (["--no-periodic"] if no_periodic else [])
    os.execve(sys.executable, argv, env)


@shop.command("mail-in")
@click.option("--listen", required=True, help="HOST:PORT to listen on (loopback or behind your MTA).")
@click.option("--lmtp", is_flag=True, help="Speak LMTP (a Postfix lmtp: transport) instead of SMTP.")
def mail_in(listen: str, lmtp: bool) -> None:
    """Take customers' email over SMTP/LMTP into their conversations (unknown recipients refused)."""
    import threading

    from shop.inbound import mail_in as listener

    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit():
        raise click.ClickException("--listen takes HOST:PORT, for example 127.0.0.1:2525")
    controller = listener.start(current_app._get_current_object(), host.strip("[]"), int(port), lmtp)
    click.echo(f"mail-in: {'LMTP' if lmtp else 'SMTP'} on {host}:{controller.port}", err=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        controller.stop()


@shop.command("sms-in")
@click.option("--from", "sender", required=True, help="The customer's number, E.164.")
@click.option("--body", required=True, help="The text, e.g. STOP or CONFIRM.")
@click.option("--to", "recipient", default=None, help="The shop's number (default: the demo tenant's first).")
@click.option("--url", default="http://127.0.0.1:5000/inbound/sms/gateway", show_default=True)
def sms_in(sender: str, body: str, recipient: str | None, url: str) -> None:
    """Post a signed inbound SMS to the gateway webhook, as the gateway would (SHOP_SMS_GATEWAY_SECRET)."""
    import secrets

    import requests

    from shop.domain.messaging.sending import sender_for
    from shop.domain.webhooks.signing import signature_header

    secret = current_app.config.get("SMS_GATEWAY_SECRET")
    if not secret:
        raise click.ClickException("set SHOP_SMS_GATEWAY_SECRET (the server needs the same one)")
    to = recipient or sender_for("sms", current_app.config, DEMO_TENANT)
    payload = json.dumps(
        {"id": "cli_" + secrets.token_hex(8), "from": sender, "to": to, "body": body}
    ).encode()
    headers = {"Content-Type": "application/json"}
    headers["Service-Signature"] = signature_header([secret], int(clock.timestamp()), payload)
    answer = requests.post(url, data=payload, headers=headers, timeout=10)
    click.echo(answer.text)
    if answer.status_code != 200:
        raise SystemExit(1)


@shop.command("rotate-secret-key")
@click.option(
    "--retire-previous",
    is_flag=True,
    help="Drop the previous key once every stored secret is under the current one.",
)
def rotate_secret_key(retire_previous: bool) -> None:
    """Re-encrypt every stored secret under a new instance secret key (docs/operations.md)."""
    from shop.domain import secret_keys

    try:
        if retire_previous:
            summary = secret_keys.retire_previous(current_app.config)
        else:
            summary = secret_keys.rotate(current_app.config)
    except (secret_keys.RotationRefused, OSError) as error:
        raise click.ClickException(str(error)) from None
    _print_json(summary)


@shop.command("demo")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True)
@click.option(
    "--local-webhooks",
    is_flag=True,
    help="Deliver webhooks to receivers on this machine too: trust 127.0.0.0/8 and accept http:// "
    "subscription URLs (for a local demo only; docs/webhooks.md).",
)
@click.option("--reset", is_flag=True, help="Delete every row first and load the demo shop afresh.")
def demo(host: str, port: int, local_webhooks: bool, reset: bool) -> None:
    """Initialise the database, load the demo shop, then serve the API and a consumer."""
    models.create_tables()
    if reset:
        models.empty_tables()
    if Tenant.get_or_none(Tenant.id == DEMO_TENANT) is None:
        document = json.loads(resources.files("shop").joinpath("demo/demo_shop.json").read_text())
        load_fixture(document)
    else:
        click.echo(
            f"Kept the data already in {current_app.config['DATABASE']} (the demo shop as you left it); "
            "`demo --reset` starts over from the bundled demo shop."
        )
    env = dict(
        os.environ, SHOP_DATABASE=current_app.config["DATABASE"], SHOP_INSTANCE_PATH=current_app.instance_path
    )
    if local_webhooks:  # the API screens a URL at create, the consumer before each attempt: both
        settings = _local_webhook_settings(current_app.config.get("WEBHOOK_TRUSTED_NETWORKS"))
        current_app.config.update(WEBHOOK_ALLOW_HTTP=True, WEBHOOK_TRUSTED_NETWORKS=settings)
        env.update(SHOP_WEBHOOK_ALLOW_HTTP="1", SHOP_WEBHOOK_TRUSTED_NETWORKS=settings)
    click.echo(demo_help(host, port))
    consumer = subprocess.Popen([sys.executable, "-m", "tasks"], env=env)
    # a plain kill of the demo must take its consumer along, as Ctrl-C does
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        run_simple(host, port, current_app._get_current_object(), threaded=True)
    finally:
        consumer.terminate()
        consumer.wait(timeout=10)


LOOPBACK = "127.0.0.0/8"


def _networks(trusted) -> list[str]:
    """SHOP_WEBHOOK_TRUSTED_NETWORKS as a list of CIDR strings (given as a comma list or a list)."""
    given = trusted if isinstance(trusted, list | tuple) else str(trusted or "").split(",")
    return [str(network).strip() for network in given if str(network).strip()]


def _local_webhook_settings(trusted) -> str:
    """The operator's trusted networks with the loopback range added (a comma list)."""
    networks = _networks(trusted)
    return ",".join(networks if LOOPBACK in networks else [*networks, LOOPBACK])


def _webhook_line() -> str:
    """What the demo says of webhook destinations: local receivers allowed, or how to allow them."""
    from shop.domain.webhooks.destinations import is_flag_on

    config = current_app.config
    if is_flag_on(config.get("WEBHOOK_ALLOW_HTTP")) and LOOPBACK in _networks(
        config.get("WEBHOOK_TRUSTED_NETWORKS")
    ):
        return "Webhooks: receivers on this machine are allowed (127.0.0.0/8 trusted, http:// accepted)."
    return (
        "Webhooks: public https:// receivers only; restart with --local-webhooks to deliver to a "
        "receiver on this machine (http://127.0.0.1:PORT/...)."
    )


DEMO_READS = (
    "/me",
    "/customers",
    "/messages/conversations",
    "/messages/conversations/10/messages",
    "/appointments",
    "/appointments/slots?date={day}",
    "/notifications",
    "/notifications/count",
    "/webhooks",
    "/webhooks/event_types",
    "/usage?by_key=true",
)
DEMO_AUTH = "-H 'Authorization: Bearer sk_test_acme_demo_0001'"
JSON_TYPE = "-H 'Content-Type: application/json'"


def _curl_post(base: str, path: str, body: dict) -> str:
    """A curl line posting `body` as JSON (the demo's bodies hold no single quote)."""
    return f"  curl -s {DEMO_AUTH} {JSON_TYPE} -d '{json.dumps(body)}' {base}{path}"


def demo_booking() -> dict | None:
    """A create-appointment body for the demo shop's first free slot now (None if none is free)."""
    free = next_free_slot(DEMO_TENANT)
    if free is None:
        return None
    day, time = free
    return {
        "customer_name": "Ann Lee",
        "customer_phone": "+15555550100",
        "scheduled_date": day.isoformat(),
        "scheduled_time": time,
    }


def demo_help(host: str, port: int) -> str:
    """What the demo prints before serving: the key and curl examples that work right now."""
    base = f"http://{host}:{port}/api/v1"
    booking = demo_booking()
    day = booking["scheduled_date"] if booking else clock.now().date().isoformat()
    lines = [
        f"Demo shop loaded into {current_app.config['DATABASE']}",
        "API key (all scopes): sk_test_acme_demo_0001",
        f"Console: http://{host}:{port}/console/sign-in as an owner "
        f"({DEMO_OWNER[0]}, password {DEMO_OWNER[1]}) or staff ({DEMO_STAFF[0]}, password {DEMO_STAFF[1]})",
        f"Online booking page: http://{host}:{port}/book/{DEMO_TENANT}",
        _webhook_line(),
        "Read:",
        f"  curl -s {base}/health",
    ]
    lines += [f"  curl -s {DEMO_AUTH} '{base}{path.format(day=day)}'" for path in DEMO_READS]
    lines.append("Write:")
    lines.append(
        _curl_post(
            base,
            "/messages/send",
            {"ticket_id": "1001", "channel": "sms", "content": "Ready for pickup", "to": "+15555550100"},
        )
    )
    if booking is not None:  # the first free slot at start-up: a fixed date would pass or fill up
        lines.append(_curl_post(base, "/appointments", booking))
    lines.append(f"  curl -s {DEMO_AUTH} -X POST {base}/notifications/50/read")
    lines.append("Webhooks to your own public HTTPS endpoint (the signing secret is shown once):")
    lines.append(_curl_post(base, "/webhooks", {"url": "https://YOUR-HOST/hook", "events": ["*"]}))
    lines.append(f"  curl -s {DEMO_AUTH} -X POST {base}/webhooks/WHSUB_ID/ping")
    lines.append(
        "A calendar feed of the appointments (its url is shown once; subscribe to it as webcal://...):"
    )
    lines.append(_curl_post(base, "/appointments/calendar_feeds", {"description": "Front desk"}))
    providers = health.messaging(current_app.config)
    lines.append(f"Messaging: sms {providers['sms']}, email {providers['email']}")
    lines.append(
        "Text the shop as Ann (needs SHOP_SMS_GATEWAY_SECRET, the same for the demo and the command):"
    )
    lines.append('  flask --app shop shop sms-in --from +15555550100 --body "Is it ready?"')
    lines.append("In-app activity (emits observed events to webhook subscribers), in another shell:")
    lines.append(  # `--app shop`, not `app`: it runs from a wheel (no app.py) as from a checkout
        "  flask --app shop shop activity ticket.status_changed --tenant acme --data "
        '\'{"id": "1001", "status": "Ready", "changed_by": "sam@acme.test"}\''
    )
    return "\n".join(lines)


def register(app) -> None:
    """Attach the command group to the app."""
    app.cli.add_command(shop)
