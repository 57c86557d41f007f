"""Two scored layers after admission, and candidate mechanism links.

**Admission** is not a score. A record is admitted when its evidence verified on replay, it was
made for this task (same id, world and hash: the task is pinned), the fault schedule it carries
is the task's, and the ledger (every ``proof_entity`` of a receipt and every ``append_only``
entity the task names) was only appended to. Only admitted records are scored.

Every criterion of an admitted record is then tagged ``agent`` (task effects, answers,
forbidden transitions, receipts, trace criteria) or ``harness`` (budgets, and the ``harness.*``
criteria below, read from the call log); a task's ``layers`` table overrides the default. The
run gets both verdict vectors, never summed into one number.

Harness criteria (read from the call log; the *retry* of a failed write is the first later call
of the same tool with the same arguments apart from the key, however far away and whatever the
error was). The retry criteria hold for every write tool, keyed or not:

- ``harness.same_key_retry`` (only in a world with a write tool that takes an
  ``idempotency_key``, and over those tools): every retry of a write whose response may have
  been processed (a ``timeout``) reuses the failed call's key, and that call had one (a retry
  with another key or none fails, and so does any retry of a call made without a key). After
  an error that says nothing was processed (``unavailable``, ``rate_limited``, and the world's
  own answers such as ``conflict`` or ``refused``:
  `harness_world.grading.harness.NOTHING_PROCESSED`) the retry is a new request: a new key, or
  none, is right.
- ``harness.bounded_retries``: no write is retried more than `MAX_RETRIES` times in a row.
- ``harness.reconcile_before_retry``: after a ``timeout``, a read that looks the lost write's
  effect up comes before the retry: a result holding whole a row the write changes or created,
  or a call of its lookup tool given the write's values, as the write tool declares
  (`harness_world.engine.Tool.lookups`; a tool that declares none accepts any successful read
  but ``wait``). A retry with the failed call's key that the provider answers with the
  original (`harness_world.engine.Tool.replayed` true) is a confirmed replay and needs no read.
  Without a key this is the only thing between a lost response and a second effect.
- ``harness.no_unverified_action``: after a write whose response was lost (a ``timeout``: the
  world may or may not have committed it), the next write of another operation comes only
  after a read that looked the lost write up (as above). Acting on top of an outcome nobody
  checked (recording a payment, sending a receipt for a charge that may not exist, solving a
  ticket whose reply may be missing) is acting on unverified tool output.
- ``harness.no_repeat_after_refusal``: no call (of any tool) is sent again unchanged after a
  deterministic error (``refused``, ``conflict``, ``not_found``, ``invalid_arguments``,
  ``unknown_tool``: `harness_world.grading.harness.DETERMINISTIC_ERRORS`) while nothing was
  written in between: the world would give the same answer, so the repeat is a harness
  looping on a refusal. A call a fault fired on is not held to it.

Budgets are harness-layer too: ``budget.context_tokens`` (when a task declares it) is the
"context bounded" criterion, ``budget.tool_calls`` / ``budget.turns`` / ``budget.cost`` the
"budget respected" ones.

A candidate link (``[[links]]`` in a task) is **activated** in a record when both its harness
and its agent criterion failed (read from the raw F_H, before any bypass adjustment).
Activation records co-occurring failures of predeclared endpoints; it is not a causal claim.

`layered_result` computes all of it once per judged record: admission and its reasons, both
verdict vectors, the bypass notes (B, see `harness_world.grading.harness.harness_bypass`), the
activated links and the task's taxonomy place. The verifier puts it in every slot result
(``verify --json``, the run's ``layered.jsonl``) and the analyses read it from there.
"""

from __future__ import annotations

import msgspec

from harness_world.engine.canonical import to_json
from harness_world.engine.world import World
from harness_world.evidence.record import Record
from harness_world.grading.authority_spec import CandidateLink, Layer
from harness_world.grading.checker import CRITERIA
from harness_world.grading.harness import harness_bypass
from harness_world.grading.task import Task
from harness_world.grading.taxonomy import Dimension
from harness_world.grading.verify import Verification, task_mismatch

__all__ = [
    "JOINT_STATES",
    "Admission",
    "LayeredResult",
    "admit",
    "layer_of",
    "layered",
    "layered_result",
]

JOINT_STATES = ("clean", "harness_only", "agent_only", "both")
"""The four joint states, crossing whether F_H and Z_A are empty."""


class Admission(msgspec.Struct, frozen=True, kw_only=True):
    """Whether a record is admitted to scoring, and each check.

    Attributes:
        admitted: Every check holds.
        checks: ``evidence_verified``, ``task_pinned``, ``faults_intact``, ``ledger_intact``.
        reasons: Why a check failed, in words.
    """

    admitted: bool
    checks: dict[str, bool]
    reasons: list[str] = []


