"""AgentDojo's travel suite described by a harness_world contract, with its 28 tools.

The data is NOT part of this repository: it is read from an AgentDojo data folder (the suite's
``environment.yaml`` with its injection vectors' default texts) by `load_data`, e.g.
``--world agentdojo_travel --world-data ../shared/external/agentdojo``. AgentDojo (ETH Zürich
SPY Lab, ethz-spylab/agentdojo, MIT licence) keeps a traveller (one user), lists of hotels,
restaurants, car rental companies and flights, one reservation slot, a calendar and a mailbox.
Here each list is an entity whose rows carry their place in it (``seq``) where AgentDojo's order
shows in a result; the user, the reservation slot and the two accounts (calendar and inbox)
are rows of their own; calendar events and e-mails are keyed by AgentDojo's text ids.

Tool names, parameter names, types and which parameters are required are AgentDojo's. A result
AgentDojo gives as a record (an event, an e-mail) or a list of them is that value here, its
date-times as text (``2024-05-01 09:00:00``), and `harness_world.agentdojo.render` shows it as
AgentDojo does. A result AgentDojo gives as a plain dict keyed by names (prices, addresses,
ratings) is the text AgentDojo shows for it (Python's ``str`` of the dict, in the list's
order): our results keep a dict's keys sorted, and the order is part of what a model reads. The
descriptions are our own words. Quirks of AgentDojo's code are kept, because its verdicts were
computed on the states it produces:

* ``get_dietary_restrictions_for_all_restaurants`` matches a restaurant whose name is found
  anywhere in the names given joined by ``", "`` (a part of a name matches);
* ``reserve_car_rental`` sets the reservation's end to its start (the end given is only echoed);
* ``create_calendar_event`` adds the account's own address to the participants (each address
  once) and mails an invitation, with the event attached, to the participants given and the
  account (the account's address may be there twice);
* ``cancel_calendar_event`` marks the event canceled and mails its participants.

Deviations: a failed call changes nothing (AgentDojo's reservation tools set the type, title
and contact before they parse a date, and keep them when the date is malformed); an e-mail is
stamped with the session's logical clock, not the wall clock; an event's participants are kept
in sorted order (AgentDojo's come out of a Python ``set``, in an order that changes with the
interpreter's hash seed); and an event attached to an e-mail is a copy (AgentDojo's invitation
and cancellation mails hold the event itself, so a later cancellation shows in an earlier mail).
Addresses are checked and normalised by Pydantic's own e-mail validator, as AgentDojo's are.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from harness_world.engine import Contract, ToolContext, ToolFailure, WorldSpec, entity, tool

if TYPE_CHECKING:
    from harness_world.grading.worlds import WorldData

SLOT = 0
"""The key of the one reservation row."""
CALENDAR = "calendar"
"""The key of the calendar's account row."""
INBOX = "inbox"
"""The key of the mailbox's account row."""


class User(TypedDict):
    """The traveller (one row)."""

    ID_number: str
    first_name: str
    last_name: str
    email: str
    phone_number: str
    address: str
    passport_number: str
    bank_account_number: str
    credit_card_number: str


class Hotel(TypedDict):
    """A hotel, at its place in AgentDojo's hotel list."""

    name: str
    city: str
    rating: float
    price_min: float
    price_max: float
    address: str
    reviews: list[str]
    seq: int


class Restaurant(TypedDict):
    """A restaurant, at its place in AgentDojo's restaurant list."""

    name: str
    city: str
    address: str
    rating: float
    price_per_person: float
    operating_hours: str
    reviews: list[str]
    contact_information: str
    cuisine_type: str
    dietary_restrictions: str
    seq: int


class Company(TypedDict):
    """A car rental company, at its place in AgentDojo's company list."""

    name: str
    city: str
    address: str
    rating: float
    price_per_day: float
    reviews: list[str]
    contact_information: str
    car_types_available: list[str]
    fuel_options: list[str]
    seq: int


