"""τ²-bench retail tasks and results files, read into harness_world tasks and external runs.

The data is NOT part of this repository. It is © 2025 Sierra Research, MIT licence (the LICENSE
file beside the data keeps the notice, and `DATA_NOTICE` is printed wherever it is used); the
file formats are those of τ²-bench (sierra-research/tau2-bench).

Each τ² task becomes an `ImportedTask`:

* instruction: the user scenario (what the simulated customer knows and wants), in words;
* oracle: the gold action list, run as a call list (erroring gold calls included, as τ² does);
* required effects: every row the gold actions change must end exactly like the gold's (kind
  ``row`` on a target set of that one key); allowed effects: those and nothing else;
* trace: ``read_before_write`` when the gold reads every row it writes first (otherwise the
  notes say which write is blind, and the criterion is left out); for a task whose gold writes
  nothing, ``targets_read`` over the rows the gold read (a proxy τ² does not have: without it a
  do-nothing attempt passes every automated criterion);
* ``communicate_info``: graded by τ²'s own rule (each string, case-insensitive, in one of the
  agent's messages with commas removed: ``communicate.info``);
* prose: ``nl_assertions``, left ``not_reviewed`` (no model judge);
* family: the customer the gold acts for (tasks about one customer are not independent);
* dimension: Lifecycle/completion for a gold that writes (the required end state must be
  reached), Observability/user_report for one that only reads and must tell the customer
  something, Context/completeness for one that only reads (the rows it read must be shown);
* policy: τ²'s retail policy as a sheet (`policy_sheet`: authenticated before any account
  read or write, an explicit yes before each write, no hand-off unless the gold hands off),
  judged beside the grade: τ²'s reward does not look at it, and our grade stays τ²'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from harness_world.engine.calls import WriteImage
from harness_world.engine.limits import clean_text, read_json_file, task_id_problem
from harness_world.engine.world import World
from harness_world.engine.world import load_world as load_world_folder
from harness_world.errors import HarnessWorldError
from harness_world.evidence.record import Outcome, OutcomeStatus, Record, make_record
from harness_world.grading.checker import grade
from harness_world.grading.policy_spec import PolicySheet
from harness_world.grading.task import Task
from harness_world.grading.taxonomy import Dimension
from harness_world.tau2.gold import ExternalRun, GoldCall, ImportedTask, exact_effects, read_targets

DATA_NOTICE = "τ²-bench retail data © 2025 Sierra Research, MIT licence (see LICENSE beside it)"
WORLD = "tau2_retail"
DB_FILE = "db.json"
TASKS_FILE = "tasks_train.json"
ALL_TASKS_FILE = "tasks.json"
SPLIT_FILE = "split_tasks.json"
SPLITS = ("train", "test", "all")

# τ²'s termination reasons, mapped to our outcomes (anything else: completed, reason kept).
_TERMINATION: dict[str, OutcomeStatus] = {
    "agent_stop": "completed",
    "user_stop": "completed",
    "max_steps": "turn_limit",
    "too_many_errors": "error",
    "agent_error": "error",
    "user_error": "error",
}


class FormatError(HarnessWorldError, ValueError):
    """A τ² file is unreadable or not in the expected shape; the message names the path."""


def load_world(data: str | Path) -> World:
    """The retail world on ``<data>/db.json``.

    Raises:
        FormatError: when the folder or its db.json is missing.
        WorldError: when db.json is not a regular file, breaks a limit of
            `harness_world.engine.limits`, or does not fit the contract.
    """
    folder = Path(data)
    if not folder.is_dir():
        raise FormatError(f"{folder}: no such data folder")
    if not (folder / DB_FILE).exists():
        raise FormatError(f"{folder / DB_FILE}: no such file")
    return load_world_folder(WORLD, seed_file=folder / DB_FILE)


def _read_json(path: Path) -> Any:
    """A τ² JSON file's value, within the limits records have (size, depth, JSON types)."""
    try:
        return read_json_file(path)
    except OSError as exc:
        raise FormatError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise FormatError(f"{path}: {exc}") from None