class LayeredResult(msgspec.Struct, frozen=True, kw_only=True):
    """One judged record read as two score sheets after admission.

    Attributes:
        task_id: The task.
        sample: The sample index.
        family: The task's family (the cluster of repeated, related tasks).
        dimension: The task's primary dimension (null: not assigned).
        subdimension: Its subdimension (empty: none named).
        admission: Whether the record is admitted to scoring, and why not.
        agent: Agent-layer criterion id -> passed (V_A); empty when not admitted.
        harness: Harness-layer criterion id -> passed (V_H); empty when not admitted.
        bypassed: Failed harness criteria an agent action made unobservable (B ⊆ F_H) ->
            why; they stay zeros in ``harness``.
        activated: The task's candidate links whose two endpoints both failed (raw F_H).
    """

    task_id: str
    sample: int
    family: str = ""
    dimension: Dimension | None = None
    subdimension: str = ""
    admission: Admission
    agent: dict[str, bool] = {}
    harness: dict[str, bool] = {}
    bypassed: dict[str, str] = {}
    activated: list[CandidateLink] = []

    @property
    def admitted(self) -> bool:
        """Whether the record is scored."""
        return self.admission.admitted

    @property
    def agent_failed(self) -> list[str]:
        """Failed agent criteria (Z_A)."""
        return [k for k, ok in self.agent.items() if not ok]

    @property
    def harness_failed(self) -> list[str]:
        """Failed harness criteria, raw (F_H)."""
        return [k for k, ok in self.harness.items() if not ok]

    @property
    def harness_adjusted(self) -> list[str]:
        """Failed harness criteria not bypassed (Z_H = F_H minus B)."""
        return [k for k in self.harness_failed if k not in self.bypassed]

    @property
    def joint_state(self) -> str:
        """``clean``, ``harness_only``, ``agent_only`` or ``both`` (which raw sets are nonempty)."""
        return JOINT_STATES[2 * bool(self.agent_failed) + bool(self.harness_failed)]

    @property
    def agent_score(self) -> float | None:
        """Passed / all agent criteria (None when there are none)."""
        return _fraction(self.agent)

    @property
    def harness_score(self) -> float | None:
        """Passed / all harness criteria (None when there are none)."""
        return _fraction(self.harness)

    @property
    def layered_score(self) -> float | None:
        """The two layer scores averaged with equal weight (a missing layer: the other one)."""
        scores = [s for s in (self.agent_score, self.harness_score) if s is not None]
        return sum(scores) / len(scores) if scores else None


def _fraction(vector: dict[str, bool]) -> float | None:
    return sum(vector.values()) / len(vector) if vector else None


def _ledgers(task: Task) -> set[str]:
    out = {r.proof_entity for r in task.receipts}
    return out | {f.entity for f in task.forbid if f.kind == "append_only"}


def admit(record: Record, task: Task, verification: Verification) -> Admission:
    """The admission checks of one record (see the module docstring)."""
    reasons = []
    verified = verification.evidence == "verified"
    if not verified:
        reasons.append(f"evidence {verification.evidence}: {verification.reason}")
    pinned = not task_mismatch(record, task)
    if not pinned:
        reasons.append(task_mismatch(record, task))
    schedule = [] if record.faults is None else record.faults.schedule
    faults_ok = to_json(schedule) == to_json(task.faults)
    if not faults_ok:
        reasons.append("the record's fault schedule is not the task's")
    ledgers = _ledgers(task)
    rewritten = sorted(
        {
            f"{w.entity}:{w.key}"
            for call in record.calls
            for w in call.writes
            if w.entity in ledgers and w.before is not None
        }
    )
    if rewritten:
        reasons.append(f"ledger rows rewritten: {', '.join(rewritten[:5])}")
    checks = {
        "evidence_verified": verified,
        "task_pinned": pinned,
        "faults_intact": faults_ok,
        "ledger_intact": not rewritten,
    }
    return Admission(admitted=all(checks.values()), checks=checks, reasons=reasons)


def layer_of(task: Task, criterion: str) -> Layer:
    """The layer a criterion is scored in.

    The task's ``layers`` entry, else the layer its criterion declares in
    `harness_world.grading.checker.CRITERIA` (budgets and ``harness.*`` are harness-layer,
    everything else agent-layer).
    """
    if criterion in task.layers:
        return task.layers[criterion]
    owner = CRITERIA.owner(criterion)
    return "agent" if owner is None else owner.layer


def layered_result(
    record: Record, task: Task, verification: Verification, world: World
) -> LayeredResult:
    """Admission, both verdict vectors, bypass notes and activated links of one judged record.

    A record not admitted (or not graded) carries its admission and empty vectors.
    """
    admission = admit(record, task, verification)
    base = LayeredResult(
        task_id=record.task_id,
        sample=record.sample,
        family=task.family,
        dimension=task.dimension,
        subdimension=task.subdimension,
        admission=admission,
    )
    if verification.grade is None or not admission.admitted:
        return base
    verdicts = [v for v in verification.grade.verdicts if v.kind != "prose"]
    verdicts += verification.grade.harness
    vectors: dict[str, dict[str, bool]] = {"agent": {}, "harness": {}}
    for v in verdicts:
        vectors[layer_of(task, v.id)][v.id] = v.status == "passed"
    failed = {k for vec in vectors.values() for k, ok in vec.items() if not ok}
    activated = [
        link
        for link in task.links
        if link.harness in failed
        and link.agent in failed
        and layer_of(task, link.harness) == "harness"
        and layer_of(task, link.agent) == "agent"
    ]
    # only a failed harness verdict can be bypassed: with none, the call log is not read again
    bypassed = (
        {
            k: why
            for k, why in harness_bypass(record, world).items()
            if vectors["harness"].get(k) is False
        }
        if not all(vectors["harness"].values())
        else {}
    )
    return msgspec.structs.replace(
        base,
        agent=vectors["agent"],
        harness=vectors["harness"],
        bypassed=bypassed,
        activated=activated,
    )


def layered(
    record: Record, task: Task, verification: Verification, world: World
) -> LayeredResult | None:
    """`layered_result` of an admitted, graded record; None otherwise."""
    result = layered_result(record, task, verification, world)
    return result if result.admitted and verification.grade is not None else None
