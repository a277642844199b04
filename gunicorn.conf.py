"""gunicorn's default settings file when it runs from a checkout: the packaged ones, shop/gunicorn_conf.py."""

from shop.gunicorn_conf import *  # noqa: F403