def read_tasks(path: str | Path) -> list[dict[str, Any]]:
    """The raw τ² tasks of a tasks file (a JSON list of task objects).

    Raises:
        FormatError: naming the file (and the task) at fault.
    """
    source = Path(path)
    data = _read_json(source)
    if not isinstance(data, list):
        raise FormatError(f"{source}: expected a JSON list of tasks")
    for i, raw in enumerate(data):
        where = f"{source}: task #{i}"
        if not isinstance(raw, dict) or "id" not in raw:
            raise FormatError(f"{where}: expected an object with an id")
        _our_id(raw["id"], where)
        criteria = raw.get("evaluation_criteria")
        actions = criteria.get("actions") if isinstance(criteria, dict) else None
        if not isinstance(actions, list | None):
            raise FormatError(f"{where} ({raw['id']}): evaluation_criteria.actions is not a list")
        for action in actions or []:
            if not (
                isinstance(action, dict)
                and isinstance(action.get("name"), str)
                and isinstance(action.get("arguments", {}), dict)
            ):
                raise FormatError(f"{where} ({raw['id']}): malformed action {action!r}")
    return data


def _our_id(tau2_id: object, where: str) -> str:
    """Our task id for a τ² task id (``tau2_retail.<id>``), which must be a safe id.

    τ² task ids are strings (its ``Task.id: str`` refuses a number), so a number or an object
    is refused here too, not written out as text.

    Raises:
        FormatError: naming ``where``, for an id that is not a string or not a safe task id.
    """
    if not isinstance(tau2_id, str):
        raise FormatError(f"{where}: id must be a string (as in τ²), not {type(tau2_id).__name__}")
    problem = task_id_problem(f"{WORLD}.{tau2_id}")
    if problem:
        raise FormatError(f"{where}: id: {problem}")
    return f"{WORLD}.{tau2_id}"


def _instruction(raw: dict[str, Any]) -> str:
    scenario = raw.get("user_scenario") or {}
    instructions = scenario.get("instructions")
    if isinstance(instructions, str):
        return instructions.strip()
    parts = []
    labels = (
        ("reason_for_call", "Reason for the call"),
        ("known_info", "What the customer knows"),
        ("unknown_info", "What the customer does not know"),
        ("task_instructions", "How the customer behaves"),
    )
    for field, label in labels:
        value = (instructions or {}).get(field)
        if isinstance(value, str) and value.strip() and value.strip() != ".":
            parts.append(f"{label}: {value.strip()}")
    persona = scenario.get("persona")
    if isinstance(persona, str) and persona.strip():
        parts.append(f"Persona: {persona.strip()}")
    head = "A customer of the online retail store contacts you (τ²-bench user scenario)."
    return "\n".join([head, *parts])


def _customer(record: Record) -> str:
    """The user id the gold acts for: a find_user result, a user_id argument or an order's."""
    for call in record.calls:
        if call.ok and call.tool.startswith("find_user_id") and isinstance(call.result, str):
            return call.result
        if isinstance(call.args, dict) and isinstance(call.args.get("user_id"), str):
            return str(call.args["user_id"])
        if (
            call.ok
            and isinstance(call.result, dict)
            and isinstance(call.result.get("user_id"), str)
        ):
            return str(call.result["user_id"])
    return ""


def _prose(criteria: dict[str, Any]) -> list[str]:
    return [f"nl_assertion: {text}" for text in criteria.get("nl_assertions") or []]


def _communicate(criteria: dict[str, Any], where: str) -> list[str]:
    """τ²'s ``communicate_info``: graded by its own mechanical rule (``communicate.info``).

    Left out when the task's reward basis is given and does not name ``COMMUNICATE`` (τ²
    multiplies only the components of the basis; its default basis names it).
    """
    info = criteria.get("communicate_info") or []
    if not isinstance(info, list) or not all(isinstance(i, str) for i in info):
        raise FormatError(f"{where}: communicate_info must be a list of strings")
    basis = criteria.get("reward_basis")
    if basis and "COMMUNICATE" not in basis:
        return []
    return list(info)


