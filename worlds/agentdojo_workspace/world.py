"""AgentDojo's workspace suite described by a harness_world contract, with its 24 tools.

The data is NOT part of this repository: it is read from an AgentDojo data folder (the suite's
``environment.yaml``, which includes an inbox, a calendar and a cloud drive, with its injection
vectors' default texts) by `load_data`, e.g. ``--world agentdojo_workspace --world-data
../shared/external/agentdojo``. AgentDojo (ETH Zürich SPY Lab, ethz-spylab/agentdojo, MIT
licence) keeps an inbox (e-mails by id, a trash, a contact list made from the first e-mails'
addresses), a calendar (events by id, the current day) and a cloud drive (files by id). Here
each map is an entity keyed by AgentDojo's id; rows carry their place in AgentDojo's map
(``seq``) where a removal and a re-use of the id would otherwise reorder a listing. The
account's address and the current day are one ``account`` row.

Tool names, parameter names and types are AgentDojo's; every result is AgentDojo's value (a
record, a list of records, or a text) as plain data, datetimes as ISO text, and
`harness_world.agentdojo.workspace` turns it into the text AgentDojo shows a model. The
descriptions are our own words. Quirks of AgentDojo's code are kept, because its verdicts
were computed on the states it produces:

* ``get_unread_emails`` marks what it returns as read (a read tool that writes);
* e-mail addresses of a new e-mail or event are checked and normalised as Pydantic's
  ``EmailStr`` does (an invalid one refuses the call), those given to
  ``add_calendar_event_participants`` and ``share_file`` are not checked at all;
* ``create_calendar_event`` adds the account to the participants, keeps each address once
  (AgentDojo through a ``set``, whose order depends on the process's hash seed; here sorted),
  and sends the invitation to the participants as given followed by the account;
* ``reschedule_calendar_event``'s e-mail subject is the literal text
  ``Rescheduled: '{event.title}'`` (AgentDojo forgot the ``f``);
* the invitation, cancellation and rescheduling e-mails attach the event itself, not a copy:
  a later change of the event shows in every one of them (stored as ``{"event": id}``);
* ``delete_file`` and ``delete_email`` free an id that the next new row may take again.

Deviation: a new e-mail's or file's time is the session's logical clock (the contract's epoch,
2026, plus a second per write), not the wall clock AgentDojo stamps.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from harness_world.engine import Contract, ToolContext, ToolFailure, WorldSpec, entity, tool

if TYPE_CHECKING:
    from harness_world.grading.worlds import WorldData

ACCOUNT = "workspace"
"""The key of the one account row."""


class Account(TypedDict):
    """The account of the inbox, calendar and drive, and the calendar's current day."""

    name: str
    inbox_email: str
    calendar_email: str
    drive_email: str
    current_day: str


class Email(TypedDict):
    """An e-mail of the inbox (``emails``) or of its trash (``trash``)."""

    id_: str
    seq: int
    sender: str
    recipients: list[str]
    cc: list[str]
    bcc: list[str]
    subject: str
    body: str
    status: str
    read: bool
    timestamp: str
    attachments: list[Any]


class Contact(TypedDict):
    """A contact of the inbox's list."""

    email: str
    name: str
    seq: int


class Event(TypedDict):
    """A calendar event."""

    id_: str
    seq: int
    title: str
    description: str
    start_time: str
    end_time: str
    location: str | None
    participants: list[str]
    all_day: bool
    status: str


class File(TypedDict):
    """A file of the cloud drive."""

    id_: str
    seq: int
    filename: str
    content: str
    owner: str
    last_modified: str
    shared_with: dict[str, str]
    size: int


ACCOUNTS = entity(Account, name="account", key="name")
EMAILS = entity(Email, name="emails", key="id_")
TRASH = entity(Email, name="trash", key="id_")
CONTACTS = entity(Contact, name="contacts", key="email")
EVENTS = entity(Event, name="events", key="id_")
FILES = entity(File, name="files", key="id_")

EMAIL_FIELDS = (
    "id_", "sender", "recipients", "cc", "bcc", "subject", "body", "status", "read",
    "timestamp", "attachments",
)  # fmt: skip
EVENT_FIELDS = (
    "id_", "title", "description", "start_time", "end_time", "location", "participants",
    "all_day", "status",
)  # fmt: skip
FILE_FIELDS = ("id_", "filename", "content", "owner", "last_modified", "shared_with", "size")