class Flight(TypedDict):
    """A flight, keyed by its place in AgentDojo's flight list."""

    seq: int
    airline: str
    flight_number: str
    departure_city: str
    arrival_city: str
    departure_time: str
    arrival_time: str
    price: float
    contact_information: str


class Reservation(TypedDict):
    """The one reservation slot (a new reservation replaces the last)."""

    slot: int
    reservation_type: str | None
    title: str
    start_time: str
    end_time: str
    contact_information: str


class Account(TypedDict):
    """The calendar's or the mailbox's account (its address; the calendar's current day)."""

    name: str
    email: str
    current_day: str


class Event(TypedDict):
    """A calendar event, by AgentDojo's id (text of a number), at its place in the calendar."""

    id_: str
    title: str
    description: str
    start_time: str
    end_time: str
    location: str | None
    participants: list[str]
    all_day: bool
    status: str
    seq: int


class Email(TypedDict):
    """An e-mail of the mailbox, by AgentDojo's id (text of a number)."""

    id_: str
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


USERS = entity(User, name="user", key="ID_number")
HOTELS = entity(Hotel, name="hotels", key="name")
RESTAURANTS = entity(Restaurant, name="restaurants", key="name")
COMPANIES = entity(Company, name="car_companies", key="name")
FLIGHTS = entity(Flight, name="flights", key="seq")
RESERVATIONS = entity(Reservation, name="reservation", key="slot")
ACCOUNTS = entity(Account, name="accounts", key="name")
EVENTS = entity(Event, name="events", key="id_")
EMAILS = entity(Email, name="emails", key="id_")

EVENT_FIELDS = (
    "id_",
    "title",
    "description",
    "start_time",
    "end_time",
    "location",
    "participants",
    "all_day",
    "status",
)
"""The fields of an event as AgentDojo shows it."""


def _ordered(ctx: ToolContext, entity_name: str) -> list[dict[str, Any]]:
    rows = [r for r in ctx.get_many(entity_name, ctx.select(entity_name)) if r is not None]
    return sorted(rows, key=lambda r: int(r["seq"]))


def _shown(pairs: list[tuple[str, Any]]) -> str:
    """A name-keyed dict as AgentDojo shows it (Python's ``str``, in list order)."""
    return str(dict(pairs))


def _named(ctx: ToolContext, entity_name: str, names: list[str], field: str) -> str:
    return _shown([(r["name"], r[field]) for r in _ordered(ctx, entity_name) if r["name"] in names])


def _in_city(ctx: ToolContext, entity_name: str, city: str) -> list[str]:
    return [r["name"] for r in _ordered(ctx, entity_name) if r["city"] == city]


def _reviews(ctx: ToolContext, entity_name: str, names: list[str]) -> str:
    return _shown(
        [
            (r["name"], f"Rating: {r['rating']}\nReviews: " + "\n".join(r["reviews"]))
            for r in _ordered(ctx, entity_name)
            if r["name"] in names
        ]
    )


def _user(ctx: ToolContext) -> dict[str, Any]:
    rows = [r for r in ctx.get_many("user", ctx.select("user")) if r is not None]
    if not rows:
        raise ToolFailure("not_found", "no user")
    return rows[0]


def _account(ctx: ToolContext, name: str) -> dict[str, Any]:
    row = ctx.get("accounts", name)
    if row is None:
        raise ToolFailure("not_found", f"no {name} account")
    return row


def shown_time(value: datetime.datetime) -> str:
    """A date-time as text, the way YAML shows AgentDojo's (``2024-05-01 09:00:00``)."""
    return value.isoformat(sep=" ")


def _iso(text: str) -> datetime.datetime:
    try:
        return datetime.datetime.fromisoformat(text)
    except ValueError as exc:
        raise ToolFailure("invalid_arguments", f"ValueError: {exc}") from None


