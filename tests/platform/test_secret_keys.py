"""The instance secret key: start-up refusal on secrets it cannot open; rotate-secret-key, bad input."""

import json
import subprocess
import sys

import pytest

from shop.domain.secret_keys import SecretKeyMismatch
from shop.models import IdempotencyRecord, WebhookSubscription
from shop.platform import keyring, secretbox
from tests.helpers.processes import ROOT
from tests.helpers.webhooks import create as create_webhook
from tests.helpers.webhooks import rotate as rotate_webhook

OTHER_KEY = "a-key-from-some-other-instance-0123456789"


@pytest.fixture
def subscribed(client, acme):
    """A subscription (its secret encrypted under the suite's key) and a saved secret response."""
    sub = create_webhook(client, acme).get_json()
    rotate_webhook(client, acme, sub["id"])
    return sub


def test_serving_refuses_a_key_that_does_not_open_the_stored_secrets(app_with, app, subscribed):
    with pytest.raises(SecretKeyMismatch) as refused:
        app_with(SECRET_KEY=OTHER_KEY)
    message = str(refused.value)
    assert "cannot be decrypted with the key set by SHOP_SECRET_KEY" in message
    assert "webhook signing secrets" in message and "restore the key file" in message
    assert OTHER_KEY not in message


def test_the_refusal_names_the_key_file(app_with, app, subscribed, tmp_path, monkeypatch):
    monkeypatch.setenv("SHOP_INSTANCE_PATH", str(tmp_path))
    (tmp_path / "secret_key").write_text(OTHER_KEY + "\n")  # a restore that brought the wrong key
    with pytest.raises(SecretKeyMismatch, match=f"the key file {tmp_path / 'secret_key'} "):
        app_with(SECRET_KEY=None)


def test_a_lost_key_file_is_not_replaced_silently(app_with, app, subscribed, tmp_path, monkeypatch):
    monkeypatch.setenv("SHOP_INSTANCE_PATH", str(tmp_path))  # no key file: one is generated
    with pytest.raises(SecretKeyMismatch, match="cannot be decrypted with the key file"):
        app_with(SECRET_KEY=None)


def test_an_old_saved_response_under_another_key_is_found_too(app_with, app, acme, client):
    IdempotencyRecord.create(
        api_key_id="key_acme",
        key="k-1",
        fingerprint="f",
        state="completed",
        locked_until="2026-01-01T00:00:00Z",
        body=secretbox.encrypt('{"signing_secret": "whsec_x"}', (OTHER_KEY,)),
        created_at="2026-01-01T00:00:00Z",
    )
    with pytest.raises(SecretKeyMismatch, match="idempotent responses"):
        app_with()


def test_the_previous_key_as_a_fallback_starts_and_signs(app_with, app, subscribed):
    started = app_with(SECRET_KEY=OTHER_KEY, SECRET_KEY_FALLBACKS=app.config["SECRET_KEY"])
    with started.app_context():
        from shop.domain.webhooks.subscriptions import signing_secrets

        current, previous = signing_secrets(WebhookSubscription.get())
    assert previous == subscribed["signing_secret"] and current.startswith("whsec_")


def test_an_empty_database_starts_with_any_key(app_with, app):
    assert app_with(SECRET_KEY=OTHER_KEY).extensions.get("shop.secret_problem") is None


def test_worker_and_demo_commands_refuse_while_others_run(app_with, app, subscribed):
    from click.testing import CliRunner
    from flask.cli import ScriptInfo

    from shop.cli import shop

    info = ScriptInfo(create_app=lambda: app_with(SECRET_KEY=OTHER_KEY))
    for command in (["worker"], ["demo", "--port", "1"]):
        result = CliRunner().invoke(shop, command, obj=info)
        assert result.exit_code == 1 and "cannot be decrypted" in result.output, command
    listed = CliRunner().invoke(shop, ["key", "list", "--tenant", "acme"], obj=info)
    assert listed.exit_code == 0, listed.output


def flask_shop(*args, env: dict) -> subprocess.CompletedProcess:
    """`flask --app app shop ...` in a process of its own, as an operator runs it."""
    return subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", "shop", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def key_file_env(app, tmp_path):
    """The environment of an instance whose key lives in its key file (no SHOP_SECRET_KEY)."""
    import os

    (tmp_path / "secret_key").write_text(app.config["SECRET_KEY"] + "\n")
    env = {k: v for k, v in os.environ.items() if k != "SHOP_SECRET_KEY"}
    return {**env, "SHOP_INSTANCE_PATH": str(tmp_path), "SHOP_DATABASE": app.config["DATABASE"]}


