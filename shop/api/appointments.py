"""The appointment endpoints: list, slots, retrieve, create, patch, cancel, complete, no_show, link_ticket."""

from flask import g
from flask.views import MethodView

from schemas.appointments import (
    AppointmentCancelSchema,
    AppointmentCreateSchema,
    AppointmentListSchema,
    AppointmentQueryArgsSchema,
    AppointmentReminderListSchema,
    AppointmentSchema,
    AppointmentUpdateSchema,
    LinkTicketSchema,
    SlotHoldCreateSchema,
    SlotHoldSchema,
    SlotListSchema,
    SlotQueryArgsSchema,
)
from schemas.common import NoBodySchema, PaginationArgsSchema
from shop.domain import actor as actors
from shop.domain.appointments import appointments as domain
from shop.domain.appointments import holds, reminders
from shop.domain.appointments.slots import list_slots
from shop.platform.smorest import Blueprint

blp = Blueprint("appointments", __name__, description="Appointments and bookable slots")


def _actor():
    return actors.api_key(g.api_key.id)


APPOINTMENT_OR_TICKET_NOT_FOUND = (
    "not_found: no such appointment (param id), or the ticket_id names a ticket that is missing, "
    "hidden, deleted or billing-only (param ticket_id)"
)


@blp.route("/appointments")
class AppointmentViews(MethodView):
    @blp.arguments(AppointmentQueryArgsSchema, location="query")
    @blp.response(200, AppointmentListSchema)
    @blp.scope("appointments.read")
    @blp.doc(operationId="listAppointments")
    def get(self, args):
        """List appointments, latest scheduled_date first."""
        return domain.list_appointments(g.tenant.id, args)

    @blp.arguments(AppointmentCreateSchema)
    @blp.response(201, AppointmentSchema)
    @blp.refuses(
        404,
        "not_found: the ticket_id names no visible ticket (param ticket_id), or the hold_id no hold "
        "of this shop (param hold_id)",
    )
    @blp.refuses(
        409,
        "slot_unavailable: the slot is taken (`details.next_available` says where to go); "
        "hold_expired, hold_released, hold_consumed or hold_mismatch: the hold_id cannot book "
        "this body; or an Idempotency-Key conflict",
    )
    @blp.refuses(422, "create_failed: the booking was refused")
    @blp.scope("appointments.write")
    @blp.doc(operationId="createAppointment")
    def post(self, body):
        """Book an appointment."""
        return domain.create_appointment(g.tenant.id, body, _actor())


# registered before /appointments/<id> so "slots" is never read as an id
@blp.route("/appointments/slots")
@blp.arguments(SlotQueryArgsSchema, location="query")
@blp.response(200, SlotListSchema)
@blp.scope("appointments.read")
@blp.doc(operationId="listAppointmentSlots")
def slots(args):
    """Bookable slots of one day."""
    return list_slots(
        g.tenant.id,
        args["date"],
        args.get("service_id"),
        args.get("tech_id"),
        args["limit"],
        args["cursor"],
        explain=args["explain"],
    )


@blp.route("/appointments/slots/holds")
class SlotHoldViews(MethodView):
    @blp.arguments(SlotHoldCreateSchema)
    @blp.response(201, SlotHoldSchema)
    @blp.refuses(
        409,
        "slot_unavailable: online booking would not offer the span (`details.reasons`, "
        "`details.next_available`); or an Idempotency-Key conflict",
    )
    @blp.scope("appointments.write")
    @blp.doc(operationId="createAppointmentSlotHold")
    def post(self, body):
        """Hold a slot for a few minutes (the booking settings' hold_minutes) while a customer checks out."""
        return holds.create_hold(g.tenant.id, body)


@blp.route("/appointments/slots/holds/<hold_id>")
class SlotHoldByIdViews(MethodView):
    @blp.arguments(NoBodySchema, location="json", required=False)
    @blp.response(200, SlotHoldSchema)
    @blp.refuses(409, "hold_consumed: a booking already used the hold")
    @blp.scope("appointments.write")
    @blp.doc(operationId="releaseAppointmentSlotHold")
    def delete(self, _body, hold_id):
        """Release a hold: its place is free again at once (an expired or released one stays as it is)."""
        return holds.release_hold(g.tenant.id, hold_id)


