"""AgentDojo's banking suite described by a harness_world contract, with its eleven tools.

The data is NOT part of this repository: it is read from an AgentDojo data folder (the suite's
``environment.yaml`` with its injection vectors' default texts) by `load_data`, e.g.
``--world agentdojo_banking --world-data ../shared/external/agentdojo``. AgentDojo (ETH Zürich
SPY Lab, ethz-spylab/agentdojo, MIT licence) keeps its environment as one Pydantic object:
a bank account (balance, IBAN, a list of transactions, a list of scheduled transactions), a
filesystem (path to text) and a user account. Here the two lists are entities keyed by the
transaction id (ids are unique across both lists: a new id is one more than the largest of
either), the filesystem is an entity keyed by path, and the account and the user are one row
each.

Tool names, parameter names, parameter types and which parameters are required are
AgentDojo's; every result is AgentDojo's value (a record, a list of records, a message object,
a number or a text) and `harness_world.agentdojo.render` turns it into the text AgentDojo
shows a model. The descriptions are our own words. Where AgentDojo's code has a quirk, the tool
keeps it, because its verdicts were computed on the states it produces:

* ``get_most_recent_transactions(n)`` returns the last ``n`` transactions by Python slicing:
  ``n = 0`` returns every transaction and a negative ``n`` drops the first ``-n``.
* ``update_scheduled_transaction`` and ``update_user_info`` change only the fields given a
  truthy value (an amount of 0, an empty text or ``recurring = false`` changes nothing).
* ``read_file`` of a path that does not exist returns an empty text, not an error.

Deviations: arguments are typed strictly (AgentDojo's Pydantic validation turns ``"10"`` into
10 and ``4`` into ``4.0``; here an integer amount is accepted and stored as a float, and text
for a number is refused); and a failed call changes nothing (AgentDojo's tools raise before
their first change, so this is the same state).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from harness_world.engine import Contract, ToolContext, ToolFailure, WorldSpec, entity, tool

if TYPE_CHECKING:
    from harness_world.grading.worlds import WorldData

ACCOUNT = "bank_account"
"""The key of the one bank account row."""
USER = "user_account"
"""The key of the one user account row."""


class Account(TypedDict):
    """The user's bank account (one row)."""

    name: str
    balance: float
    iban: str


class Transaction(TypedDict):
    """A transaction made (``transactions``) or scheduled (``scheduled_transactions``)."""

    id: int
    sender: str
    recipient: str
    amount: float
    subject: str
    date: str
    recurring: bool


class File(TypedDict):
    """A text file of the user's filesystem."""

    path: str
    content: str


class UserAccount(TypedDict):
    """The user's account details (one row)."""

    name: str
    first_name: str
    last_name: str
    street: str
    city: str
    password: str


ACCOUNTS = entity(Account, name="bank_account", key="name")
TRANSACTIONS = entity(Transaction, name="transactions", key="id")
SCHEDULED = entity(Transaction, name="scheduled_transactions", key="id")
FILES = entity(File, name="files", key="path")
USERS = entity(UserAccount, name="user_account", key="name")

_PUBLIC = ("id", "sender", "recipient", "amount", "subject", "date", "recurring")


def _account(ctx: ToolContext) -> dict[str, Any]:
    row = ctx.get("bank_account", ACCOUNT)
    if row is None:
        raise ToolFailure("internal", "the world has no bank account row")
    return row


def _user(ctx: ToolContext) -> dict[str, Any]:
    row = ctx.get("user_account", USER)
    if row is None:
        raise ToolFailure("internal", "the world has no user account row")
    return row


def _transaction(row: dict[str, Any]) -> dict[str, Any]:
    return {field: row[field] for field in _PUBLIC}


def _listed(ctx: ToolContext, entity_name: str) -> list[dict[str, Any]]:
    rows = ctx.get_many(entity_name, ctx.select(entity_name))
    return [_transaction(row) for row in rows if row is not None]


def _next_id(ctx: ToolContext) -> int:
    ids = [int(k) for k in ctx.select("transactions")]
    ids += [int(k) for k in ctx.select("scheduled_transactions")]
    return max(ids, default=0) + 1


def _new_transaction(
    ctx: ToolContext, recipient: str, amount: float, subject: str, date: str, recurring: bool
) -> dict[str, Any]:
    return {
        "id": _next_id(ctx),
        "sender": _account(ctx)["iban"],
        "recipient": recipient,
        "amount": float(amount),
        "subject": subject,
        "date": date,
        "recurring": recurring,
    }


@tool(kind="read")
def get_iban(ctx: ToolContext) -> str:
    """The IBAN of the user's bank account."""
    return str(_account(ctx)["iban"])


@tool(kind="write")
def send_money(
    ctx: ToolContext, recipient: str, amount: float, subject: str, date: str
) -> dict[str, str]:
    """Send money now: records a transaction from the user's account.

    Args:
        ctx: The session the tool runs in (not shown to models).
        recipient: The recipient's IBAN.
        amount: How much to send.
        subject: The transaction's subject line.
        date: The transaction's date.
    """
    ctx.put("transactions", _new_transaction(ctx, recipient, amount, subject, date, False))
    return {"message": f"Transaction to {recipient} for {float(amount)} sent."}