def _parsed(text: str, form: str) -> datetime.datetime:
    try:
        return datetime.datetime.strptime(text, form)
    except ValueError as exc:
        raise ToolFailure("invalid_arguments", f"ValueError: {exc}") from None


def address(text: str) -> str:
    """An e-mail address as Pydantic's ``EmailStr`` reads it (normalised), or a refusal."""
    from pydantic.networks import validate_email  # AgentDojo's own validator

    try:
        return validate_email(text)[1]
    except ValueError as exc:  # Pydantic's validation errors are ValueErrors
        first = str(exc).splitlines()[0]
        raise ToolFailure("invalid_arguments", f"ValidationError: {first}") from None


def _next_id(ctx: ToolContext, entity_name: str) -> str:
    rows = ctx.get_many(entity_name, ctx.select(entity_name))
    return str(max((int(r["id_"]) for r in rows if r is not None), default=0) + 1)


def _mail(
    ctx: ToolContext,
    recipients: list[str],
    subject: str,
    body: str,
    attachments: list[Any],
    copies: tuple[list[str], list[str]] = ([], []),
) -> dict[str, Any]:
    stamp = datetime.datetime.fromisoformat(ctx.now().replace("Z", "+00:00"))
    row = {
        "id_": _next_id(ctx, "emails"),
        "sender": _account(ctx, INBOX)["email"],
        "recipients": [address(r) for r in recipients],
        "cc": [address(r) for r in copies[0]],
        "bcc": [address(r) for r in copies[1]],
        "subject": subject,
        "body": body,
        "status": "sent",
        "read": True,
        "timestamp": shown_time(stamp.replace(tzinfo=None)),
        "attachments": attachments,
    }
    ctx.put("emails", row)
    return row


def _event(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in EVENT_FIELDS}


def _events(ctx: ToolContext) -> list[dict[str, Any]]:
    return _ordered(ctx, "events")


def _reserve(ctx: ToolContext, kind: str, title: str, start: str, end: str) -> None:
    ctx.put(
        "reservation",
        {
            "slot": SLOT,
            "reservation_type": kind,
            "title": title,
            "start_time": start,
            "end_time": end,
            "contact_information": _user(ctx)["phone_number"],
        },
    )


@tool(kind="read")
def get_user_information(ctx: ToolContext) -> str:
    """The traveller's details (name, ID, e-mail, phone, address, passport, bank, card)."""
    user = _user(ctx)
    return str(
        {
            "First Name": user["first_name"],
            "Last Name": user["last_name"],
            "ID Number": user["ID_number"],
            "Email": user["email"],
            "Phone Number": user["phone_number"],
            "Address": user["address"],
            "Passport Number": user["passport_number"],
            "Bank Account Number": user["bank_account_number"],
            "Credit Card Number": user["credit_card_number"],
        }
    )


@tool(kind="read")
def get_all_hotels_in_city(ctx: ToolContext, city: str) -> str:
    """The names of the hotels in a city.

    Args:
        ctx: The session the tool runs in (not shown to models).
        city: The city.
    """
    return "Hotel Names: " + "\n".join(_in_city(ctx, "hotels", city)) + "\n"


@tool(kind="read")
def get_hotels_prices(ctx: ToolContext, hotel_names: list[str]) -> str:
    """The price range of each hotel named.

    Args:
        ctx: The session the tool runs in (not shown to models).
        hotel_names: The hotels' names.
    """
    return _shown(
        [
            (r["name"], f"Price range: {r['price_min']} - {r['price_max']}")
            for r in _ordered(ctx, "hotels")
            if r["name"] in hotel_names
        ]
    )


@tool(kind="read")
def get_rating_reviews_for_hotels(ctx: ToolContext, hotel_names: list[str]) -> str:
    """The rating and reviews of each hotel named.

    Args:
        ctx: The session the tool runs in (not shown to models).
        hotel_names: The hotels' names.
    """
    return _reviews(ctx, "hotels", hotel_names)


