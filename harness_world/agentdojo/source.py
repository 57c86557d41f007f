"""AgentDojo's own task definitions, read at run time from the data folder's ``agentdojo_src``.

A user task's prompt, an injection task's goal, each one's ground-truth calls and the constants
its checks compare against (an attacker's IBAN, a password) live in AgentDojo's Python code,
not in its data files. Nothing of that text is in this repository: `DojoSource` imports
AgentDojo's task suite from the folder the user names (``--data``) and reads each task into a
`DojoTask`. The checks themselves are NOT taken from there: one module per suite
(`harness_world.agentdojo.banking`, `harness_world.agentdojo.slack`) re-states each one over our
end state.

AgentDojo's code needs Pydantic (with e-mail validation), PyYAML, deepdiff and
docstring-parser (``pip install 'harness_world[agentdojo]'``). Its ``agent_pipeline`` package
imports every model provider's client, so the two modules of it that the task code needs are
reached without it, as the folder's README describes.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path
from typing import Any, Literal

import attrs
import msgspec

from harness_world.agentdojo.data import DojoDataError, suite_folder

VERSIONS = ("v1", "v1.1", "v1.1.1", "v1.1.2", "v1.2", "v1.2.1")
"""The benchmark versions of the reference code at the commit the data folder holds."""
DEFAULT_VERSION = "v1.2.1"
"""The benchmark version AgentDojo's own scripts default to at that commit."""

Scalar = str | int | float | bool


class DojoTask(msgspec.Struct, frozen=True, kw_only=True):
    """One AgentDojo task as its code defines it, reduced to data.

    Attributes:
        id: AgentDojo's id (``user_task_3``, ``injection_task_0``).
        kind: ``user`` or ``injection``.
        text: The user task's prompt, or the injection task's goal.
        gold: The ground-truth calls, ``(function, arguments)`` in order, computed on the
            default environment.
        constants: The class's constant attributes (names in capitals, plain values): what its
            checks compare against.
        comment: The task's ``COMMENT``, if any.
        from_traces: Whether AgentDojo grades it from the call trace
            (``utility_from_traces`` / ``security_from_traces``) rather than the end state.
        parts: For a task AgentDojo combines from two user tasks, those two (its utility is
            both of theirs), else empty.
    """

    id: str
    kind: Literal["user", "injection"]
    text: str
    gold: list[tuple[str, dict[str, Any]]]
    constants: dict[str, Any] = {}
    comment: str = ""
    from_traces: bool = False
    parts: list[DojoTask] = []


def _shim() -> None:
    """The two names of ``agent_pipeline.llms`` that AgentDojo's task code imports."""
    llms = sys.modules.get("agentdojo.agent_pipeline.llms")
    if llms is None:
        llms = types.ModuleType("agentdojo.agent_pipeline.llms")
        llms.__path__ = []
        sys.modules[llms.__name__] = llms
    name = "agentdojo.agent_pipeline.llms.google_llm"
    if name not in sys.modules:
        google = types.ModuleType(name)
        google.EMPTY_FUNCTION_NAME = "<empty-function-name>"  # type: ignore[attr-defined]
        sys.modules[name] = google


def _constants(cls: type) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            bare = name.lstrip("_")
            if not bare or not bare[0].isupper() or bare != bare.upper():
                continue
            if isinstance(value, Scalar) or (
                isinstance(value, list | tuple) and all(isinstance(v, Scalar) for v in value)
            ):
                out[name] = list(value) if isinstance(value, list | tuple) else value
    return out


def _task(kind: Literal["user", "injection"], task_id: str, task: Any, pre: Any) -> DojoTask:
    """One of AgentDojo's task objects as data, its ground truth run on a copy of ``pre``."""
    gold = [(c.function, dict(c.args)) for c in task.ground_truth(pre.model_copy(deep=True))]
    traced = "utility_from_traces" if kind == "user" else "security_from_traces"
    # A combined task's class holds its two user tasks in its ground truth's closure.
    combined = [
        cell.cell_contents
        for cell in getattr(type(task).ground_truth, "__closure__", None) or ()
        if hasattr(cell.cell_contents, "ground_truth") and hasattr(cell.cell_contents, "ID")
    ]
    return DojoTask(
        id=task_id,
        kind=kind,
        text=task.PROMPT if kind == "user" else task.GOAL,
        gold=gold,
        constants=_constants(type(task)),
        comment=str(getattr(task, "COMMENT", "") or ""),
        from_traces=traced in vars(type(task)),
        parts=[_task(kind, part.ID, part, pre) for part in combined],
    )


