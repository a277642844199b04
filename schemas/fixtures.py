"""The fixture file format of DESIGN.md: unknown keys are errors, ids are kept."""

import zoneinfo

import marshmallow as ma

from schemas.common import Schema
from schemas.notifications import NotificationFixture
from shop.models.tenancy import BILLING_STATUSES, PLANS

Str = ma.fields.String
Bool = ma.fields.Boolean
AwareDateTime = ma.fields.DateTime  # ISO 8601; stored as naive UTC by the loader


def _timezone(value: str) -> None:
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ma.ValidationError(f"Unknown timezone {value!r}.") from None


class UserFixture(Schema):
    id = ma.fields.Integer(strict=True)
    email = Str(required=True, validate=ma.validate.Email())
    name = Str(allow_none=True)


class ApiKeyFixture(Schema):
    id = Str(validate=ma.validate.Length(min=1, max=64))
    token = Str(validate=ma.validate.Length(min=8, max=200))
    mode = Str(load_default="test", validate=ma.validate.OneOf(("live", "test")))
    scopes = ma.fields.List(Str(), load_default=list)
    revoked = Bool(load_default=False)
    expires_at = AwareDateTime(allow_none=True, load_default=None)


class CustomerFixture(Schema):
    id = ma.fields.Integer(strict=True)
    display_name = Str(allow_none=True)
    email = Str(allow_none=True)
    phone = Str(allow_none=True)
    sms_consent = Bool(load_default=False)
    created_at = AwareDateTime()


class TicketFixture(Schema):
    id = Str(validate=ma.validate.Regexp(r"^[1-9][0-9]{0,9}$", error="Ticket ids are digit strings."))
    customer_id = ma.fields.Integer(strict=True, allow_none=True)
    subject = Str(allow_none=True)
    status = Str(load_default="New")
    hidden = Bool(load_default=False)
    deleted = Bool(load_default=False)
    billing_only = Bool(load_default=False)
    created_at = AwareDateTime()


class TenantFixture(Schema):
    id = Str(required=True, validate=ma.validate.Regexp(r"^[a-z0-9][a-z0-9_-]{0,63}$"))
    name = Str(required=True)
    timezone = Str(load_default="UTC", validate=_timezone)
    plan = Str(load_default="pro", validate=ma.validate.OneOf(PLANS))
    billing_status = Str(load_default="active", validate=ma.validate.OneOf(BILLING_STATUSES))
    current_period_end = AwareDateTime(allow_none=True)
    suspended = Bool(load_default=False)
    users = ma.fields.List(ma.fields.Nested(UserFixture), load_default=list)
    api_keys = ma.fields.List(ma.fields.Nested(ApiKeyFixture), load_default=list)
    customers = ma.fields.List(ma.fields.Nested(CustomerFixture), load_default=list)
    tickets = ma.fields.List(ma.fields.Nested(TicketFixture), load_default=list)
    notifications = ma.fields.List(ma.fields.Nested(NotificationFixture), load_default=list)
    send_rate_per_minute = ma.fields.Integer(strict=True, allow_none=True,
                                             validate=ma.validate.Range(min=1))
    booking = ma.fields.Dict(allow_none=True)


class FixtureFile(Schema):
    tenants = ma.fields.List(ma.fields.Nested(TenantFixture), required=True)
