"""The `flask shop ...` commands: init-db, load, demo, worker, key create/revoke, activity."""

import json
import os
import signal
import subprocess
import sys
from importlib import resources

import click
from flask import current_app
from flask.cli import AppGroup
from werkzeug.serving import run_simple

from shop import models
from shop.domain.activity import run_activity
from shop.domain.fixtures import FixtureError, load_fixture
from shop.domain.keys import MODES, SCOPES, create_key, revoke_key
from shop.models import Tenant
from shop.platform.errors import ApiError

shop = AppGroup("shop", help="Repair-Shop Service commands.")
key = AppGroup("key", help="Create and revoke API keys.")
shop.add_command(key)

DEMO_TENANT = "acme"


def _print_json(value) -> None:
    click.echo(json.dumps(value, indent=2))


@shop.command("init-db")
def init_db() -> None:
    """Create every table (idempotent)."""
    models.create_tables()
    _print_json({"database": current_app.config["DATABASE"], "initialized": True})


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
@click.option("--mode", type=click.Choice(MODES), default="test", show_default=True)
def key_create(tenant_id: str, scopes: tuple, mode: str) -> None:
    """Create an API key and print its token (shown this once)."""
    try:
        created, token = create_key(tenant_id, list(scopes), mode=mode)
    except ApiError as error:
        raise click.ClickException(error.message) from None
    _print_json({"id": created.id, "tenant": tenant_id, "mode": mode, "scopes": created.scopes,
                 "token": token})


@key.command("revoke")
@click.argument("key_id")
def key_revoke(key_id: str) -> None:
    """Revoke an API key."""
    try:
        revoked = revoke_key(key_id)
    except ApiError as error:
        raise click.ClickException(error.message) from None
    _print_json({"id": revoked.id, "revoked": True})


@shop.command("activity")
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
def worker(workers: int) -> None:
    """Run the Huey consumer (the same as `huey_consumer tasks.huey`)."""
    # the consumer's entry is the tasks package, which the app never imports: it runs in our place
    env = dict(os.environ, SHOP_DATABASE=current_app.config["DATABASE"], SHOP_CONSUMER_WORKERS=str(workers))
    os.execve(sys.executable, [sys.executable, "-m", "tasks"], env)


@shop.command("demo")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True)
def demo(host: str, port: int) -> None:
    """Initialise the database, load the demo shop, then serve the API and a consumer."""
    models.create_tables()
    if Tenant.get_or_none(Tenant.id == DEMO_TENANT) is None:
        document = json.loads(resources.files("shop").joinpath("demo/demo_shop.json").read_text())
        load_fixture(document)
    _print_demo_help(host, port)
    env = dict(os.environ, SHOP_DATABASE=current_app.config["DATABASE"])
    consumer = subprocess.Popen([sys.executable, "-m", "tasks"], env=env)
    # a plain kill of the demo must take its consumer along, as Ctrl-C does
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        run_simple(host, port, current_app._get_current_object(), threaded=True)
    finally:
        consumer.terminate()
        consumer.wait(timeout=10)


DEMO_READS = ("/me", "/customers", "/messages/conversations", "/messages/conversations/10/messages",
              "/appointments", "/appointments/slots?date=2026-12-01", "/notifications",
              "/notifications/count", "/webhooks", "/webhooks/event_types", "/usage?by_key=true")


def _print_demo_help(host: str, port: int) -> None:
    base = f"http://{host}:{port}/api/v1"
    auth = "-H 'Authorization: Bearer sk_test_acme_demo_0001'"
    json_type = "-H 'Content-Type: application/json'"
    click.echo(f"Demo shop loaded into {current_app.config['DATABASE']}")
    click.echo("API key (all scopes): sk_test_acme_demo_0001")
    click.echo("Read:")
    click.echo(f"  curl -s {base}/health")
    for path in DEMO_READS:
        click.echo(f"  curl -s {auth} '{base}{path}'")
    click.echo("Write:")
    click.echo(f"  curl -s {auth} {json_type} -d '{{\"ticket_id\": \"1001\", \"channel\": \"sms\", "
               f"\"content\": \"Ready for pickup\", \"to\": \"+15555550100\"}}' {base}/messages/send")
    click.echo(f"  curl -s {auth} {json_type} -d '{{\"customer_name\": \"Ann Lee\", \"customer_phone\": "
               f"\"+15555550100\", \"scheduled_date\": \"2026-12-01\", \"scheduled_time\": \"10:00\"}}' "
               f"{base}/appointments")
    click.echo(f"  curl -s {auth} -X POST {base}/notifications/50/read")
    click.echo("Webhooks to your own public HTTPS endpoint (the signing secret is shown once):")
    click.echo(f"  curl -s {auth} {json_type} "
               f"-d '{{\"url\": \"https://YOUR-HOST/hook\", \"events\": [\"*\"]}}' {base}/webhooks")
    click.echo(f"  curl -s {auth} -X POST {base}/webhooks/WHSUB_ID/ping")
    click.echo("In-app activity (emits observed events to webhook subscribers), in another shell:")
    click.echo("  flask --app app shop activity ticket.status_changed --tenant acme --data "
               "'{\"id\": \"1001\", \"status\": \"Ready\", \"changed_by\": \"sam@acme.test\"}'")


def register(app) -> None:
    """Attach the command group to the app."""
    app.cli.add_command(shop)
