"""Fixtures of the domain tests."""

import pytest

from tests.helpers import tenant_fixture
from tests.helpers.records import ACME, GLOBEX


@pytest.fixture
def records(load):
    """Two tenants with a customer, ticket, invoice, estimate, payment and lead each (acme has more)."""
    load(tenant_fixture("acme", **ACME), tenant_fixture("globex", **GLOBEX))
