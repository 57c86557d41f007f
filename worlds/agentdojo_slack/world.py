"""AgentDojo's slack suite described by a harness_world contract, with its eleven tools.

The data is NOT part of this repository: it is read from an AgentDojo data folder (the suite's
``environment.yaml`` with its injection vectors' default texts) by `load_data`, e.g.
``--world agentdojo_slack --world-data ../shared/external/agentdojo``. AgentDojo (ETH Zürich
SPY Lab, ethz-spylab/agentdojo, MIT licence) keeps a Slack workspace (a list of users, a list
of channels, each user's channels, each user's and each channel's messages) and a web (pages by
address, and the list of addresses requested). Here each list or map is an entity whose rows
carry their position (``seq``) where AgentDojo's order shows in a result: users, channels, the
map of each user's channels (`get_users_in_channel` lists users in its order), which users have
an inbox, every message (keyed by a number in the order sent, its box a user's or a channel's)
and every web request.

Tool names, parameter names and types are AgentDojo's; every result is AgentDojo's value (a
list of texts, a list of messages, a text, or nothing) and `harness_world.agentdojo.render`
turns it into the text AgentDojo shows a model. The descriptions are our own words. Quirks of
AgentDojo's code are kept, because its verdicts were computed on the states it produces:

* ``get_webpage`` records the request (it is a write here: it changes the world) and answers
  ``404 Not Found`` for an unknown address; both web tools drop a leading ``https://`` and
  then a leading ``http://``.
* ``add_user_to_channel`` adds a channel the user is already in once more.
* ``invite_user_to_slack`` empties the user's channels and inbox if an entry was left for them.

Deviation: a failed call changes nothing. AgentDojo's ``remove_user_from_slack`` of a user
without an inbox (the seed gives inboxes to two users only) takes the user off the user list
and then fails; here it fails having changed nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from harness_world.engine import Contract, ToolContext, ToolFailure, WorldSpec, entity, tool

if TYPE_CHECKING:
    from harness_world.grading.worlds import WorldData


class User(TypedDict):
    """A user of the workspace, at its place in AgentDojo's user list."""

    name: str
    seq: int


class Channel(TypedDict):
    """A channel of the workspace, at its place in AgentDojo's channel list."""

    name: str
    seq: int


class Membership(TypedDict):
    """One entry of AgentDojo's map of each user's channels (a channel may repeat)."""

    user: str
    channels: list[str]
    seq: int


class Inbox(TypedDict):
    """A user who has an inbox entry (AgentDojo's map of direct messages has a key for them)."""

    user: str
    seq: int


class Message(TypedDict):
    """A message, in a user's inbox (``box`` ``user``) or a channel's (``channel``)."""

    id: int
    box: str
    owner: str
    sender: str
    recipient: str
    body: str


class Webpage(TypedDict):
    """A web page's text, by its address (without ``https://``)."""

    url: str
    content: str


class WebRequest(TypedDict):
    """An address requested (AgentDojo's list of web requests, in order)."""

    id: int
    url: str


USERS = entity(User, name="users", key="name")
CHANNELS = entity(Channel, name="channels", key="name")
MEMBERSHIPS = entity(Membership, name="memberships", key="user")
INBOXES = entity(Inbox, name="inboxes", key="user")
MESSAGES = entity(Message, name="messages", key="id")
WEBPAGES = entity(Webpage, name="webpages", key="url")
REQUESTS = entity(WebRequest, name="web_requests", key="id")

BOT = "bot"
"""The sender of every message the agent sends (AgentDojo's own name for it)."""


def _ordered(ctx: ToolContext, entity_name: str) -> list[dict[str, Any]]:
    rows = [r for r in ctx.get_many(entity_name, ctx.select(entity_name)) if r is not None]
    return sorted(rows, key=lambda r: int(r["seq"]))


def _next(ctx: ToolContext, entity_name: str, field: str) -> int:
    rows = ctx.get_many(entity_name, ctx.select(entity_name))
    return max((int(r[field]) for r in rows if r is not None), default=-1) + 1


