"""What the front-office pages (board, ticket panel, customers, leads) read and how they show it:
times in the shop's time zone, the choices a form offers, a ticket's timeline, and a refused form's
message kept beside its field. The changes themselves are the records' domain functions."""

from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from flask import g

from shop import clock
from shop.domain import actor
from shop.domain.records.tickets import ticket_statuses, visible_tickets
from shop.models import Appointment, Customer, Estimate, Invoice, Message, Ticket, User
from shop.platform.errors import ApiError

BOARD_LIMIT = 500  # cards on the board (a small shop's open work; the oldest beyond it are not shown)
CHOICE_LIMIT = 500  # customers offered in a ticket form's list


def acting(source: str):
    """Who causes a change from this page: the signed-in teammate with the page's change source, or
    the API key a console session was opened with (its own `api` source)."""
    mate = g.get("teammate")
    return actor.teammate(mate.email, source) if mate else g.actor


def shop_zone() -> ZoneInfo:
    try:
        return ZoneInfo(g.tenant.timezone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def human(moment: datetime | None) -> str:
    """A stored UTC time as the shop reads it: `Tue 1 Dec 2026, 17:00`."""
    if moment is None:
        return ""
    local = moment.replace(tzinfo=UTC).astimezone(shop_zone())
    return f"{local:%a} {local.day} {local:%b %Y, %H:%M}"


def local_input(moment: datetime | None) -> str:
    """A stored UTC time as a datetime-local input's value in the shop's zone."""
    if moment is None:
        return ""
    return moment.replace(tzinfo=UTC).astimezone(shop_zone()).strftime("%Y-%m-%dT%H:%M")


def parse_local(value: str | None, param: str = "due_at") -> str | None:
    """A datetime-local value (the shop's wall clock) as the ISO UTC time the API's schema reads."""
    if not value:
        return None
    try:
        local = datetime.strptime(value, "%Y-%m-%dT%H:%M")
    except ValueError:
        raise ApiError(
            400, "invalid_field", f"{param}: a date and time like 2026-12-01T17:00.", param=param
        ) from None
    if not 2000 <= local.year <= 2100:
        raise ApiError(400, "invalid_field", f"{param}: a year from 2000 to 2100.", param=param)
    return clock.isoformat(local.replace(tzinfo=shop_zone()).astimezone(UTC).replace(tzinfo=None))


def refused(error: ApiError) -> dict:
    """A 400 refusal as {field: message} for the form to show beside the field; others go on up."""
    if error.status != 400:
        raise error
    return {error.param or "form": error.message}


@dataclass
class Card:
    ticket: Ticket
    customer: str
    due: str


def board(tenant_id: str) -> list[tuple[str, list[Card]]]:
    """The shop's statuses in order, each with its visible tickets (oldest first); a status a ticket
    has that the shop no longer lists gets a column after them, so no ticket is hidden."""
    statuses = ticket_statuses(tenant_id)
    columns: dict[str, list[Card]] = {status: [] for status in statuses}
    query = visible_tickets(tenant_id).order_by(Ticket.created_at.desc(), Ticket.id.desc()).limit(BOARD_LIMIT)
    shown = list(query)[::-1]
    wanted = {t.customer_id for t in shown if t.customer_id}
    names = {}
    if wanted:
        named = Customer.for_tenant(tenant_id).where(Customer.id.in_(wanted))
        names = {c.id: c.display_name or "" for c in named}
    for ticket in shown:
        card = Card(ticket, names.get(ticket.customer_id, ""), human(ticket.due_at))
        columns.setdefault(ticket.status, []).append(card)
    return list(columns.items())


def customers(tenant_id: str, search: str | None = None, limit: int = CHOICE_LIMIT) -> list[Customer]:
    """The tenant's customers by name, matching the search in name, email or phone when given."""
    query = Customer.for_tenant(tenant_id)
    if search:
        query = query.where(
            Customer.display_name.contains(search)
            | Customer.email.contains(search)
            | Customer.phone.contains(search)
        )
    return list(query.order_by(Customer.display_name, Customer.id).limit(limit))


def teammates(tenant_id: str) -> list[User]:
    return list(User.for_tenant(tenant_id).order_by(User.email))


@dataclass
class Entry:
    at: datetime | None
    kind: str
    title: str
    detail: str
    when: str = ""


def timeline(tenant_id: str, ticket: Ticket) -> list[Entry]:
    """The ticket's messages, appointments, estimates and invoices, newest first."""
    entries = []
    for m in Message.for_tenant(tenant_id).where(Message.sent_from_ticket_id == str(ticket.id)).limit(200):
        way = "to" if m.direction == "outbound" else "from"
        title = f"{m.channel.upper()} {way} {m.recipient if way == 'to' else m.sender}"
        entries.append(Entry(m.created_at, "message", title, m.body or "", ""))
    for a in Appointment.for_tenant(tenant_id).where(Appointment.ticket_id == str(ticket.id)).limit(200):
        title = f"Appointment {a.scheduled_date} {a.scheduled_time} ({a.status})"
        entries.append(Entry(a.created_at, "appointment", title, a.service_description or ""))
    for e in Estimate.for_tenant(tenant_id).where(Estimate.ticket == ticket.id).limit(200):
        entries.append(Entry(e.created_at, "estimate", f"Estimate {e.number or e.id} ({e.status})", money(e)))
    for i in Invoice.for_tenant(tenant_id).where(Invoice.ticket == ticket.id).limit(200):
        entries.append(Entry(i.created_at, "invoice", f"Invoice {i.number or i.id} ({i.status})", money(i)))
    for entry in entries:
        entry.when = human(entry.at)
    return sorted(entries, key=lambda e: e.at or datetime.min, reverse=True)


def money(record) -> str:
    return f"{record.total / 100:.2f} {record.currency.upper()}"
