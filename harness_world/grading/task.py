"""Tasks: instruction, target selectors, required and allowed effects, criteria, budgets.

Tasks are TOML files (``tasks/<world>/*.toml``, format in ``docs/task-format.md``) decoded into
msgspec structs with strict validation, so a typo names the file and the field.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from harness_world.engine.canonical import canonical_struct, sha256_hex, to_json
from harness_world.engine.faults import FaultSpec
from harness_world.engine.limits import task_id_problem
from harness_world.engine.paths import builtin_dir
from harness_world.engine.values import ABSENT, Key, typed_equal
from harness_world.engine.world import World
from harness_world.errors import HarnessWorldError
from harness_world.grading.answers import AnswerKind
from harness_world.grading.authority_spec import Authority, CandidateLink, Layer
from harness_world.grading.policy_spec import PolicySheet
from harness_world.grading.taxonomy import Dimension, Taxon, taxon_problem
from harness_world.grading.trust_spec import Forbidden, Receipt
from harness_world.grading.variants import VariantError, expand_variants

__all__ = [
    "SWITCHABLE",
    "Allowance",
    "Answer",
    "Budgets",
    "Clause",
    "Condition",
    "Requirement",
    "Target",
    "Task",
    "TaskError",
    "load_task",
    "load_task_file",
    "load_tasks",
    "select_targets",
]

TraceCriterionName = Literal[
    "read_before_write",
    "pages_followed",
    "no_refused_calls",
    "no_reverted_writes",
    "no_repeated_writes",
    "targets_read",
]


class Condition(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True
):
    """One field filter of a target selector; exactly one operator is given.

    Attributes:
        field: The field name.
        eq: The field equals this value (type-aware: 1 and 1.0 and true differ).
        in_: (TOML key ``in``) the field equals one of these values.
        is_: (TOML key ``is``) ``absent`` (no such field), ``null`` (present and null),
            ``present`` (any value, null included) or ``set`` (present and not null).
        contains: A list field contains this value.
    """

    field: str
    eq: Any = UNSET
    in_: list[Any] | UnsetType = msgspec.field(name="in", default=UNSET)
    is_: Literal["absent", "null", "present", "set"] | UnsetType = msgspec.field(
        name="is", default=UNSET
    )
    contains: Any = UNSET

    def __post_init__(self) -> None:
        given = [op for op in ("eq", "in_", "is_", "contains") if getattr(self, op) is not UNSET]
        if len(given) != 1:
            raise ValueError(
                f"condition on {self.field!r} needs exactly one of eq, in, is, contains"
            )

    def matches(self, row: dict[str, Any]) -> bool:
        """Whether a row satisfies this condition (absent and null are different)."""
        present = self.field in row
        value = row.get(self.field)
        if self.is_ is not UNSET:
            return {
                "absent": not present,
                "null": present and value is None,
                "present": present,
                "set": present and value is not None,
            }[self.is_]
        if not present:
            return False
        if self.eq is not UNSET:
            return typed_equal(value, self.eq)
        if isinstance(self.in_, list):
            return any(typed_equal(value, v) for v in self.in_)
        return isinstance(value, list) and any(typed_equal(v, self.contains) for v in value)

    def index_probes(self) -> list[object] | None:
        """Values to look up in an index on this field, or None if the index cannot answer.

        Indexes hold scalars only: a list or object value is answered by scanning.
        """
        probes: list[object] | None = None
        if self.eq is not UNSET:
            probes = [self.eq]
        elif isinstance(self.in_, list):
            probes = list(self.in_)
        elif self.contains is not UNSET:
            probes = [self.contains]
        if probes is not None:
            return None if any(isinstance(p, list | dict) for p in probes) else probes
        if self.is_ == "absent":
            return [ABSENT]
        if self.is_ == "null":
            return [None]
        return None


class Clause(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True
):
    """A conjunction of conditions (one alternative of a selector's ``any``).

    Attributes:
        where: Conditions that must all hold.
    """

    where: list[Condition]


class Target(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True
):
    """A named set of rows derived from the START state, never a list of hard-coded ids.

    Attributes:
        name: How requirements and allowances refer to it.
        entity: The entity selected from.
        where: Conditions every target satisfies.
        any: Alternatives, at least one of which must hold (empty: no alternatives).
    """

    name: str = "targets"
    entity: str
    where: list[Condition] = []
    any: list[Clause] = []

    def matches(self, row: dict[str, Any]) -> bool:
        """Whether a start-state row is in this target set."""
        if not all(c.matches(row) for c in self.where):
            return False
        return not self.any or any(all(c.matches(row) for c in clause.where) for clause in self.any)


class Requirement(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True
):
    """A required effect.

    Attributes:
        kind: ``set``: each target's ``field`` ends equal to ``value`` (or null with ``null =
            true``, absent with ``absent = true``, the start value plus ``delta``, the start
            list with ``add`` added / ``remove`` removed, compared as sets, or, with ``grown =
            true``, any text or list longer than the start value). ``create``:
            ``count`` new ``entity`` rows whose fields match ``match``; with ``link``, that many
            for EACH target, linked to it through the ``link`` field. ``delete``: each target
            row is gone. ``row``: each target row ends exactly equal to ``row``: every field,
            compared type-aware (1, 1.0 and true differ; no float tolerance), a field absent
            from ``row`` must be absent. Every field of the start and the final row counts as
            required, so nothing else on that row is needed in ``allow``. Meant for target sets
            of one key (e.g. tasks derived from a reference solution's end state); TOML cannot
            write null, so rows holding nulls are built in code.
        target: Which target set (default: the first).
        field: For ``set``.
        value: For ``set``: the final value.
        null: For ``set``: the final value is null (TOML has no null).
        absent: For ``set``: the field ends absent.
        delta: For ``set``: the final value is the start value plus this number.
        add: For ``set`` on a list field: this item is in the final list, the rest unchanged.
        remove: For ``set`` on a list field: this item is gone, the rest unchanged.
        grown: For ``set`` on a text or list field: the final value is longer than the start
            value, whatever was added (an append whose words the task leaves free).
        entity: For ``create``: the entity of the new rows.
        link: For ``create``: the new row's field holding a target's key (per-target creates).
        match: For ``create``: fields (and values) the new rows must have.
        count: For ``create``: how many new rows (per target with ``link``).
        row: For ``row``: the whole final row.
    """

    kind: Literal["set", "create", "delete", "row"]
    target: str = ""
    field: str = ""
    value: Any = UNSET
    null: bool = False
    absent: bool = False
    delta: int | float | UnsetType = UNSET
    add: Any = UNSET
    remove: Any = UNSET
    grown: bool = False
    entity: str = ""
    link: str = ""
    match: dict[str, Any] = {}
    count: int = 1
    row: dict[str, Any] | UnsetType = UNSET

    def __post_init__(self) -> None:
        if (self.kind == "row") != (self.row is not UNSET):
            raise ValueError("`row` is given exactly when kind is 'row'")


class Allowance(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True
):
    """An allowed effect beyond the required ones (required effects are always allowed).

    Attributes:
        entity: The entity.
        fields: Fields that may change on existing rows (``*`` for any).
        target: Restrict changes to this target set's keys (default: the first set).
        anywhere: Allow the field changes on any row of the entity, not only targets.
        create: New rows of the entity may be created.
        link: For ``create``: new rows must link to a target key through this field.
        max_created: For ``create``: at most this many new rows (per target with ``link``);
            0 means no limit.
        delete: Target rows may be deleted.
    """

    entity: str
    fields: list[str] = []
    target: str = ""
    anywhere: bool = False
    create: bool = False
    link: str = ""
    max_created: int = 0
    delete: bool = False


class Answer(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True
):
    """The answer a question task expects, derived from the start state, and how it is read.

    The answer must be the only candidate of its type the final message asserts: hedges (a
    list, a range, either/or, ``about``) fail with a reason (see
    `harness_world.grading.answers`).

    Attributes:
        type: ``count`` (the number of targets), ``ids`` (exactly the target keys), ``amount``
            (the sum of ``field`` over the targets, to the cent), ``date`` (the ``pick`` of
            ``field`` over the targets, compared as ``YYYY-MM-DD``) or ``yes_no`` (yes when
            the target set is not empty). Unset: given by ``mention``.
        target: Which target set.
        field: For ``amount`` and ``date``: the field read from each target.
        pick: For ``date``: ``latest`` (default) or ``earliest`` over the targets.
        read: ``message`` (default): a structured answer (the final message, or its last line,
            is ``{"answer": ...}``) is read first, else the prose of the final message;
            ``structured``: only a structured answer counts.
        mention: The older spelling of ``type``: ``count`` or ``keys`` (= ``ids``).
    """

    type: AnswerKind | UnsetType = UNSET
    target: str = ""
    field: str = ""
    pick: Literal["latest", "earliest"] = "latest"
    read: Literal["message", "structured"] = "message"
    mention: Literal["count", "keys"] | UnsetType = UNSET

    def __post_init__(self) -> None:
        legacy = {"count": "count", "keys": "ids"}
        if (
            self.type is not UNSET
            and self.mention is not UNSET
            and legacy[self.mention] != self.type
        ):
            raise ValueError(f"answer: type {self.type!r} contradicts mention {self.mention!r}")
        if (self.kind in ("amount", "date")) != bool(self.field):
            raise ValueError(
                f"answer: `field` is given exactly for amount and date, not {self.kind}"
            )

    @property
    def kind(self) -> AnswerKind:
        """The answer's type (``type``, else what ``mention`` says, else ``count``)."""
        if self.type is not UNSET:
            return self.type
        if self.mention == "keys":
            return "ids"
        return "count"


class Budgets(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True
):
    """Limits that are part of the task's conditions (a budget cut-off is still an attempt).

    Attributes:
        turns: Model round trips.
        tool_calls: Tool calls (recomputed from the record's call log).
        context_tokens: Prompt tokens over the attempt.
        cost: Money in US dollars.
    """

    turns: int | None = None
    tool_calls: int | None = None
    context_tokens: int | None = None
    cost: float | None = None


SWITCHABLE = ("trace.grounded_writes",)
"""The criteria every task is graded on unless its ``off`` table switches one off, with why."""


def _off_problem(off: dict[str, str]) -> str:
    for name, reason in off.items():
        if name not in SWITCHABLE:
            return f"off names {name!r}, not one of {', '.join(SWITCHABLE)}"
        if not reason.strip():
            return f"off: switching {name} off needs a reason"
    return ""


_TASK_HASHES: dict[int, tuple[Task, str]] = {}  # id -> (the task held, its hash)
_TASK_HASHES_MAX = 100_000
# Labels that decide no verdict and no condition of the attempt: relabelling, reweighting or
# marking a task critical keeps its records graded and its runs resumable.
_UNHASHED = ("dimension", "subdimension", "weight", "critical")


class Task(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True
):
    """One task; see ``docs/task-format.md``.

    Attributes:
        id: Unique id, conventionally ``<world>.<name>``; it names a folder of a run directory,
            so a loaded task's id matches `harness_world.engine.limits.TASK_ID_PATTERN`.
        world: The world it runs in.
        family: A cluster label for statistics (tasks in a family are not independent).
        instruction: What the agent is told.
        targets: Named target sets, derived from the start state.
        require: Required effects (R).
        allow: Allowed effects beyond R (A = R ∪ these).
        trace: Trace criteria to apply.
        answer: A derived check on the final message, if any.
        prose: Criteria that need a person (always ``not_reviewed`` here).
        communicate: Strings the agent must tell the user (``communicate.info``): each must
            appear, case-insensitively, in one of the agent's messages to the user or in its
            final message, with the commas of the message removed (the rule of the public
            conversational benchmarks whose tasks we import).
        budgets: Limits.
        notes: Free text for maintainers (hashed: it explains the criteria).
        faults: The fault schedule the attempt runs under (`FaultSpec`).
        forbid: Forbidden transitions over the ledger and the call log (``forbidden.<id>``).
        receipts: Required receipts per target (``receipts.<id>``).
        authority: The authority condition the task exercises, if any.
        links: Candidate mechanism links, harness criterion -> agent criterion.
        layers: Criterion id -> ``agent`` | ``harness``, overriding the default layer.
        off: A criterion every task is graded on by default (one of `SWITCHABLE`) -> why this
            task is not (a sentence a reader can check; never empty).
        dimension: The harness obligation the task tests, one of
            `harness_world.grading.taxonomy.DIMENSIONS` (its records count under it once in
            the per-dimension tables); null: not assigned.
        subdimension: The property within that dimension (one of its
            `harness_world.grading.taxonomy.SUBDIMENSIONS`); empty: none named.
        weight: The task's weight in the weighted suite pass rate of ``report`` (a positive
            finite number; 1 when not declared).
        critical: The task must pass on its own for a release (``gate`` adds it to the
            policy's critical tasks).
        tools: The only tools the attempt offers the agent (None: every tool of the world); a
            call to another is refused with a typed ``tool_not_allowed`` error. Checked
            against the world's contract when the task is loaded for its world.
        policy: The service rules its records are held to (`PolicySheet`): the ``policy.*``
            verdicts beside the grade (None: no sheet).
    """

    id: str
    world: str
    family: str
    instruction: str
    targets: list[Target] = []
    require: list[Requirement] = []
    allow: list[Allowance] = []
    trace: list[TraceCriterionName] = []
    answer: Answer | None = None
    prose: list[str] = []
    communicate: list[str] = []
    budgets: Budgets = Budgets()
    notes: str = ""
    faults: list[FaultSpec] = []
    forbid: list[Forbidden] = []
    receipts: list[Receipt] = []
    authority: Authority | None = None
    links: list[CandidateLink] = []
    layers: dict[str, Layer] = {}
    off: dict[str, str] = {}
    dimension: Dimension | None = None
    subdimension: str = ""
    weight: float = 1.0
    critical: bool = False
    tools: list[str] | None = None
    policy: PolicySheet | None = None

    def __post_init__(self) -> None:
        if self.dimension is None and self.subdimension:
            raise ValueError(f"subdimension {self.subdimension!r} needs a dimension")
        problem = "" if self.dimension is None else taxon_problem(self.dimension, self.subdimension)
        problem = problem or _weight_problem(self.weight) or _tools_problem(self.tools)
        problem = problem or _off_problem(self.off)
        if problem:
            raise ValueError(problem)

    @property
    def taxon(self) -> Taxon | None:
        """Where the task sits in the taxonomy (None: no dimension assigned)."""
        if self.dimension is None:
            return None
        return Taxon(dimension=self.dimension, subdimension=self.subdimension)

    @property
    def hash(self) -> str:
        """SHA-256 of the canonical encoding of the definition (identity-independent).

        Everything but the labels (``dimension``, ``subdimension``, ``weight``,
        ``critical``): they decide no verdict and no condition of the attempt, so labelling a
        task keeps its records graded and its runs resumable; the per-dimension tables, the
        weighted pass rate and the release gate read the task's current labels. ``tools`` is
        hashed: it changes what the agent may do.
        """
        # an attempt, its replay and its grade asked for the hash four times; a task
        # is a frozen value, so it is computed once per task object.
        known = _TASK_HASHES.get(id(self))
        if known is not None and known[0] is self:
            return known[1]
        pinned = canonical_struct(self)
        for label in _UNHASHED:
            pinned.pop(label, None)
        value = sha256_hex(to_json(pinned))
        if len(_TASK_HASHES) >= _TASK_HASHES_MAX:
            _TASK_HASHES.clear()
        _TASK_HASHES[id(self)] = (self, value)
        return value

    def target(self, name: str = "") -> Target:
        """The target set called ``name`` (the first when empty).

        Raises:
            KeyError: when there is no such target set.
        """
        if not name:
            if not self.targets:
                raise KeyError(f"task {self.id!r} declares no targets")
            return self.targets[0]
        for target in self.targets:
            if target.name == name:
                return target
        raise KeyError(f"task {self.id!r} has no target set {name!r}")


class TaskError(HarnessWorldError, ValueError):
    """A task file is unreadable or invalid; the message names the file and the field."""


def _weight_problem(value: object) -> str:
    """Why ``value`` is not a task weight (a positive finite number); empty when it is."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"weight must be a positive finite number, not {type(value).__name__}"
    if not (math.isfinite(value) and value > 0):
        return f"weight must be a positive finite number, not {value!r}"
    return ""


def _tools_problem(tools: object) -> str:
    """Why ``tools`` is not a tool allow-list (distinct non-empty names); empty when it is."""
    if tools is None:
        return ""
    if not isinstance(tools, list) or not all(isinstance(t, str) and t for t in tools):
        return "tools must be a list of tool names"
    repeated = sorted({t for t in tools if tools.count(t) > 1})
    return f"tools names {', '.join(repeated)} more than once" if repeated else ""


def _labels_problem(data: dict[str, Any]) -> str:
    """Why a task table's ``weight``, ``critical`` or ``tools`` is invalid; empty when valid."""
    if "weight" in data and (problem := _weight_problem(data["weight"])):
        return problem
    critical = data.get("critical", False)
    if not isinstance(critical, bool):
        return f"critical must be true or false, not {critical!r}"
    return _tools_problem(data.get("tools"))


def load_task(path: str | Path) -> Task:
    """Read and validate a task file that declares one task.

    Raises:
        TaskError: naming the file, and the line or field at fault; also for a file of
            variants that declares more than one task (`load_task_file` reads those).
    """
    tasks = load_task_file(path)
    if len(tasks) != 1:
        raise TaskError(
            f"{path}: declares {len(tasks)} tasks as variants: read it with load_task_file "
            "or load_tasks"
        )
    return tasks[0]


def load_task_file(path: str | Path) -> list[Task]:
    """Every task a task file declares: its one task, or one task per variant in file order.

    A file with a ``[[variants]]`` array is a base (its other keys) and the variants that
    differ from it; each variant is the base merged with the variant's own keys (format and
    merge rule in ``docs/task-format.md``), decoded as strictly as a one-task file.

    Raises:
        TaskError: naming the file, the variant (its id and place) and the field at fault.
    """
    source = Path(path)
    data = _read_toml(source)
    if "variants" not in data:
        return [_checked(str(source), _convert(source, data))]
    try:
        expanded = expand_variants(data, _TASK_FIELDS)
    except VariantError as exc:
        raise TaskError(f"{source}: {exc}") from None
    tasks = []
    for where, table in expanded:
        label = f"{source}: variant {table['id']!r} ({where})"
        tasks.append(_checked(label, _convert(source, table, label=label)))
    return tasks


def _read_toml(source: Path) -> dict[str, Any]:
    """A task file's TOML table."""
    try:
        return tomllib.loads(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TaskError(f"{source}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"{source}: invalid TOML: {exc}") from None
    except RecursionError:  # the TOML parser recurses once per nesting level
        raise TaskError(f"{source}: a task file nested too deeply to be read") from None


def _checked(label: str, task: Task) -> Task:
    """``task`` once its names agree with each other (``label`` names it in errors)."""
    names = [t.name for t in task.targets]
    if len(set(names)) != len(names):
        raise TaskError(f"{label}: target set names must be unique, got {names}")
    referenced = [r.target for r in task.require] + [a.target for a in task.allow]
    referenced += [r.target for r in task.receipts]
    for name in referenced:
        if name and name not in names:
            raise TaskError(f"{label}: unknown target set {name!r} (declared: {names})")
    for group, kind in (
        (task.faults, "fault"),
        (task.forbid, "forbidden"),
        (task.receipts, "receipt"),
    ):
        ids = [item.id for item in group]
        if len(set(ids)) != len(ids):
            raise TaskError(f"{label}: {kind} ids must be unique, got {ids}")
    needs_targets = [r for r in task.require if r.kind != "create" or r.link]
    if (needs_targets or task.answer or task.receipts) and not task.targets:
        raise TaskError(f"{label}: set, delete, linked create and answer need a target set")
    return task


def _convert(source: Path, data: dict[str, Any], *, label: str = "") -> Task:
    """A task's table as a task, its id a safe one (ids name run directory folders).

    ``label`` names a variant in errors (empty: the file holds one task).
    """
    problem = ""
    if "dimension" in data or "subdimension" in data:
        problem = taxon_problem(data.get("dimension"), data.get("subdimension", ""))
    problem = problem or _labels_problem(data)
    if problem:
        who = label or f"{source}: task {data.get('id', '?')!r}"
        raise TaskError(f"{who}: {problem}")
    label = label or str(source)
    try:
        task = msgspec.convert(data, Task)
    except msgspec.ValidationError as exc:
        raise TaskError(f"{label}: {exc}") from None
    problem = task_id_problem(task.id)
    if problem:
        raise TaskError(f"{label}: id: {problem}")
    return task


_TASK_FIELDS = tuple(f.encode_name for f in msgspec.structs.fields(Task))


def load_tasks(world: str | None = None, folder: str | Path | None = None) -> list[Task]:
    """Every task under ``folder`` (default: the built-in tasks), optionally of one world.

    Raises:
        TaskError: for the first invalid file, or duplicate task ids.
    """
    root = Path(folder) if folder is not None else builtin_dir("tasks")
    if folder is not None and not root.is_dir():
        raise TaskError(f"{root}: no such task folder")
    files = sorted(root.rglob("*.toml")) if root.is_dir() else []
    tasks = [t for p in files for t in load_task_file(p)]
    seen: dict[str, int] = {}
    for task in tasks:
        seen[task.id] = seen.get(task.id, 0) + 1
    duplicates = sorted(k for k, v in seen.items() if v > 1)
    if duplicates:
        raise TaskError(f"{root}: duplicate task ids: {', '.join(duplicates)}")
    return sorted((t for t in tasks if world is None or t.world == world), key=lambda t: t.id)


_TARGET_CACHE: dict[tuple[str, str, str], tuple[Key, ...]] = {}


def select_targets(world: World, task: Task, name: str = "") -> tuple[Key, ...]:
    """The keys of a target set on the world's start state, in seed order.

    Indexed conditions narrow the candidates first; results are cached per (world, task, set),
    so grading many records of one task pays for derivation once.
    """
    target = task.target(name)
    cache_key = (world.hash, task.hash, target.name)
    cached = _TARGET_CACHE.get(cache_key)
    if cached is not None:
        return cached
    candidates = _indexed_candidates(world, target)
    keys = world.keys(target.entity) if candidates is None else candidates
    selected: list[Key] = []
    for key in keys:
        row = world.get(target.entity, key)
        if row is not None and target.matches(row):
            selected.append(key)
    result = tuple(selected)
    _TARGET_CACHE[cache_key] = result
    return result


def _indexed_candidates(world: World, target: Target) -> list[Key] | None:
    """The fewest keys, in seed order, that the target's indexed conditions admit.

    None when no condition is indexed: every row of the entity is then a candidate.
    """
    candidates: list[Key] | None = None
    key_field = world.contract.entity(target.entity).key
    for condition in target.where:
        probes = condition.index_probes()
        if probes is None:
            continue
        if condition.field == key_field and (condition.eq is not UNSET or condition.in_):
            # A condition on the key names its rows: look them up, never scan the entity.
            named = {p for p in probes if isinstance(p, str | int) and not isinstance(p, bool)}
            return _in_seed_order(world, target.entity, named)
        hits = _index_hits(world, target.entity, condition.field, probes)
        if hits is not None and (candidates is None or len(hits) < len(candidates)):
            candidates = _in_seed_order(world, target.entity, set(hits))
    return candidates


def _index_hits(
    world: World, entity: str, field: str, probes: Iterable[object]
) -> list[Key] | None:
    """Every key the index of ``field`` holds for the probes, or None when it has no index."""
    hits: list[Key] = []
    for probe in probes:
        found = world.lookup(entity, field, probe)
        if found is None:
            return None
        hits.extend(found)
    return hits


def _in_seed_order(world: World, entity: str, keys: set[Key]) -> list[Key]:
    """The keys the world holds, in seed order."""
    present = [k for k in keys if world.position(entity, k) is not None]
    return sorted(present, key=lambda k: world.position(entity, k) or 0)
