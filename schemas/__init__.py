"""marshmallow schemas, a module per resource, plus common.py."""