@tool(kind="read")
def get_hotels_address(ctx: ToolContext, hotel_name: str) -> str:
    """The address of a hotel.

    Args:
        ctx: The session the tool runs in (not shown to models).
        hotel_name: The hotel's name.
    """
    return _shown(
        [(r["name"], r["address"]) for r in _ordered(ctx, "hotels") if r["name"] == hotel_name]
    )


@tool(kind="read")
def get_all_restaurants_in_city(ctx: ToolContext, city: str) -> str:
    """The names of the restaurants in a city.

    Args:
        ctx: The session the tool runs in (not shown to models).
        city: The city.
    """
    return f"Restaurant in {city}: " + "\n".join(_in_city(ctx, "restaurants", city)) + "\n"


@tool(kind="read")
def get_cuisine_type_for_restaurants(ctx: ToolContext, restaurant_names: list[str]) -> str:
    """The cuisine of each restaurant named.

    Args:
        ctx: The session the tool runs in (not shown to models).
        restaurant_names: The restaurants' names.
    """
    return _named(ctx, "restaurants", restaurant_names, "cuisine_type")


@tool(kind="read")
def get_restaurants_address(ctx: ToolContext, restaurant_names: list[str]) -> str:
    """The address of each restaurant named.

    Args:
        ctx: The session the tool runs in (not shown to models).
        restaurant_names: The restaurants' names.
    """
    return _named(ctx, "restaurants", restaurant_names, "address")


@tool(kind="read")
def get_rating_reviews_for_restaurants(ctx: ToolContext, restaurant_names: list[str]) -> str:
    """The rating and reviews of each restaurant named.

    Args:
        ctx: The session the tool runs in (not shown to models).
        restaurant_names: The restaurants' names.
    """
    return _reviews(ctx, "restaurants", restaurant_names)


@tool(kind="read")
def get_dietary_restrictions_for_all_restaurants(
    ctx: ToolContext, restaurant_names: list[str]
) -> str:
    """The dietary options of each restaurant named.

    Args:
        ctx: The session the tool runs in (not shown to models).
        restaurant_names: The restaurants' names.
    """
    joined = ", ".join(restaurant_names)
    return _shown(
        [
            (r["name"], r["dietary_restrictions"])
            for r in _ordered(ctx, "restaurants")
            if r["name"] in joined
        ]
    )


@tool(kind="read")
def get_contact_information_for_restaurants(ctx: ToolContext, restaurant_names: list[str]) -> str:
    """How to reach each restaurant named.

    Args:
        ctx: The session the tool runs in (not shown to models).
        restaurant_names: The restaurants' names.
    """
    return _named(ctx, "restaurants", restaurant_names, "contact_information")


@tool(kind="read")
def get_price_for_restaurants(ctx: ToolContext, restaurant_names: list[str]) -> str:
    """The price per person of each restaurant named.

    Args:
        ctx: The session the tool runs in (not shown to models).
        restaurant_names: The restaurants' names.
    """
    return _named(ctx, "restaurants", restaurant_names, "price_per_person")


@tool(kind="read")
def check_restaurant_opening_hours(ctx: ToolContext, restaurant_names: list[str]) -> str:
    """The opening hours of each restaurant named.

    Args:
        ctx: The session the tool runs in (not shown to models).
        restaurant_names: The restaurants' names.
    """
    return _named(ctx, "restaurants", restaurant_names, "operating_hours")


@tool(kind="read")
def get_all_car_rental_companies_in_city(ctx: ToolContext, city: str) -> str:
    """The names of the car rental companies in a city.

    Args:
        ctx: The session the tool runs in (not shown to models).
        city: The city.
    """
    return (
        f"Car Rental Companies in {city}: " + "\n".join(_in_city(ctx, "car_companies", city)) + "\n"
    )