def _account(ctx: ToolContext) -> dict[str, Any]:
    row = ctx.get("account", ACCOUNT)
    if row is None:
        raise ToolFailure("internal", "the world has no account row")
    return row


def _ordered(ctx: ToolContext, entity_name: str) -> list[dict[str, Any]]:
    rows = [r for r in ctx.get_many(entity_name, ctx.select(entity_name)) if r is not None]
    return sorted(rows, key=lambda r: int(r["seq"]))


def _next_id(ctx: ToolContext, entity_name: str) -> str:
    """One more than the largest id in use (AgentDojo's ``_get_next_id``)."""
    return str(max((int(k) for k in ctx.select(entity_name)), default=0) + 1)


def _next_seq(ctx: ToolContext, entity_name: str) -> int:
    rows = ctx.get_many(entity_name, ctx.select(entity_name))
    return max((int(r["seq"]) for r in rows if r is not None), default=-1) + 1


def _now(ctx: ToolContext) -> str:
    return ctx.now().removesuffix("Z")


def address(text: Any) -> str:
    """An e-mail address as Pydantic's ``EmailStr`` reads it (normalised), or a refusal.

    Raises:
        ToolFailure: for text that is not an address.
    """
    from pydantic.networks import validate_email
    from pydantic_core import PydanticCustomError

    if not isinstance(text, str):
        raise ToolFailure("invalid", f"ValidationError: {text!r} is not an email address")
    try:
        return str(validate_email(text)[1])
    except PydanticCustomError as exc:
        raise ToolFailure("invalid", f"ValidationError: {text!r}: {exc}") from None


def _parsed(text: str, form: str) -> datetime.datetime:
    try:
        return datetime.datetime.strptime(text, form)
    except ValueError as exc:
        raise ToolFailure("invalid", f"ValueError: {exc}") from None


def _email(ctx: ToolContext, recipients: list[Any], subject: str, body: str, **more: Any) -> str:
    """Send an e-mail from the account (AgentDojo's ``Inbox.send_email``); its id."""
    row = {
        "id_": _next_id(ctx, "emails"),
        "seq": _next_seq(ctx, "emails"),
        "sender": _account(ctx)["inbox_email"],
        "recipients": [address(r) for r in recipients],
        "cc": [address(r) for r in more.get("cc") or []],
        "bcc": [address(r) for r in more.get("bcc") or []],
        "subject": subject,
        "body": body,
        "status": "sent",
        "read": True,
        "timestamp": _now(ctx),
        "attachments": list(more.get("attachments") or []),
    }
    ctx.put("emails", row)
    return str(row["id_"])


def public_email(ctx: ToolContext, row: dict[str, Any]) -> dict[str, Any]:
    """An e-mail as AgentDojo returns it, each event it attaches by reference resolved."""
    out = {field: row[field] for field in EMAIL_FIELDS}
    out["attachments"] = [_attachment(ctx, item) for item in row["attachments"]]
    return out


def _attachment(ctx: ToolContext, item: Any) -> Any:
    if isinstance(item, dict) and set(item) == {"event"}:
        event = ctx.get("events", item["event"])
        return item if event is None else _event(event)
    return item


def _event(row: dict[str, Any]) -> dict[str, Any]:
    return {field: row[field] for field in EVENT_FIELDS}


def _file(row: dict[str, Any]) -> dict[str, Any]:
    return {field: row[field] for field in FILE_FIELDS}


def _emails(ctx: ToolContext, status: str | None = None) -> list[dict[str, Any]]:
    rows = _ordered(ctx, "emails")
    return [public_email(ctx, r) for r in rows if status is None or r["status"] == status]


def _event_row(ctx: ToolContext, event_id: str) -> dict[str, Any]:
    row = ctx.get("events", event_id)
    if row is None:
        raise ToolFailure("not_found", f"ValueError: Event with ID '{event_id}' not found.")
    return row


def _file_row(ctx: ToolContext, file_id: str) -> dict[str, Any]:
    row = ctx.get("files", file_id)
    if row is None:
        raise ToolFailure("not_found", f"ValueError: File with ID '{file_id}' not found.")
    return row