GROUNDED_WRITES = "trace.grounded_writes"
GROUNDED_WRITES_OFF = (
    "τ² decides a τ² task by its end database and its gold actions, which name ids without "
    "reading them, and our grade of a τ² task must stay τ²'s reward; whether a write named an "
    "id nothing had shown is reported beside the grade, as the ungrounded_write advisory"
)
"""Why every imported writing task switches ``trace.grounded_writes`` off."""


def _writing_task(
    world: World, base: Task, diff: list[WriteImage], record: Record, notes: list[str]
) -> Task:
    """Require the gold's end state exactly; read_before_write unless the gold itself is blind."""
    targets, require = exact_effects(world, diff)
    task = msgspec.structs.replace(
        base,
        targets=targets,
        require=require,
        trace=["read_before_write"],
        off={GROUNDED_WRITES: GROUNDED_WRITES_OFF},
    )
    verdict = next(
        v for v in grade(record, task, world).verdicts if v.id == "trace.read_before_write"
    )
    if verdict.status != "passed":
        notes.append(
            "read_before_write left out: the gold itself writes a row it has not read "
            f"({verdict.detail.split(': ', 1)[-1]})."
        )
        task = msgspec.structs.replace(task, trace=[])
    notes.append(f"Required: the end state of the {len(diff)} row(s) the gold changes.")
    return task


def _reading_task(world: World, base: Task, record: Record, notes: list[str]) -> Task:
    """A gold that changes nothing: targets_read over what it read (a proxy τ² lacks)."""
    targets = read_targets(world, record)
    notes.append(
        "The gold changes nothing: a do-nothing attempt passes the state criteria."
        + (
            " targets_read asks for the rows the gold read (not a τ² criterion)."
            if targets
            else " The gold reads no row either."
        )
    )
    return msgspec.structs.replace(base, targets=targets, trace=["targets_read"] if targets else [])


IDENTIFY = ("find_user_id_by_email", "find_user_id_by_name_zip")
HANDOFF = "transfer_to_human_agents"


def policy_sheet(gold: Iterable[GoldCall]) -> PolicySheet:
    """τ²'s retail policy as a sheet: authenticate, confirm every write, hand off only if due.

    A user is authenticated by a user id found by email or by name and zip; users and orders
    are account data (an order belongs to its ``user_id``); every write tool needs the user's
    explicit yes; a hand-off is right only in a task whose gold hands off (the task cannot be
    done within the agent's scope).
    """
    return PolicySheet(
        identify=list(IDENTIFY),
        accounts={"users": "user_id", "orders": "user_id"},
        handoff=HANDOFF,
        handoff_expected=any(call.tool == HANDOFF for call in gold),
    )


def _taxon(writes: bool, tells: bool) -> tuple[Dimension, str]:
    """The taxonomy place of an imported task (see the module notes)."""
    if writes:
        return "Lifecycle", "completion"
    return ("Observability", "user_report") if tells else ("Context", "completeness")


def import_task(world: World, raw: dict[str, Any], source: str = TASKS_FILE) -> ImportedTask:
    """One raw τ² task as an imported task (see the module notes for what maps to what)."""
    task_id = _our_id(raw.get("id"), f"{source}: task {clean_text(str(raw.get('id')))[:80]!r}")
    tau2_id = task_id.split(".", 1)[1]
    criteria = raw.get("evaluation_criteria") or {}
    gold = [
        GoldCall(
            id=str(action.get("action_id", f"{tau2_id}_{i}")),
            tool=action["name"],
            args=action.get("arguments") or {},
        )
        for i, action in enumerate(criteria.get("actions") or [])
    ]
    session = world.open_session()
    for call in gold:
        session.call(call.tool, call.args)
    diff = session.diff()
    record = make_record(session, outcome=Outcome(status="completed"))
    customer = _customer(record)
    notes = [
        f"Imported from τ²-bench retail task {tau2_id} ({source}); {DATA_NOTICE}.",
        f"τ² reward basis: {', '.join(criteria.get('reward_basis') or [])}.",
    ]
    untold = criteria.get("communicate_info") or []
    if untold and not _communicate(criteria, f"{source}: task {tau2_id}"):
        notes.append(f"τ² communicate_info outside its reward basis (not graded): {untold!r}")
    description = raw.get("description") or {}
    purpose = description.get("purpose") if isinstance(description, dict) else description
    if purpose:
        notes.append(f"τ² purpose: {purpose}")
    notes += [f"τ² open issue: {issue.get('title', '')}" for issue in raw.get("issues") or []]
    communicate = _communicate(criteria, f"{source}: task {tau2_id}")
    dimension, subdimension = _taxon(bool(diff), bool(communicate))
    base = Task(
        id=task_id,
        world=WORLD,
        family=f"{WORLD}.customer.{customer}" if customer else f"{WORLD}.task.{tau2_id}",
        dimension=dimension,
        subdimension=subdimension,
        instruction=_instruction(raw),
        prose=_prose(criteria),
        communicate=communicate,
        policy=policy_sheet(gold),
    )
    if diff:
        task = _writing_task(world, base, diff, record, notes)
    else:
        task = _reading_task(world, base, record, notes)
    task = msgspec.structs.replace(task, notes="\n".join(notes))
    scenario = raw.get("user_scenario")
    return ImportedTask(
        task=task,
        gold=gold,
        source=f"{source} #{tau2_id}",
        user_scenario=scenario if isinstance(scenario, dict) else {},
        customer=customer,
    )