def test_rotation_re_encrypts_everything_and_retirement_drops_the_old_key(
    app, subscribed, key_file_env, tmp_path
):
    old = app.config["SECRET_KEY"]
    rotated = flask_shop("rotate-secret-key", env=key_file_env)
    assert rotated.returncode == 0, rotated.stderr
    summary = json.loads(rotated.stdout)
    new = (tmp_path / "secret_key").read_text().strip()
    assert new != old and len(new) >= 48
    assert (tmp_path / "secret_key.previous").read_text().split() == [old]
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0
    assert summary["key_file"] == str(tmp_path / "secret_key")
    assert summary["re_encrypted"]["webhook_signing_secrets"] == 1
    assert summary["re_encrypted"]["previous_webhook_signing_secrets"] == 1
    assert summary["re_encrypted"]["idempotent_responses"] == 1  # the saved reply of the rotation
    assert summary["stored_secrets"] == {"current": 3, "fallback": 0, "unreadable": 0}
    sub = WebhookSubscription.get()
    assert secretbox.decrypt(sub.secret_encrypted, (new,)).startswith("whsec_")
    with pytest.raises(ValueError):
        secretbox.decrypt(sub.secret_encrypted, (old,))
    assert new not in rotated.stdout + rotated.stderr  # the key file holds it; nothing prints it

    again = flask_shop("rotate-secret-key", env=key_file_env)
    assert (
        again.returncode == 1 and "retire it first with `rotate-secret-key --retire-previous`" in again.stderr
    )

    retired = flask_shop("rotate-secret-key", "--retire-previous", env=key_file_env)
    assert retired.returncode == 0, retired.stderr
    assert not (tmp_path / "secret_key.previous").exists()
    assert json.loads(retired.stdout)["stored_secrets"] == {"current": 3, "fallback": 0, "unreadable": 0}


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["--retire-previous"], 1, "there is no previous secret key to retire"),
        (["--new-key", "x"], 2, "No such option '--new-key'"),
        (["extra-argument"], 2, "Got unexpected extra argument"),
        (["--retire-previous=yes"], 2, "Option '--retire-previous' does not take a value"),
    ],
    ids=["retiring with nothing to retire", "an unknown option", "an argument", "a value for the flag"],
)
def test_bad_input_of_the_command_changes_nothing(app, subscribed, runner, args, code, says):
    before = [(s.id, s.secret_encrypted) for s in WebhookSubscription.select()]
    result = runner.invoke(args=["shop", "rotate-secret-key", *args])
    assert result.exit_code == code and says in result.output
    assert [(s.id, s.secret_encrypted) for s in WebhookSubscription.select()] == before


def test_rotation_refuses_when_stored_secrets_do_not_open(app, subscribed, key_file_env, tmp_path):
    (tmp_path / "secret_key").write_text(OTHER_KEY + "\n")
    before = WebhookSubscription.get().secret_encrypted
    result = flask_shop("rotate-secret-key", env=key_file_env)
    assert result.returncode == 1
    assert "cannot be decrypted with the key file" in result.stderr and "nothing was changed" in result.stderr
    assert (tmp_path / "secret_key").read_text().strip() == OTHER_KEY
    assert not (tmp_path / "secret_key.previous").exists()
    assert WebhookSubscription.get().secret_encrypted == before


def test_with_shop_secret_key_the_command_prints_a_new_key_then_re_encrypts(
    app, subscribed, runner, monkeypatch
):
    first = runner.invoke(args=["shop", "rotate-secret-key"])
    assert first.exit_code == 0, first.output
    proposal = json.loads(first.output)
    new = proposal["new_secret_key"]
    assert len(new) >= 48 and "SHOP_SECRET_KEY_FALLBACKS" in proposal["next"][0]
    assert secretbox.under_current_key(
        WebhookSubscription.get().secret_encrypted, (app.config["SECRET_KEY"],)
    )

    old = app.config["SECRET_KEY"]
    monkeypatch.setitem(app.config, "SECRET_KEY", new)  # step 1: the operator set both and restarted
    monkeypatch.setitem(app.config, "SECRET_KEY_FALLBACKS", old)
    second = runner.invoke(args=["shop", "rotate-secret-key"])
    assert second.exit_code == 0, second.output
    assert json.loads(second.output)["stored_secrets"] == {"current": 3, "fallback": 0, "unreadable": 0}
    assert secretbox.under_current_key(WebhookSubscription.get().secret_encrypted, (new,))
    retired = runner.invoke(args=["shop", "rotate-secret-key", "--retire-previous"])
    assert retired.exit_code == 0 and "unset SHOP_SECRET_KEY_FALLBACKS" in retired.output


def test_cursors_signed_by_the_previous_key_work_until_it_is_retired(app, client, acme, monkeypatch):
    for n in range(3):
        create_webhook(client, acme, url=f"https://hooks.example.com/{n}")
    first = client.get("/api/v1/webhooks?limit=1", headers=acme).get_json()
    cursor = first["next_cursor"]
    old = app.config["SECRET_KEY"]
    monkeypatch.setitem(app.config, "SECRET_KEY", OTHER_KEY)
    monkeypatch.setitem(app.config, "SECRET_KEY_FALLBACKS", old)
    assert client.get(f"/api/v1/webhooks?limit=1&cursor={cursor}", headers=acme).status_code == 200
    monkeypatch.setitem(app.config, "SECRET_KEY_FALLBACKS", "")
    answer = client.get(f"/api/v1/webhooks?limit=1&cursor={cursor}", headers=acme)
    assert answer.status_code == 400 and answer.get_json()["error"]["code"] == "invalid_cursor"


def test_a_process_re_reads_the_key_files_when_they_change(tmp_path, monkeypatch):
    key_file = tmp_path / "secret_key"
    key_file.write_text("first-key-0123456789\n")
    config = {"SECRET_KEY": "first-key-0123456789", "SECRET_KEY_FILE": str(key_file)}
    keyring.forget()
    assert keyring.ring(config).keys == ("first-key-0123456789",)
    (tmp_path / "secret_key.previous").write_text("first-key-0123456789\n")
    key_file.write_text("second-key-0123456789\n")
    monkeypatch.setattr(keyring, "REFRESH_SECONDS", 0.0)
    assert keyring.ring(config).keys == ("second-key-0123456789", "first-key-0123456789")