@tool(kind="write")
def send_email(
    ctx: ToolContext,
    recipients: list[str],
    subject: str,
    body: str,
    attachments: list[dict[str, Any]] | None = None,
    cc: list[str] | None = None,
    bcc: list[str] | None = None,
) -> dict[str, Any]:
    """Send an e-mail from the account; returns the e-mail sent.

    Args:
        ctx: The session the tool runs in (not shown to models).
        recipients: The recipients' addresses.
        subject: The subject line.
        body: The text.
        attachments: Files (``{"type": "file", "file_id": ...}``) or events (``{"type":
            "event", "event_details": {...}}``) to attach; none when null.
        cc: Addresses to copy; none when null.
        bcc: Addresses to copy blind; none when null.
    """
    parsed = None if attachments is None else [_parsed_attachment(a) for a in attachments]
    email_id = _email(ctx, recipients, subject, body, attachments=parsed, cc=cc, bcc=bcc)
    row = ctx.get("emails", email_id)
    assert row is not None
    return public_email(ctx, row)


def _parsed_attachment(attachment: Any) -> Any:
    """A file id, or an event given in full (checked as AgentDojo's ``CalendarEvent``)."""
    if not isinstance(attachment, dict):
        raise ToolFailure("invalid", "ValueError: Attachments must be dictionaries.")
    if "type" not in attachment:
        raise ToolFailure("invalid", "ValueError: Attachment must have a 'type' field.")
    if attachment["type"] == "file" or "file_id" in attachment:
        if "file_id" not in attachment:
            raise ToolFailure(
                "invalid", "ValueError: Attachment of type 'file' must have a 'file_id' field."
            )
        return str(attachment["file_id"])
    if "event_details" not in attachment:
        raise ToolFailure(
            "invalid", "ValueError: Attachment of type 'event' must have an 'event_details' field."
        )
    return event_details(attachment["event_details"])


def event_details(details: Any) -> dict[str, Any]:
    """An event given in full, read as Pydantic reads AgentDojo's ``CalendarEvent``.

    Raises:
        ToolFailure: for details that are not an event.
    """
    from pydantic import TypeAdapter, ValidationError

    if not isinstance(details, dict):
        raise ToolFailure("invalid", "TypeError: the event details are not a mapping")
    try:
        return _event_of(details, TypeAdapter)
    except (ValidationError, KeyError, TypeError, ValueError) as exc:
        raise ToolFailure("invalid", f"ValidationError: {str(exc).splitlines()[0]}") from None


def _event_of(details: dict[str, Any], adapter: Any) -> dict[str, Any]:
    when = adapter(datetime.datetime)
    text = adapter(str)
    location = details["location"]
    return {
        "id_": text.validate_python(details["id_"]),
        "title": text.validate_python(details["title"]),
        "description": text.validate_python(details["description"]),
        "start_time": when.validate_python(details["start_time"]).isoformat(),
        "end_time": when.validate_python(details["end_time"]).isoformat(),
        "location": None if location is None else text.validate_python(location),
        "participants": [address(p) for p in adapter(list[str]).validate_python(
            details["participants"]
        )],
        "all_day": adapter(bool).validate_python(details.get("all_day", False)),
        "status": adapter(str).validate_python(details.get("status", "confirmed")),
    }  # fmt: skip


@tool(kind="write")
def delete_email(ctx: ToolContext, email_id: str) -> str:
    """Move an e-mail to the trash.

    Args:
        ctx: The session the tool runs in (not shown to models).
        email_id: The e-mail's id.
    """
    row = ctx.get("emails", email_id)
    if row is None:
        raise ToolFailure("not_found", f"ValueError: Email with ID '{email_id}' not found.")
    ctx.delete("emails", email_id)
    old = ctx.get("trash", email_id)
    row["seq"] = _next_seq(ctx, "trash") if old is None else old["seq"]
    ctx.put("trash", row)
    return f"Email with id {email_id} deleted successfully."


@tool(kind="write")
def get_unread_emails(ctx: ToolContext) -> list[dict[str, Any]]:
    """The unread e-mails, which are then marked as read."""
    out: list[dict[str, Any]] = []
    for row in _ordered(ctx, "emails"):
        if not row["read"]:
            row["read"] = True
            ctx.put("emails", row)
            out.append(public_email(ctx, row))
    return out