def _box(ctx: ToolContext, box: str, owner: str) -> list[dict[str, Any]]:
    keys = ctx.select("messages", {"box": box, "owner": owner})
    rows = [r for r in ctx.get_many("messages", keys) if r is not None]
    return [
        {"sender": r["sender"], "recipient": r["recipient"], "body": r["body"]}
        for r in sorted(rows, key=lambda r: int(r["id"]))
    ]


def _post(ctx: ToolContext, box: str, owner: str, body: str) -> None:
    row = {"box": box, "owner": owner, "sender": BOT, "recipient": owner, "body": body}
    ctx.put("messages", {"id": _next(ctx, "messages", "id"), **row})


def _user(ctx: ToolContext, user: str, message: str) -> None:
    if ctx.get("users", user) is None:
        raise ToolFailure("not_found", f"ValueError: {message}")


def _channel(ctx: ToolContext, channel: str, message: str) -> None:
    if ctx.get("channels", channel) is None:
        raise ToolFailure("not_found", f"ValueError: {message}")


def _standard(url: str) -> str:
    url = url.removeprefix("https://")
    return url.removeprefix("http://")


def _request(ctx: ToolContext, url: str) -> None:
    ctx.put("web_requests", {"id": _next(ctx, "web_requests", "id"), "url": url})


@tool(kind="read")
def get_channels(ctx: ToolContext) -> list[str]:
    """The names of every channel of the workspace."""
    return [row["name"] for row in _ordered(ctx, "channels")]


@tool(kind="write")
def add_user_to_channel(ctx: ToolContext, user: str, channel: str) -> None:
    """Add a user to a channel.

    Args:
        ctx: The session the tool runs in (not shown to models).
        user: The user's name.
        channel: The channel's name.
    """
    _user(ctx, user, f"User {user} not found in the users list")
    _channel(ctx, channel, f"Channel {channel} not found in the channels list")
    row = ctx.get("memberships", user)
    if row is None:
        raise ToolFailure("not_found", f"KeyError: {user!r}")
    row["channels"] = [*row["channels"], channel]
    ctx.put("memberships", row)


@tool(kind="read")
def read_channel_messages(ctx: ToolContext, channel: str) -> list[dict[str, Any]]:
    """The messages of a channel, oldest first.

    Args:
        ctx: The session the tool runs in (not shown to models).
        channel: The channel's name.
    """
    _channel(ctx, channel, "Channel does not exist!")
    return _box(ctx, "channel", channel)


@tool(kind="read")
def read_inbox(ctx: ToolContext, user: str) -> list[dict[str, Any]]:
    """The direct messages a user received, oldest first.

    Args:
        ctx: The session the tool runs in (not shown to models).
        user: The user's name.
    """
    _user(ctx, user, f"User {user} not found in the users list")
    return _box(ctx, "user", user)


@tool(kind="write")
def send_direct_message(ctx: ToolContext, recipient: str, body: str) -> None:
    """Send a direct message to a user.

    Args:
        ctx: The session the tool runs in (not shown to models).
        recipient: The user's name.
        body: The message's text.
    """
    _user(ctx, recipient, f"Recipient {recipient} not found in the users list")
    if ctx.get("inboxes", recipient) is None:
        ctx.put("inboxes", {"user": recipient, "seq": _next(ctx, "inboxes", "seq")})
    _post(ctx, "user", recipient, body)


@tool(kind="write")
def send_channel_message(ctx: ToolContext, channel: str, body: str) -> None:
    """Send a message to a channel.

    Args:
        ctx: The session the tool runs in (not shown to models).
        channel: The channel's name.
        body: The message's text.
    """
    _channel(ctx, channel, f"Channel {channel} not found in the channels list")
    _post(ctx, "channel", channel, body)


def _empty_inbox(ctx: ToolContext, user: str) -> None:
    for key in ctx.select("messages", {"box": "user", "owner": user}):
        ctx.delete("messages", key)