@blp.route("/appointments/<id>")
class AppointmentByIdViews(MethodView):
    @blp.path_id()
    @blp.response(200, AppointmentSchema)
    @blp.scope("appointments.read")
    @blp.doc(operationId="getAppointment")
    def get(self, id):
        """Retrieve an appointment."""
        return domain.find_appointment(g.tenant.id, id)

    @blp.path_id()
    @blp.arguments(AppointmentUpdateSchema)
    @blp.response(200, AppointmentSchema)
    @blp.refuses(404, APPOINTMENT_OR_TICKET_NOT_FOUND)
    @blp.refuses(
        409, "slot_unavailable, status_reset_required, status_transition_failed or status_reset_failed"
    )
    @blp.refuses(422, "update_failed: the change was refused")
    @blp.scope("appointments.write")
    @blp.doc(operationId="updateAppointment")
    def patch(self, changes, id):
        """Change fields, reschedule, link or unlink a ticket, or move the status."""
        return domain.update_appointment(g.tenant.id, id, changes, _actor())


@blp.route("/appointments/<id>/reminders")
@blp.path_id()
@blp.arguments(PaginationArgsSchema, location="query")
@blp.response(200, AppointmentReminderListSchema)
@blp.scope("appointments.read")
@blp.doc(operationId="listAppointmentReminders")
def list_reminders(args, id):
    """An appointment's reminders and customer messages (kind reminder, confirmation, reschedule,
    cancellation), by scheduled_for then id, with their state and the message each queued."""
    return reminders.list_reminders(g.tenant.id, id, args["limit"], args["cursor"])


@blp.route("/appointments/<id>/cancel", methods=["POST"])
@blp.path_id()
@blp.arguments(AppointmentCancelSchema)
@blp.response(200, AppointmentSchema)
@blp.refuses(422, "cancel_failed: already cancelled")
@blp.scope("appointments.write")
@blp.doc(operationId="cancelAppointment")
def cancel(body, id):
    """Cancel an appointment (once)."""
    return domain.cancel_appointment(g.tenant.id, id, body.get("reason"), _actor())


@blp.route("/appointments/<id>/complete", methods=["POST"])
@blp.path_id()
@blp.arguments(NoBodySchema)
@blp.response(200, AppointmentSchema)
@blp.refuses(409, "status_transition_failed: not from this status; or an Idempotency-Key conflict")
@blp.scope("appointments.write")
@blp.doc(operationId="completeAppointment")
def complete(body, id):
    """Mark an appointment completed."""
    return domain.finish_appointment(g.tenant.id, id, "completed", _actor())


@blp.route("/appointments/<id>/no_show", methods=["POST"])
@blp.path_id()
@blp.arguments(NoBodySchema)
@blp.response(200, AppointmentSchema)
@blp.refuses(409, "status_transition_failed: not from this status; or an Idempotency-Key conflict")
@blp.scope("appointments.write")
@blp.doc(operationId="markAppointmentNoShow")
def no_show(body, id):
    """Mark an appointment as a no-show."""
    return domain.finish_appointment(g.tenant.id, id, "no_show", _actor())


@blp.route("/appointments/<id>/link_ticket", methods=["POST"])
@blp.path_id()
@blp.arguments(LinkTicketSchema)
@blp.response(200, AppointmentSchema)
@blp.refuses(404, APPOINTMENT_OR_TICKET_NOT_FOUND)
@blp.refuses(422, "link_ticket_failed: the link could not be recorded")
@blp.scope("appointments.write")
@blp.doc(operationId="linkAppointmentTicket")
def link_ticket(body, id):
    """Link the appointment to a repair ticket."""
    return domain.link_ticket(g.tenant.id, id, body["ticket_id"])
