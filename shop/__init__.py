"""The Repair-Shop Service: create_app() builds the Flask app on one SQLite file."""

import os

from flask import Flask, g
from flask.sessions import SessionInterface

from shop.config import check_settings, is_postgres, load_config
from shop.queue import setup as set_up_queue


class ShopFlask(Flask):
    """Flask whose dispatch runs each POST through its Idempotency-Key."""

    def dispatch_request(self):
        from shop.platform import auth, idempotency

        view = g.view if "view" in g else auth.view_function()
        return idempotency.run(view, super().dispatch_request, self._to_response)

    def _to_response(self, dispatch):
        """Run a view and turn whatever it returns or raises into a response."""
        try:
            value = dispatch()
        except Exception as error:  # handled by the registered error handlers
            value = self.handle_user_exception(error)
        return self.make_response(value)


class NoSessions(SessionInterface):
    """An API authenticated by keys has no cookie session; skip the work of opening one."""

    def open_session(self, app, request):
        return None

    def save_session(self, app, session, response):
        return None


def _check_schema(app: Flask, new_file: bool) -> None:
    """Create an empty database at the current schema version; refuse one at another version.

    Serving (gunicorn, a script) fails to start with the error naming the migrate command. For a
    `flask` command the app is still built, as `flask shop migrate` needs it: the shop commands but
    migrate then refuse, and so does every request (503), until the database is migrated.
    """
    import click

    from shop import models
    from shop.migrations import SchemaOutOfDate
    from shop.platform.errors import error_response

    try:
        models.create_tables()
        # made by this start of a `flask` command: a command that needs the shop's data refuses it
        if new_file and click.get_current_context(silent=True) is not None:
            app.extensions["shop.new_database"] = app.config["DATABASE"]
    except SchemaOutOfDate as error:
        if click.get_current_context(silent=True) is None:
            raise
        problem = app.extensions["shop.schema_problem"] = str(error)
        app.before_request(lambda: error_response(503, "schema_out_of_date", problem))


def _check_secret_key(app: Flask) -> None:
    """Refuse a secret key that does not open the stored secrets (a restore without its key file).

    Serving fails to start with the message; a `flask` command still gets its app (rotate-secret-key
    reports the same problem, migrate and the rest do not need the key), but `worker` and `demo`
    refuse (shop.cli).
    """
    import click

    from shop.domain.secret_keys import SecretKeyMismatch, start_up_problem

    if "shop.schema_problem" in app.extensions:
        return  # the tables may not be what this release reads: migrate first
    problem = start_up_problem(app.config)
    if problem is None:
        return
    if click.get_current_context(silent=True) is None:
        raise SecretKeyMismatch(problem)
    app.extensions["shop.secret_problem"] = problem


def create_app(test_config: dict | None = None) -> Flask:
    """Build the app: config, database, API and blueprints, request pipeline, CLI."""
    config = load_config(test_config)
    check_settings(config)  # a bad setting stops the start with its name, before anything opens
    app = ShopFlask(
        __name__, instance_path=config.root_path, instance_relative_config=True, static_folder=None
    )  # every path is under /api/v1: no /static route
    app.config.update(config)
    app.config.update(API_TITLE="Repair-Shop Service API", API_VERSION="v1", OPENAPI_VERSION="3.0.3")
    app.json.sort_keys = False
    app.session_interface = NoSessions()
    # a doubled slash is an unknown route (the JSON 404), not werkzeug's HTML 308 to the merged path
    app.url_map.merge_slashes = False
    database = app.config["DATABASE"]
    new_file = not is_postgres(database) and not os.path.exists(database)  # before anything opens it
    set_up_queue(app.config)  # the database and the job queue, on the one file

    from shop import cli, console, feeds, inbound, portal
    from shop.api import register_blueprints
    from shop.platform import logs, metrics, pipeline, proxies, request_log
    from shop.platform.smorest import Api

    _check_schema(app, new_file)
    _check_secret_key(app)
    api = Api(app)
    app.extensions["shop.api"] = api
    api.spec.components.security_scheme("bearerAuth", {"type": "http", "scheme": "bearer"})
    register_blueprints(api)
    request_log.install(app)  # first: its hook runs after every other one
    console.register(app)
    feeds.register(app)  # GET /calendar/<token>.ics
    portal.register(app)
    inbound.register(app)
    pipeline.install(app)
    proxies.install(app)
    logs.configure(app.config)
    metrics.install(app)
    cli.register(app)
    return app
