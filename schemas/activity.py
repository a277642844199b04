"""The `--data` of each `flask shop activity` kind: unknown keys and wrong types are refused."""

import marshmallow as ma

from schemas.common import INT32_MAX, Schema
from shop.models.billing import PAYMENT_METHODS
from shop.models.leads import LEAD_STATUSES

Str = ma.fields.String
Length = ma.validate.Length
ACTORS = Length(min=1, max=320)
REASON = Length(max=500)


class RecordId(ma.fields.Field):
    """A record id given as a JSON integer or a digit string ("1001"), read as an int."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 10:
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= INT32_MAX:
            raise ma.ValidationError(
                f"Must be a record id: a positive integer or digit string up to {INT32_MAX}."
            )
        return value


class StrictBool(ma.fields.Boolean):
    """JSON true or false, nothing else."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise ma.ValidationError("Must be true or false.")
        return value


class Amount(ma.fields.Integer):
    """A sum in the currency's minor unit (cents): a JSON integer from 0."""

    def __init__(self, minimum: int = 0, **kwargs):
        super().__init__(strict=True, validate=ma.validate.Range(min=minimum, max=INT32_MAX), **kwargs)

    def _validated(self, value):
        if isinstance(value, bool):
            raise self.make_error("invalid")
        return super()._validated(value)


def _currency(value: str) -> None:
    if len(value) != 3 or not value.isascii() or not value.isalpha() or not value.islower():
        raise ma.ValidationError("Must be a lower-case ISO 4217 code such as usd.")


def Email(**kwargs):  # noqa: N802 (reads as a field type)
    return Str(allow_none=True, validate=[Length(max=320), ma.validate.Email()], **kwargs)


class Audited(Schema):
    """What the shop's browser or portal records about the person acting; it never reaches an event."""

    ip_address = Str(allow_none=True, validate=Length(max=64))
    user_agent = Str(allow_none=True, validate=Length(max=1000))


class CustomerCreated(Schema):
    id = RecordId()
    display_name = Str(allow_none=True, validate=Length(max=255))
    email = Email()
    phone = Str(allow_none=True, validate=Length(max=50))
    sms_consent = StrictBool(load_default=False)


class CustomerUpdated(Schema):
    id = RecordId(required=True)
    display_name = Str(allow_none=True, validate=Length(max=255))
    email = Email()
    phone = Str(allow_none=True, validate=Length(max=50))
    sms_consent = StrictBool()


class TicketCreated(Schema):
    id = RecordId()
    customer_id = RecordId(allow_none=True)
    subject = Str(allow_none=True, validate=Length(max=255))
    status = Str(load_default="New", validate=Length(min=1, max=64))


class TicketUpdated(Schema):
    id = RecordId(required=True)
    customer_id = RecordId(allow_none=True)
    subject = Str(allow_none=True, validate=Length(max=255))


class TicketStatusChanged(Audited):
    id = RecordId(required=True)
    status = Str(required=True, validate=Length(min=1, max=64))
    changed_by = Str(load_default="system", validate=ACTORS)
    change_source = Str(load_default="dashboard", validate=Length(min=1, max=64))


class InvoiceCreated(Schema):
    id = RecordId()
    ticket_id = RecordId(allow_none=True)
    customer_id = RecordId(allow_none=True)
    number = Str(allow_none=True, validate=Length(max=64))
    currency = Str(load_default="usd", validate=_currency)
    total = Amount(load_default=0)


class InvoiceSent(Schema):
    id = RecordId(required=True)


class InvoicePaid(Schema):
    id = RecordId(required=True)
    method = Str(load_default="other", validate=ma.validate.OneOf(PAYMENT_METHODS))


class InvoiceVoided(Schema):
    id = RecordId(required=True)
    reason = Str(allow_none=True, validate=REASON)


class InvoiceRefunded(Schema):
    id = RecordId(required=True)
    amount = Amount(minimum=1)
    reason = Str(allow_none=True, validate=REASON)


class EstimateSent(Schema):
    id = RecordId()
    ticket_id = RecordId()
    number = Str(allow_none=True, validate=Length(max=64))
    currency = Str(validate=_currency)
    total = Amount()


class EstimateDecision(Audited):
    id = RecordId(required=True)
    ticket_id = RecordId()
    signature_image = Str(allow_none=True, validate=Length(max=1_000_000))


class EstimateApproved(EstimateDecision):
    approved_by = Str(load_default="customer", validate=ACTORS)


class EstimateDeclined(EstimateDecision):
    declined_by = Str(load_default="customer", validate=ACTORS)
    decline_reason = Str(allow_none=True, load_default=None, validate=REASON)


class PaymentRecorded(Schema):
    id = RecordId()
    invoice_id = RecordId(required=True)
    amount = Amount(minimum=1, required=True)
    method = Str(load_default="other", validate=ma.validate.OneOf(PAYMENT_METHODS))


class PaymentRefunded(Schema):
    id = RecordId()
    payment_id = RecordId(required=True)
    amount = Amount(minimum=1)
    reason = Str(allow_none=True, validate=REASON)


class LeadCreated(Schema):
    id = RecordId()
    name = Str(allow_none=True, validate=Length(max=255))
    email = Email()
    phone = Str(allow_none=True, validate=Length(max=50))
    source = Str(allow_none=True, validate=Length(max=64))


class LeadUpdated(Schema):
    id = RecordId(required=True)
    name = Str(allow_none=True, validate=Length(max=255))
    email = Email()
    phone = Str(allow_none=True, validate=Length(max=50))
    source = Str(allow_none=True, validate=Length(max=64))
    status = Str(validate=ma.validate.OneOf([s for s in LEAD_STATUSES if s != "converted"]))


class LeadConverted(Schema):
    id = RecordId(required=True)
    customer_id = RecordId()
    ticket_id = RecordId()
    subject = Str(allow_none=True, validate=Length(max=255))