@tool(kind="read")
def get_sent_emails(ctx: ToolContext) -> list[dict[str, Any]]:
    """The e-mails the account sent."""
    return _emails(ctx, "sent")


@tool(kind="read")
def get_received_emails(ctx: ToolContext) -> list[dict[str, Any]]:
    """The e-mails the account received."""
    return _emails(ctx, "received")


@tool(kind="read")
def get_draft_emails(ctx: ToolContext) -> list[dict[str, Any]]:
    """The account's drafts."""
    return _emails(ctx, "draft")


@tool(kind="read")
def search_emails(ctx: ToolContext, query: str, sender: str | None = None) -> list[dict[str, Any]]:
    """E-mails whose subject or body holds the query (any case), from one sender if given.

    Args:
        ctx: The session the tool runs in (not shown to models).
        query: The text to look for; empty matches every e-mail.
        sender: Only e-mails from this address; all when null.
    """
    wanted = query.lower()
    found = [
        e
        for e in _emails(ctx)
        if (sender is None or e["sender"].lower() == sender.lower())
        and (wanted in e["subject"].lower() or wanted in e["body"].lower())
    ]
    if not found:
        raise ToolFailure("not_found", "ValueError: No emails found. Try with a different query.")
    return found


def _contacts(ctx: ToolContext, field: str, query: str) -> list[dict[str, Any]]:
    found = [
        {"email": c["email"], "name": c["name"]}
        for c in _ordered(ctx, "contacts")
        if query.lower() in str(c[field]).lower()
    ]
    if not found:
        kind = "name" if field == "name" else "email"
        raise ToolFailure("not_found", f"ValueError: Contact with {kind} '{query}' not found.")
    return found


@tool(kind="read")
def search_contacts_by_name(ctx: ToolContext, query: str) -> list[dict[str, Any]]:
    """Contacts whose name holds the query (any case).

    Args:
        ctx: The session the tool runs in (not shown to models).
        query: Part of a name.
    """
    return _contacts(ctx, "name", query)


@tool(kind="read")
def search_contacts_by_email(ctx: ToolContext, query: str) -> list[dict[str, Any]]:
    """Contacts whose address holds the query (any case).

    Args:
        ctx: The session the tool runs in (not shown to models).
        query: Part of an address.
    """
    return _contacts(ctx, "email", query)


@tool(kind="read")
def get_current_day(ctx: ToolContext) -> str:
    """Today's date (YYYY-MM-DD); do not assume another."""
    return str(_account(ctx)["current_day"])


def _on_day(ctx: ToolContext, day: datetime.date | None) -> list[dict[str, Any]]:
    rows = _ordered(ctx, "events")
    return [
        r
        for r in rows
        if day is None or datetime.datetime.fromisoformat(r["start_time"]).date() == day
    ]


@tool(kind="read")
def search_calendar_events(
    ctx: ToolContext, query: str, date: str | None = None
) -> list[dict[str, Any]]:
    """Events whose title or description holds the query (any case), on one day if given.

    Args:
        ctx: The session the tool runs in (not shown to models).
        query: The text to look for.
        date: Only events starting that day (YYYY-MM-DD); every day when null.
    """
    day = None if date is None else _parsed(date, "%Y-%m-%d").date()
    wanted = query.lower()
    found = [
        _event(r)
        for r in _on_day(ctx, day)
        if wanted in r["title"].lower() or wanted in r["description"].lower()
    ]
    if not found:
        raise ToolFailure("not_found", "ValueError: No events found. Try with a different query.")
    return found


@tool(kind="read")
def get_day_calendar_events(ctx: ToolContext, day: str) -> list[dict[str, Any]]:
    """The events starting on a day.

    Args:
        ctx: The session the tool runs in (not shown to models).
        day: The day (YYYY-MM-DD).
    """
    return [_event(r) for r in _on_day(ctx, _parsed(day, "%Y-%m-%d").date())]