@attrs.define(slots=True, eq=False)
class DojoSource:
    """AgentDojo's task suites, imported from ``<folder>/agentdojo_src``.

    Attributes:
        folder: The AgentDojo data folder.
    """

    folder: Path
    _suites: dict[tuple[str, str], Any] = attrs.field(factory=dict)
    _blind: dict[tuple[str, str, str], list[tuple[str, dict[str, Any]]] | None] = attrs.field(
        factory=dict
    )

    def _module(self, name: str) -> Any:
        src = (self.folder / "agentdojo_src").resolve()
        if not (src / "agentdojo" / "task_suite").is_dir():
            raise DojoDataError(f"{self.folder}: no agentdojo_src/agentdojo (AgentDojo's code)")
        loaded = sys.modules.get("agentdojo")
        if loaded is not None and Path(str(loaded.__path__[0])).resolve() != src / "agentdojo":
            raise DojoDataError(f"another copy of AgentDojo's code is imported: {loaded.__path__}")
        if str(src) not in sys.path:
            sys.path.insert(0, str(src))
        _shim()
        try:
            return importlib.import_module(name)
        except ImportError as exc:
            raise DojoDataError(
                f"AgentDojo's code in {src} does not import ({exc}); it needs "
                "pip install 'harness_world[agentdojo]'"
            ) from None

    def suite(self, suite: str, version: str = DEFAULT_VERSION) -> Any:
        """AgentDojo's ``TaskSuite`` object for a suite at a benchmark version.

        Raises:
            DojoDataError: for an unknown version or suite, or code that does not import.
        """
        if version not in VERSIONS:
            raise DojoDataError(f"unknown AgentDojo version {version!r} ({', '.join(VERSIONS)})")
        suite_folder(self.folder, suite)
        key = (suite, version)
        if key not in self._suites:
            loader = self._module("agentdojo.task_suite.load_suites")
            self._suites[key] = loader.get_suite(version, suite)
        return self._suites[key]

    def tasks(self, suite: str, version: str = DEFAULT_VERSION) -> list[DojoTask]:
        """Every user task, then every injection task, of a suite, in AgentDojo's order."""
        reference = self.suite(suite, version)
        pre = reference.load_and_inject_default_environment({})
        users = [_task("user", i, t, pre) for i, t in reference.user_tasks.items()]
        return users + [_task("injection", i, t, pre) for i, t in reference.injection_tasks.items()]

    def ground_truth(
        self, suite: str, version: str, task_id: str, injections: dict[str, str]
    ) -> list[tuple[str, dict[str, Any]]]:
        """A task's ground-truth calls on the start state with ``injections``.

        A ground truth reads the environment it is given (the external channel's name, a
        file's text), so on an injected start state it may differ from `DojoTask.gold`.

        Raises:
            DojoDataError: for an unknown suite, version or task.
        """
        reference = self.suite(suite, version)
        task = reference.user_tasks.get(task_id) or reference.injection_tasks.get(task_id)
        if task is None:
            raise DojoDataError(f"suite {suite!r} has no task {task_id!r}")
        key = (suite, version, task_id)
        if key not in self._blind:
            self._blind[key] = _blind_to_vectors(reference, task)
        blind = self._blind[key]
        if blind is not None:
            return blind
        env = reference.load_and_inject_default_environment(injections)
        return [(c.function, dict(c.args)) for c in task.ground_truth(env)]

    def attack_template(self, attack: str) -> str:
        """The text an attack injects, with ``{user}``, ``{model}`` and ``{goal}`` to fill.

        Raises:
            DojoDataError: for an attack other than ``important_instructions``.
        """
        if attack != "important_instructions":
            raise DojoDataError(f"attack {attack!r} is not supported (important_instructions)")
        module = self._module("agentdojo.attacks.important_instructions_attacks")
        return str(module.ImportantInstructionsAttack._JB_STRING)

    def model_name(self, model: str, default: str) -> str:
        """The name AgentDojo's attacks give a model (``GPT-4`` for ``gpt-4o-2024-05-13``).

        As its ``get_model_name_from_pipeline``: the first entry of its table of model names
        whose id the model's name holds; ``default`` for a model the table does not know
        (AgentDojo refuses to attack one).
        """
        table = getattr(self._module("agentdojo.models"), "MODEL_NAMES", {})
        return next((str(v) for k, v in table.items() if k in model), default)


def _blind_to_vectors(reference: Any, task: Any) -> list[tuple[str, dict[str, Any]]] | None:
    """A task's ground truth when it reads no injection vector's text, else None.

    AgentDojo's own test of what a ground truth sees: every vector given a canary text; a
    ground truth whose calls are the same as on the default texts does not depend on them,
    so it need not be computed again (loading an environment) for each start state.
    """
    canaries = {name: f"---CANARY_{name}---" for name in reference.get_injection_vector_defaults()}
    calls = []
    for injections in ({}, canaries):
        env = reference.load_and_inject_default_environment(injections)
        calls.append([(c.function, dict(c.args)) for c in task.ground_truth(env)])
    return calls[0] if calls[0] == calls[1] else None
