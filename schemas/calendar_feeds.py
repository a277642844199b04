"""Calendar feed bodies and what the calendar feed endpoints return."""

import marshmallow as ma

from schemas.common import PaginationArgsSchema, Schema, Stamp, list_schema
from schemas.webhooks import StrictBoolean
from shop.models.calendar_feeds import CALENDAR_FEED_ID_PATTERN

FEED_ID_EXAMPLE = "calfeed_5f2c0e5b9a1d4c7e8f0a1b2c"


class CalendarFeedCreateSchema(Schema):
    """POST /appointments/calendar_feeds: the shop's feed, or one tech's."""

    tech_id = ma.fields.String(
        allow_none=True,
        validate=ma.validate.Length(min=1, max=40),
        metadata={
            "description": "A tech of the booking settings' roster: the feed has only that tech's "
            "appointments. Absent or null: every appointment of the shop."
        },
    )
    hide_customer_names = StrictBoolean(
        load_default=False,
        metadata={"description": "true: events say `Appointment` instead of the customer's name."},
    )
    description = ma.fields.String(
        allow_none=True,
        validate=ma.validate.Length(max=255),
        metadata={"description": "What the feed is for (shown in the list and the console)."},
    )


class CalendarFeedSchema(Schema):
    """A calendar feed as listed (never its URL)."""

    object = ma.fields.Constant("calendar_feed")
    id = ma.fields.String(metadata={"example": FEED_ID_EXAMPLE, "pattern": CALENDAR_FEED_ID_PATTERN})
    tech_id = ma.fields.String(allow_none=True, metadata={"example": "alex"})
    hide_customer_names = ma.fields.Boolean()
    description = ma.fields.String(allow_none=True)
    created_at = Stamp(metadata={"example": "2026-11-25T12:00:00.000Z"})
    last_fetched_at = Stamp(
        allow_none=True,
        metadata={"description": "When a calendar last fetched the feed (to the minute), or null."},
    )


class CalendarFeedCreatedSchema(CalendarFeedSchema):
    """The create answer: the feed with its secret `url`, shown this once."""

    url = ma.fields.String(
        metadata={
            "example": "https://shop.example.com/calendar/6Fq0Yx3mNw4bR7tK1sV8zA2cD5eG9hJ0kL3nP6qS9uW.ics",
            "description": "The subscription address (ends .ics; anyone holding it reads the feed). "
            "Only in this answer: revoke the feed and make a new one if it is lost or leaked.",
        }
    )


class CalendarFeedDeletedSchema(Schema):
    object = ma.fields.Constant("calendar_feed")
    id = ma.fields.String(metadata={"example": FEED_ID_EXAMPLE})
    deleted = ma.fields.Constant(True)


class CalendarFeedQueryArgsSchema(PaginationArgsSchema):
    """limit and cursor."""


CalendarFeedListSchema = list_schema(CalendarFeedSchema, "CalendarFeedListSchema")