@tool(kind="write")
def create_calendar_event(
    ctx: ToolContext,
    title: str,
    start_time: str,
    end_time: str,
    description: str = "",
    participants: list[str] | None = None,
    location: str | None = None,
) -> dict[str, Any]:
    """Add an event to the calendar and e-mail its participants an invitation.

    Args:
        ctx: The session the tool runs in (not shown to models).
        title: The event's title.
        start_time: When it starts (YYYY-MM-DD HH:MM).
        end_time: When it ends (YYYY-MM-DD HH:MM).
        description: What it is about.
        participants: The participants' addresses (the account is always one of them).
        location: Where it takes place; nowhere when null.
    """
    start = _parsed(start_time, "%Y-%m-%d %H:%M").isoformat()
    end = _parsed(end_time, "%Y-%m-%d %H:%M").isoformat()
    invited = [*(participants or []), _account(ctx)["calendar_email"]]
    row = {
        "id_": _next_id(ctx, "events"),
        "seq": _next_seq(ctx, "events"),
        "title": title,
        "description": description,
        "start_time": start,
        "end_time": end,
        "location": location,
        "participants": sorted({address(p) for p in invited}),
        "all_day": False,
        "status": "confirmed",
    }
    ctx.put("events", row)
    _email(ctx, invited, f"Invitation: {title}", description, attachments=[{"event": row["id_"]}])
    return _event(row)


@tool(kind="write")
def cancel_calendar_event(ctx: ToolContext, event_id: str) -> str:
    """Cancel an event and e-mail its participants that it is canceled.

    Args:
        ctx: The session the tool runs in (not shown to models).
        event_id: The event's id.
    """
    row = _event_row(ctx, event_id)
    row["status"] = "canceled"
    ctx.put("events", row)
    _email(
        ctx,
        row["participants"],
        f"Canceled: '{row['title']}'",
        "The event has been canceled.",
        attachments=[{"event": event_id}],
    )
    return f"Event with ID {event_id} has been canceled and participants have been notified."


@tool(kind="write")
def reschedule_calendar_event(
    ctx: ToolContext, event_id: str, new_start_time: str, new_end_time: str | None = None
) -> dict[str, Any]:
    """Move an event and e-mail its participants the new times.

    Args:
        ctx: The session the tool runs in (not shown to models).
        event_id: The event's id.
        new_start_time: When it now starts (YYYY-MM-DD HH:MM).
        new_end_time: When it now ends (YYYY-MM-DD HH:MM); keeps its length when null.
    """
    end = None if new_end_time is None else _parsed(new_end_time, "%Y-%m-%d %H:%M")
    start = _parsed(new_start_time, "%Y-%m-%d %H:%M")
    row = _event_row(ctx, event_id)
    old_start = datetime.datetime.fromisoformat(row["start_time"])
    old_end = datetime.datetime.fromisoformat(row["end_time"])
    end = start + (old_end - old_start) if end is None else end
    row["start_time"], row["end_time"] = start.isoformat(), end.isoformat()
    ctx.put("events", row)
    body = (
        f"The event has been rescheduled. It will start on  {start.date().isoformat()} at "
        f"{start.time().isoformat()} and end on {end.date().isoformat()} at "
        f"{end.time().isoformat()}."
    )
    subject = "Rescheduled: '{event.title}'"
    _email(ctx, row["participants"], subject, body, attachments=[{"event": event_id}])
    return _event(row)


@tool(kind="write")
def add_calendar_event_participants(
    ctx: ToolContext, event_id: str, participants: list[str]
) -> dict[str, Any]:
    """Add participants to an event (no e-mail is sent).

    Args:
        ctx: The session the tool runs in (not shown to models).
        event_id: The event's id.
        participants: The addresses to add.
    """
    row = _event_row(ctx, event_id)
    row["participants"] = [*row["participants"], *participants]
    ctx.put("events", row)
    return _event(row)


@tool(kind="write")
def append_to_file(ctx: ToolContext, file_id: str, content: str) -> dict[str, Any]:
    """Add text at the end of a file.

    Args:
        ctx: The session the tool runs in (not shown to models).
        file_id: The file's id.
        content: The text to add.
    """
    row = _file_row(ctx, file_id)
    row["content"] += content
    row["size"] = len(row["content"])
    row["last_modified"] = _now(ctx)
    ctx.put("files", row)
    return _file(row)


@tool(kind="read")
def search_files_by_filename(ctx: ToolContext, filename: str) -> list[dict[str, Any]]:
    """Files whose name holds the text (any case).

    Args:
        ctx: The session the tool runs in (not shown to models).
        filename: Part of a file name.
    """
    wanted = filename.lower()
    return [_file(r) for r in _ordered(ctx, "files") if wanted in r["filename"].lower()]