@tool(kind="read")
def get_car_types_available(ctx: ToolContext, company_name: list[str]) -> str:
    """The car types of each company named.

    Args:
        ctx: The session the tool runs in (not shown to models).
        company_name: The companies' names.
    """
    return _named(ctx, "car_companies", company_name, "car_types_available")


@tool(kind="read")
def get_rating_reviews_for_car_rental(ctx: ToolContext, company_name: list[str]) -> str:
    """The rating and reviews of each company named.

    Args:
        ctx: The session the tool runs in (not shown to models).
        company_name: The companies' names.
    """
    return _reviews(ctx, "car_companies", company_name)


@tool(kind="read")
def get_car_fuel_options(ctx: ToolContext, company_name: list[str]) -> str:
    """The fuel options of each company named.

    Args:
        ctx: The session the tool runs in (not shown to models).
        company_name: The companies' names.
    """
    return _named(ctx, "car_companies", company_name, "fuel_options")


@tool(kind="read")
def get_car_rental_address(ctx: ToolContext, company_name: list[str]) -> str:
    """The address of each company named.

    Args:
        ctx: The session the tool runs in (not shown to models).
        company_name: The companies' names.
    """
    return _named(ctx, "car_companies", company_name, "address")


@tool(kind="read")
def get_car_price_per_day(ctx: ToolContext, company_name: list[str]) -> str:
    """The price per day of each company named.

    Args:
        ctx: The session the tool runs in (not shown to models).
        company_name: The companies' names.
    """
    return _named(ctx, "car_companies", company_name, "price_per_day")


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
    """Add an event to the calendar and mail an invitation to its participants.

    Args:
        ctx: The session the tool runs in (not shown to models).
        title: The event's title.
        start_time: Its start, ``YYYY-MM-DD HH:MM``.
        end_time: Its end, ``YYYY-MM-DD HH:MM``.
        description: What it is about.
        participants: The participants' e-mail addresses (the account's own is always added).
        location: Where it takes place.
    """
    start = _parsed(start_time, "%Y-%m-%d %H:%M")
    end = _parsed(end_time, "%Y-%m-%d %H:%M")
    invited = [*(participants or []), _account(ctx, CALENDAR)["email"]]
    row = {
        "id_": _next_id(ctx, "events"),
        "title": title,
        "description": description,
        "start_time": shown_time(start),
        "end_time": shown_time(end),
        "location": location,
        "participants": sorted(address(p) for p in set(invited)),
        "all_day": False,
        "status": "confirmed",
        "seq": max((int(r["seq"]) for r in _events(ctx)), default=-1) + 1,
    }
    ctx.put("events", row)
    event = _event(row)
    _mail(ctx, invited, f"Invitation: {title}", description, [event])
    return event


@tool(kind="read")
def search_calendar_events(
    ctx: ToolContext, query: str, date: str | None = None
) -> list[dict[str, Any]]:
    """The events whose title or description holds a text, on a day if one is given.

    Args:
        ctx: The session the tool runs in (not shown to models).
        query: The text looked for (case does not matter).
        date: The day, ``YYYY-MM-DD``; none for every day.
    """
    day = None if date is None else _parsed(date, "%Y-%m-%d").date().isoformat()
    wanted = query.lower()
    found = [
        _event(r)
        for r in _events(ctx)
        if (day is None or r["start_time"][:10] == day)
        and (wanted in r["title"].lower() or wanted in r["description"].lower())
    ]
    if not found:
        raise ToolFailure("not_found", "ValueError: No events found. Try with a different query.")
    return found


@tool(kind="read")
def get_day_calendar_events(ctx: ToolContext, day: str) -> list[dict[str, Any]]:
    """The events of a day.

    Args:
        ctx: The session the tool runs in (not shown to models).
        day: The day, ``YYYY-MM-DD``.
    """
    wanted = _parsed(day, "%Y-%m-%d").date().isoformat()
    return [_event(r) for r in _events(ctx) if r["start_time"][:10] == wanted]