@tool(kind="write")
def invite_user_to_slack(ctx: ToolContext, user: str, user_email: str) -> None:
    """Invite a user to the workspace (they join no channel).

    Args:
        ctx: The session the tool runs in (not shown to models).
        user: The new user's name.
        user_email: Where the invitation is sent.
    """
    if ctx.get("users", user) is not None:
        raise ToolFailure("conflict", f"ValueError: User {user} already in the users list")
    ctx.put("users", {"name": user, "seq": _next(ctx, "users", "seq")})
    _empty_inbox(ctx, user)
    inbox = ctx.get("inboxes", user)
    seq = _next(ctx, "inboxes", "seq") if inbox is None else inbox["seq"]
    ctx.put("inboxes", {"user": user, "seq": seq})
    member = ctx.get("memberships", user)
    seq = _next(ctx, "memberships", "seq") if member is None else member["seq"]
    ctx.put("memberships", {"user": user, "channels": [], "seq": seq})


@tool(kind="write")
def remove_user_from_slack(ctx: ToolContext, user: str) -> None:
    """Remove a user from the workspace, with their inbox and their channels.

    Args:
        ctx: The session the tool runs in (not shown to models).
        user: The user's name.
    """
    _user(ctx, user, f"User {user} not found in the users list")
    for entity_name in ("inboxes", "memberships"):
        if ctx.get(entity_name, user) is None:
            raise ToolFailure("not_found", f"KeyError: {user!r}")
    ctx.delete("users", user)
    _empty_inbox(ctx, user)
    ctx.delete("inboxes", user)
    ctx.delete("memberships", user)


@tool(kind="read")
def get_users_in_channel(ctx: ToolContext, channel: str) -> list[str]:
    """The users in a channel.

    Args:
        ctx: The session the tool runs in (not shown to models).
        channel: The channel's name.
    """
    _channel(ctx, channel, f"Channel {channel} not found in the channels list")
    return [row["user"] for row in _ordered(ctx, "memberships") if channel in row["channels"]]


@tool(kind="write")
def get_webpage(ctx: ToolContext, url: str) -> str:
    """The text of the web page at an address (the request is logged).

    Args:
        ctx: The session the tool runs in (not shown to models).
        url: The page's address.
    """
    url = _standard(url)
    _request(ctx, url)
    page = ctx.get("webpages", url)
    return "404 Not Found" if page is None else str(page["content"])


@tool(kind="write")
def post_webpage(ctx: ToolContext, url: str, content: str) -> None:
    """Publish a web page at an address (replacing any page there).

    Args:
        ctx: The session the tool runs in (not shown to models).
        url: The page's address.
        content: The page's text.
    """
    url = _standard(url)
    _request(ctx, url)
    ctx.put("webpages", {"url": url, "content": content})


CONTRACT = Contract(
    name="agentdojo_slack",
    version="1",
    entities=(USERS, CHANNELS, MEMBERSHIPS, INBOXES, MESSAGES, WEBPAGES, REQUESTS),
    tools=(
        get_channels,
        add_user_to_channel,
        read_channel_messages,
        read_inbox,
        send_direct_message,
        send_channel_message,
        get_users_in_channel,
        invite_user_to_slack,
        remove_user_from_slack,
        get_webpage,
        post_webpage,
    ),
)


def load_data(folder: Path, tasks_file: Path | None) -> WorldData:
    """The slack world on an AgentDojo data folder, and its imported tasks.

    Args:
        folder: An AgentDojo data folder (``data/suites/slack/`` and ``agentdojo_src/``).
        tasks_file: A condition file (see `harness_world.agentdojo.importer.read_condition`);
            default: every user task and injection task without injections.

    Raises:
        WorldError: naming the folder or file at fault.
    """
    from harness_world.agentdojo.check import world_data

    data: WorldData = world_data("slack", folder, tasks_file)  # typed here: the check's
    return data  # module is read silently when a world is type-checked alone


WORLD = WorldSpec(
    contract=CONTRACT,
    load_data=load_data,
    description="AgentDojo's slack suite: a Slack workspace and a small web.",
)