@tool(kind="write")
def create_file(ctx: ToolContext, filename: str, content: str) -> dict[str, Any]:
    """Create a file in the drive, owned by the account.

    Args:
        ctx: The session the tool runs in (not shown to models).
        filename: The file's name.
        content: The file's text.
    """
    row = {
        "id_": _next_id(ctx, "files"),
        "seq": _next_seq(ctx, "files"),
        "filename": filename,
        "content": content,
        "owner": _account(ctx)["drive_email"],
        "last_modified": _now(ctx),
        "shared_with": {},
        "size": len(content),
    }
    ctx.put("files", row)
    return _file(row)


@tool(kind="write")
def delete_file(ctx: ToolContext, file_id: str) -> dict[str, Any]:
    """Delete a file; returns the file deleted.

    Args:
        ctx: The session the tool runs in (not shown to models).
        file_id: The file's id.
    """
    row = _file_row(ctx, file_id)
    ctx.delete("files", file_id)
    return _file(row)


@tool(kind="read")
def get_file_by_id(ctx: ToolContext, file_id: str) -> dict[str, Any]:
    """One file, by id.

    Args:
        ctx: The session the tool runs in (not shown to models).
        file_id: The file's id.
    """
    return _file(_file_row(ctx, file_id))


@tool(kind="read")
def list_files(ctx: ToolContext) -> list[dict[str, Any]]:
    """Every file of the drive."""
    return [_file(r) for r in _ordered(ctx, "files")]


@tool(kind="write")
def share_file(ctx: ToolContext, file_id: str, email: str, permission: str) -> dict[str, Any]:
    """Share a file with someone, reading (``r``) or reading and writing (``rw``).

    Args:
        ctx: The session the tool runs in (not shown to models).
        file_id: The file's id.
        email: The address to share it with.
        permission: ``r`` or ``rw``.
    """
    if permission not in ("r", "rw"):
        raise ToolFailure("invalid", "ValidationError: permission must be 'r' or 'rw'")
    row = _file_row(ctx, file_id)
    row["shared_with"] = {**row["shared_with"], email: permission}
    ctx.put("files", row)
    return _file(row)


@tool(kind="read")
def search_files(ctx: ToolContext, query: str) -> list[dict[str, Any]]:
    """Files whose text holds the query (any case).

    Args:
        ctx: The session the tool runs in (not shown to models).
        query: The text to look for.
    """
    found = [_file(r) for r in _ordered(ctx, "files") if query.lower() in r["content"].lower()]
    if not found:
        raise ToolFailure(
            "not_found",
            f"ValueError: No files found with the given query ('{query}'). "
            "Try a different search term.",
        )
    return found


CONTRACT = Contract(
    name="agentdojo_workspace",
    version="1",
    entities=(ACCOUNTS, EMAILS, TRASH, CONTACTS, EVENTS, FILES),
    tools=(
        send_email,
        delete_email,
        get_unread_emails,
        get_sent_emails,
        get_received_emails,
        get_draft_emails,
        search_emails,
        search_contacts_by_name,
        search_contacts_by_email,
        get_current_day,
        search_calendar_events,
        get_day_calendar_events,
        create_calendar_event,
        cancel_calendar_event,
        reschedule_calendar_event,
        add_calendar_event_participants,
        append_to_file,
        search_files_by_filename,
        create_file,
        delete_file,
        get_file_by_id,
        list_files,
        share_file,
        search_files,
    ),
)


def load_data(folder: Path, tasks_file: Path | None) -> WorldData:
    """The workspace world on an AgentDojo data folder, and its imported tasks.

    Args:
        folder: An AgentDojo data folder (``data/suites/workspace/`` and ``agentdojo_src/``).
        tasks_file: A condition file (see `harness_world.agentdojo.importer.read_condition`);
            default: every imported user task and injection task without injections.

    Raises:
        WorldError: naming the folder or file at fault.
    """
    from harness_world.agentdojo.check import world_data

    data: WorldData = world_data("workspace", folder, tasks_file)  # typed here: the check's
    return data  # module is read silently when a world is type-checked alone


WORLD = WorldSpec(
    contract=CONTRACT,
    load_data=load_data,
    description="AgentDojo's workspace suite: an inbox, a calendar and a cloud drive.",
)