@tool(kind="write")
def cancel_calendar_event(ctx: ToolContext, event_id: str) -> str:
    """Cancel an event and mail its participants.

    Args:
        ctx: The session the tool runs in (not shown to models).
        event_id: The event's id.
    """
    row = ctx.get("events", event_id)
    if row is None:
        raise ToolFailure("not_found", f"ValueError: Event with ID '{event_id}' not found.")
    row["status"] = "canceled"
    ctx.put("events", row)
    subject = f"Canceled: '{row['title']}'"
    _mail(ctx, list(row["participants"]), subject, "The event has been canceled.", [_event(row)])
    return f"Event with ID {event_id} has been canceled and participants have been notified."


@tool(kind="write")
def reserve_hotel(ctx: ToolContext, hotel: str, start_day: str, end_day: str) -> str:
    """Reserve a hotel (the reservation replaces the last one).

    Args:
        ctx: The session the tool runs in (not shown to models).
        hotel: The hotel's name.
        start_day: The check-in day, ``YYYY-MM-DD``.
        end_day: The check-out day, ``YYYY-MM-DD``.
    """
    start, end = shown_time(_iso(start_day)), shown_time(_iso(end_day))
    _reserve(ctx, "hotel", hotel, start, end)
    return f"Reservation for {hotel} from {start_day} to {end_day} has been made successfully."


@tool(kind="write")
def reserve_car_rental(
    ctx: ToolContext, company: str, start_time: str, end_time: str | None
) -> str:
    """Reserve a rental car (the reservation replaces the last one).

    Args:
        ctx: The session the tool runs in (not shown to models).
        company: The company's name.
        start_time: The start, ``YYYY-MM-DD HH:MM``.
        end_time: The end, ``YYYY-MM-DD HH:MM``.
    """
    start = shown_time(_iso(start_time))
    _reserve(ctx, "car", company, start, start)
    return (
        f"Reservation for a car at {company} from {start_time} to {end_time} "
        "has been made successfully."
    )


@tool(kind="write")
def reserve_restaurant(ctx: ToolContext, restaurant: str, start_time: str) -> str:
    """Reserve a table for two hours (the reservation replaces the last one).

    Args:
        ctx: The session the tool runs in (not shown to models).
        restaurant: The restaurant's name.
        start_time: The time, ``YYYY-MM-DD HH:MM``.
    """
    start = _iso(start_time)
    end = start + datetime.timedelta(hours=2)
    _reserve(ctx, "restaurant", restaurant, shown_time(start), shown_time(end))
    return (
        f"Reservation for {restaurant} from {start.strftime('%H:%M')} to "
        f"{end.strftime('%H:%M')} on {start.date().isoformat()} has been made successfully."
    )


@tool(kind="read")
def get_flight_information(ctx: ToolContext, departure_city: str, arrival_city: str) -> str:
    """The flights from one city to another.

    Args:
        ctx: The session the tool runs in (not shown to models).
        departure_city: Where the flight leaves from.
        arrival_city: Where it lands.
    """
    rows = sorted(
        (r for r in ctx.get_many("flights", ctx.select("flights")) if r is not None),
        key=lambda r: int(r["seq"]),
    )
    return "\n".join(
        f"Airline: {r['airline']}, Flight Number: {r['flight_number']}, "
        f"Departure Time: {r['departure_time']}, Arrival Time: {r['arrival_time']}, "
        f"Price: {r['price']}, Contact Information: {r['contact_information']}"
        for r in rows
        if r["departure_city"] == departure_city and r["arrival_city"] == arrival_city
    )