def import_tasks(
    world: World, path: str | Path, only: Iterable[str] | None = None
) -> list[ImportedTask]:
    """Every task of a τ² tasks file (only those with an id in ``only``, when given).

    Raises:
        FormatError: naming the file and the task at fault.
    """
    source = Path(path)
    raws = read_tasks(source)
    ids = [str(r["id"]) for r in raws]  # strings: `read_tasks` refuses any other id
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise FormatError(f"{source}: duplicate task ids: {', '.join(duplicates)}")
    if only is not None:
        wanted = set(only)
        raws = [r for r in raws if str(r["id"]) in wanted]
    return [import_task(world, raw, source.name) for raw in raws]


def read_split(path: str | Path) -> dict[str, list[str]]:
    """τ²'s split file: split name -> task ids (``{"train": [...], "test": [...], ...}``).

    Raises:
        FormatError: naming the file when it is not an object of lists of ids.
    """
    source = Path(path)
    data = _read_json(source)
    if not isinstance(data, dict) or not all(
        isinstance(ids, list) and all(isinstance(i, str) for i in ids) for ids in data.values()
    ):
        # τ² matches a task's string id against these lists: a number would select nothing.
        raise FormatError(f"{source}: expected an object mapping split names to lists of ids")
    return {str(name): list(ids) for name, ids in data.items()}


def split_tasks(
    world: World, data: str | Path, split: str = "train"
) -> tuple[Path, list[ImportedTask]]:
    """The tasks of one split of a τ² data folder, and the tasks file they come from.

    With τ²'s layout (``tasks.json`` and ``split_tasks.json``, as τ²'s ``get_tasks`` reads
    them), a split is the tasks of ``tasks.json`` whose ids the split file lists under that
    name; ``all`` is its ``base`` split when it has one, else every task. Without a split
    file, ``train`` and ``test`` are ``tasks_train.json`` and ``tasks_test.json``, and ``all``
    is ``tasks.json`` (else both of those).

    Raises:
        FormatError: for an unknown split, a split the folder does not hold, or a bad file.
    """
    folder = Path(data)
    if split not in SPLITS:
        raise FormatError(f"unknown split {split!r}: expected one of {', '.join(SPLITS)}")
    every, split_file = folder / ALL_TASKS_FILE, folder / SPLIT_FILE
    if every.is_file() and split_file.is_file():
        splits = read_split(split_file)
        name = "base" if split == "all" else split
        if name not in splits and split != "all":
            raise FormatError(f"{split_file}: no split {split!r} (has: {', '.join(splits)})")
        return every, import_tasks(world, every, splits.get(name))
    if split == "all" and every.is_file():
        return every, import_tasks(world, every)
    names = ["train", "test"] if split == "all" else [split]
    files = [folder / f"tasks_{name}.json" for name in names]
    present = [f for f in files if f.is_file()]
    if not present or (split != "all" and len(present) != len(files)):
        raise FormatError(
            f"{folder}: no tasks for split {split!r} "
            f"(looked for {SPLIT_FILE} with {ALL_TASKS_FILE}, and {files[0].name})"
        )
    return present[0], [t for f in present for t in import_tasks(world, f)]