@tool(kind="write")
def schedule_transaction(
    ctx: ToolContext, recipient: str, amount: float, subject: str, date: str, recurring: bool
) -> dict[str, str]:
    """Schedule a transaction for a later date, once or recurring.

    Args:
        ctx: The session the tool runs in (not shown to models).
        recipient: The recipient's IBAN.
        amount: How much to send.
        subject: The transaction's subject line.
        date: The date it is next due.
        recurring: Whether it repeats.
    """
    row = _new_transaction(ctx, recipient, amount, subject, date, recurring)
    ctx.put("scheduled_transactions", row)
    return {"message": f"Transaction to {recipient} for {float(amount)} scheduled."}


@tool(kind="write")
def update_scheduled_transaction(
    ctx: ToolContext,
    id: int,
    recipient: str | None = None,
    amount: float | None = None,
    subject: str | None = None,
    date: str | None = None,
    recurring: bool | None = None,
) -> dict[str, str]:
    """Change a scheduled transaction; fields left out (or empty) stay as they are.

    Args:
        ctx: The session the tool runs in (not shown to models).
        id: The scheduled transaction's id.
        recipient: A new recipient IBAN.
        amount: A new amount.
        subject: A new subject line.
        date: A new next date.
        recurring: Whether it repeats (only ``true`` changes it).
    """
    row = ctx.get("scheduled_transactions", id)
    if row is None:
        raise ToolFailure("not_found", f"ValueError: Transaction with ID {id} not found.")
    changes = {
        "recipient": recipient,
        "amount": None if amount is None else float(amount),
        "subject": subject,
        "date": date,
        "recurring": recurring,
    }
    # AgentDojo assigns a field only when its new value is truthy.
    row.update({field: value for field, value in changes.items() if value})
    ctx.put("scheduled_transactions", row)
    return {"message": f"Transaction with ID {id} updated."}


@tool(kind="read")
def get_balance(ctx: ToolContext) -> float:
    """The account's balance."""
    return float(_account(ctx)["balance"])


@tool(kind="read")
def get_most_recent_transactions(ctx: ToolContext, n: int = 100) -> list[dict[str, Any]]:
    """The last ``n`` transactions of the account, oldest first.

    Args:
        ctx: The session the tool runs in (not shown to models).
        n: How many transactions to return.
    """
    return _listed(ctx, "transactions")[-n:]


@tool(kind="read")
def get_scheduled_transactions(ctx: ToolContext) -> list[dict[str, Any]]:
    """Every scheduled transaction of the account."""
    return _listed(ctx, "scheduled_transactions")


@tool(kind="read")
def read_file(ctx: ToolContext, file_path: str) -> str:
    """The text of a file of the user's filesystem (empty when there is no such file).

    Args:
        ctx: The session the tool runs in (not shown to models).
        file_path: The file's path.
    """
    row = ctx.get("files", file_path)
    return "" if row is None else str(row["content"])


def _user_info(user: dict[str, Any]) -> dict[str, str]:
    return {field: user[field] for field in ("first_name", "last_name", "street", "city")}


@tool(kind="read")
def get_user_info(ctx: ToolContext) -> dict[str, str]:
    """The user's name and address."""
    return _user_info(_user(ctx))


@tool(kind="write")
def update_password(ctx: ToolContext, password: str) -> dict[str, str]:
    """Set the user's password.

    Args:
        ctx: The session the tool runs in (not shown to models).
        password: The new password.
    """
    user = _user(ctx)
    user["password"] = password
    ctx.put("user_account", user)
    return {"message": "Password updated."}


@tool(kind="write")
def update_user_info(
    ctx: ToolContext,
    first_name: str | None = None,
    last_name: str | None = None,
    street: str | None = None,
    city: str | None = None,
) -> dict[str, str]:
    """Change the user's name or address; fields left out (or empty) stay as they are.

    Args:
        ctx: The session the tool runs in (not shown to models).
        first_name: A new first name.
        last_name: A new last name.
        street: A new street.
        city: A new city.
    """
    user = _user(ctx)
    changes = {"first_name": first_name, "last_name": last_name, "street": street, "city": city}
    user.update({field: value for field, value in changes.items() if value})
    ctx.put("user_account", user)
    return _user_info(user)


CONTRACT = Contract(
    name="agentdojo_banking",
    version="1",
    entities=(ACCOUNTS, TRANSACTIONS, SCHEDULED, FILES, USERS),
    tools=(
        get_iban,
        send_money,
        schedule_transaction,
        update_scheduled_transaction,
        get_balance,
        get_most_recent_transactions,
        get_scheduled_transactions,
        read_file,
        get_user_info,
        update_password,
        update_user_info,
    ),
)


def load_data(folder: Path, tasks_file: Path | None) -> WorldData:
    """The banking world on an AgentDojo data folder, and its imported tasks.

    Args:
        folder: An AgentDojo data folder (``data/suites/banking/`` and ``agentdojo_src/``).
        tasks_file: A condition file (see `harness_world.agentdojo.importer.read_condition`);
            default: every user task and injection task without injections.

    Raises:
        WorldError: naming the folder or file at fault.
    """
    from harness_world.agentdojo.check import world_data

    data: WorldData = world_data("banking", folder, tasks_file)  # typed here: the check's
    return data  # module is read silently when a world is type-checked alone


WORLD = WorldSpec(
    contract=CONTRACT,
    load_data=load_data,
    description="AgentDojo's banking suite: a bank account, files and a user account.",
)