def _attachment(item: Any) -> Any:
    """One attachment as AgentDojo reads it: a file's id, or an event's details."""
    if not isinstance(item, dict):
        raise ToolFailure("invalid_arguments", "ValueError: Attachments must be dictionaries.")
    if "type" not in item:
        raise ToolFailure("invalid_arguments", "ValueError: Attachment must have a 'type' field.")
    if item["type"] == "file" or "file_id" in item:
        if "file_id" not in item:
            raise ToolFailure(
                "invalid_arguments",
                "ValueError: Attachment of type 'file' must have a 'file_id' field.",
            )
        return str(item["file_id"])
    details = item.get("event_details")
    if not isinstance(details, dict):
        raise ToolFailure(
            "invalid_arguments",
            "ValueError: Attachment of type 'event' must have an 'event_details' field.",
        )
    missing = [f for f in EVENT_FIELDS[:7] if f not in details]
    if missing:
        raise ToolFailure("invalid_arguments", f"ValidationError: {missing[0]} missing")
    return {
        **{f: details[f] for f in EVENT_FIELDS[:7]},
        "id_": str(details["id_"]),
        "start_time": shown_time(_iso(str(details["start_time"]))),
        "end_time": shown_time(_iso(str(details["end_time"]))),
        "participants": [address(str(p)) for p in details["participants"]],
        "all_day": bool(details.get("all_day", False)),
        "status": str(details.get("status", "confirmed")),
    }


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
    """Send an e-mail.

    Args:
        ctx: The session the tool runs in (not shown to models).
        recipients: The recipients' addresses.
        subject: The subject.
        body: The text.
        attachments: Files (``{"type": "file", "file_id": ...}``) or events
            (``{"type": "event", "event_details": {...}}``) to attach.
        cc: Addresses to copy.
        bcc: Addresses to copy blind.
    """
    attached = [_attachment(a) for a in attachments or []]
    row = _mail(ctx, recipients, subject, body, attached, (cc or [], bcc or []))
    return row


CONTRACT = Contract(
    name="agentdojo_travel",
    version="1",
    entities=(
        USERS,
        HOTELS,
        RESTAURANTS,
        COMPANIES,
        FLIGHTS,
        RESERVATIONS,
        ACCOUNTS,
        EVENTS,
        EMAILS,
    ),
    tools=(
        get_user_information,
        get_all_hotels_in_city,
        get_hotels_prices,
        get_rating_reviews_for_hotels,
        get_hotels_address,
        get_all_restaurants_in_city,
        get_cuisine_type_for_restaurants,
        get_restaurants_address,
        get_rating_reviews_for_restaurants,
        get_dietary_restrictions_for_all_restaurants,
        get_contact_information_for_restaurants,
        get_price_for_restaurants,
        check_restaurant_opening_hours,
        get_all_car_rental_companies_in_city,
        get_car_types_available,
        get_rating_reviews_for_car_rental,
        get_car_fuel_options,
        get_car_rental_address,
        get_car_price_per_day,
        create_calendar_event,
        search_calendar_events,
        get_day_calendar_events,
        cancel_calendar_event,
        reserve_hotel,
        reserve_car_rental,
        reserve_restaurant,
        get_flight_information,
        send_email,
    ),
)


def load_data(folder: Path, tasks_file: Path | None) -> WorldData:
    """The travel world on an AgentDojo data folder, and its imported tasks.

    Args:
        folder: An AgentDojo data folder (``data/suites/travel/`` and ``agentdojo_src/``).
        tasks_file: A condition file (see `harness_world.agentdojo.importer.read_condition`);
            default: every user task and injection task without injections.

    Raises:
        WorldError: naming the folder or file at fault.
    """
    from harness_world.agentdojo.check import world_data

    data: WorldData = world_data("travel", folder, tasks_file)  # typed here: the check's
    return data  # module is read silently when a world is type-checked alone


WORLD = WorldSpec(
    contract=CONTRACT,
    load_data=load_data,
    description="AgentDojo's travel suite: hotels, restaurants, cars, flights, a calendar, mail.",
)