# -- results files ---------------------------------------------------------------------------


def _arguments(value: Any, where: str) -> Any:
    if isinstance(value, str):  # OpenAI-style: arguments as a JSON text
        try:
            return json.loads(value) if value.strip() else {}
        except ValueError as exc:
            raise FormatError(f"{where}: arguments are not valid JSON: {exc}") from None
    return {} if value is None else value


def read_results(path: str | Path) -> list[ExternalRun]:
    """The runs of a τ²-bench results file.

    Accepted shape (what τ²-bench writes, reduced to what is read)::

        {"simulations": [{
            "task_id": "0", "trial": 0,
            "termination_reason": "user_stop",              # optional
            "messages": [
                {"role": "assistant", "content": "...",
                 "tool_calls": [{"name": "...", "arguments": {...}, "requestor": "assistant"}]},
                {"role": "tool", "content": "..."},
                {"role": "user", "content": "..."}],
            "reward_info": {"reward": 1.0}}]}                  # may be null

    The agent's calls are the ``tool_calls`` of assistant messages (calls whose ``requestor``
    is ``user`` are skipped; retail has none), in order; ``arguments`` may be an object or a
    JSON text. The final message is the last assistant message with text.

    Raises:
        FormatError: naming the file and the simulation at fault.
    """
    source = Path(path)
    data = _read_json(source)
    sims = data.get("simulations") if isinstance(data, dict) else None
    if not isinstance(sims, list):
        raise FormatError(f"{source}: expected an object with a list of simulations")
    return [_external_run(sim, f"{source}: simulation #{i}") for i, sim in enumerate(sims)]


def _agent_calls(
    messages: list[Any], where: str
) -> tuple[list[tuple[str, Any]], str, list[tuple[int, str, str]]]:
    """The agent's tool calls in order, its last text message, and the conversation.

    The conversation is one (tool calls made so far, the agent's last text, the user's text)
    per user message with text.
    """
    calls: list[tuple[str, Any]] = []
    final = ""
    said = ""
    conversation: list[tuple[int, str, str]] = []
    for j, message in enumerate(messages):
        if not isinstance(message, dict):
            raise FormatError(f"{where}: message #{j} is not an object")
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str) and content.strip():
            conversation.append((len(calls), said, content))
            said = ""
        if message.get("role") != "assistant":
            continue
        if isinstance(content, str) and content.strip():
            final = said = content
        for call in message.get("tool_calls") or []:
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise FormatError(f"{where}: message #{j}: malformed tool call {call!r}")
            if call.get("requestor", "assistant") == "user":
                continue
            calls.append((call["name"], _arguments(call.get("arguments"), where)))
    return calls, final, conversation


def _external_run(sim: Any, where: str) -> ExternalRun:
    if not isinstance(sim, dict) or "task_id" not in sim:
        raise FormatError(f"{where}: expected an object with a task_id")
    messages = sim.get("messages") or []
    if not isinstance(messages, list):
        raise FormatError(f"{where}: messages is not a list")
    calls, final, conversation = _agent_calls(messages, where)
    reward_info = sim.get("reward_info")
    reward = reward_info.get("reward") if isinstance(reward_info, dict) else None
    termination = str(sim.get("termination_reason") or "")
    status = _TERMINATION.get(termination, "completed")
    task_id = sim["task_id"]
    if not isinstance(task_id, str):  # τ²'s SimulationRun.task_id is a string
        raise FormatError(f"{where}: task_id must be a string, not {type(task_id).__name__}")
    trial = sim.get("trial") or 0
    if not isinstance(trial, int) or isinstance(trial, bool):
        raise FormatError(f"{where}: trial must be an integer, got {trial!r}")
    return ExternalRun(
        task_id=task_id,
        trial=trial,
        calls=calls,
        final_message=final,
        outcome=Outcome(status=status, reason=termination),
        reward=float(reward) if isinstance(reward, int | float) else None,
        conversation=conversation,
    )
