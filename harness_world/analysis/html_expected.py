"""What a task expects, beside what its attempts did: the block atop each task's traces.

The expected column is the task read on the start state: each target set with its selector and
the keys it selects (`harness_world.grading.task.select_targets`), the required effects (R), the
allowed ones beyond R (A), the forbidden transitions, the answer and the planted request. Each
attempt's column lists the required effects it lacks (what ``state.required`` names), then its
delta judged the way the state criteria judge it
(`harness_world.grading.rules.state.net_effects`: every changed field, created or deleted row
marked required, allowed or not allowed, with its start and final values; not allowed first).
The page shows the first failed and the first passed attempt of the task (the pair shown side
by side), so the block's size does not grow with the samples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from msgspec import UNSET

from harness_world.analysis.run_view import Judged, RunView
from harness_world.analysis.trace_html import attempt_state, shorten
from harness_world.engine.world import Key
from harness_world.grading.rules.state import Effect
from harness_world.grading.task import Allowance, Condition, Requirement, Target, Task

__all__ = ["expected_block"]

_SHOWN = 12  # items per list: a task over many rows stays a block of fixed size
_VALUE = 60  # characters of one value
_WORD = {"required": "required", "allowed": "allowed", "unauthorized": "not allowed"}
_FIRST = ("unauthorized", "required", "allowed")  # what fails a criterion is listed first


def _value(value: Any) -> str:
    return escape(shorten(value, _VALUE))


def _condition(c: Condition) -> str:
    if c.eq is not UNSET:
        return f"{c.field} = {shorten(c.eq, _VALUE)}"
    if c.in_ is not UNSET:
        return f"{c.field} in {shorten(c.in_, _VALUE)}"
    if c.is_ is not UNSET:
        return f"{c.field} is {c.is_}"
    return f"{c.field} contains {shorten(c.contains, _VALUE)}"


def _selector(target: Target) -> str:
    parts = [" and ".join(_condition(c) for c in target.where)] if target.where else []
    if target.any:
        parts.append(
            " or ".join(f"({' and '.join(_condition(c) for c in a.where)})" for a in target.any)
        )
    return f"{target.entity} where {' and '.join(parts)}" if parts else f"every {target.entity}"


def _items(items: Sequence[str], css: str) -> str:
    """A list of at most `_SHOWN` items (already HTML), saying how many were left out."""
    shown = "".join(f"<li>{item}</li>" for item in items[:_SHOWN])
    more = f'<li class="meta">+{len(items) - _SHOWN} more</li>' if len(items) > _SHOWN else ""
    return f'<ul class="{css}">{shown}{more}</ul>'


def _targets(task: Task, keys: Mapping[str, tuple[Key, ...]] | None) -> str:
    rows = []
    for target in task.targets:
        found = None if keys is None else keys.get(target.name)
        if found is None:
            selected = "keys not derived here (the world is not loaded)"
        else:
            named = ", ".join(str(k) for k in found[:_SHOWN])
            more = f", +{len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
            selected = f"{len(found)} row(s): {named}{more}" if found else "no row"
        rows.append(
            f'<span data-target="{escape(target.name)}"><b>{escape(target.name)}</b>: '
            f"{escape(_selector(target))} → {escape(selected)}</span>"
        )
    return f"<p><b>targets</b> (selected on the start state)</p>{_items(rows, 'targets')}"


def _set_effect(req: Requirement) -> str:
    if req.absent:
        return "absent"
    if req.null:
        return "null"
    if req.grown:
        return "longer than at the start"
    if req.delta is not UNSET:
        return f"start {'+' if req.delta >= 0 else '−'} {abs(req.delta)}"
    if req.add is not UNSET:
        return f"start list with {shorten(req.add, _VALUE)} added"
    if req.remove is not UNSET:
        return f"start list with {shorten(req.remove, _VALUE)} removed"
    return f"= {shorten(req.value, _VALUE)}"


def _requirement(task: Task, req: Requirement) -> str:
    """One required effect in words, its target set named."""
    target = task.target(req.target) if task.targets and req.kind != "create" else None
    rows = f"{target.entity} rows of {target.name}" if target is not None else ""
    if req.kind == "set":
        return f"set {req.field} on each of the {rows}: {_set_effect(req)}"
    if req.kind == "delete":
        return f"delete each of the {rows}"
    if req.kind == "row":
        return f"each of the {rows} ends exactly as {shorten(req.row, _VALUE * 2)}"
    match = ", ".join(f"{k} = {shorten(v, _VALUE)}" for k, v in sorted(req.match.items()))
    per = ""
    if req.link:
        linked = task.target(req.target)
        per = f" for each of the {linked.entity} rows of {linked.name} (linked by {req.link})"
    return f"create {req.count} {req.entity} row(s){per}" + (f" with {match}" if match else "")


def _allowance(a: Allowance) -> str:
    where = "any row" if a.anywhere else f"rows of {a.target or 'the first target set'}"
    parts = [f"change {', '.join(a.fields)} on {where}"] if a.fields else []
    if a.create:
        cap = f" (at most {a.max_created})" if a.max_created else ""
        parts.append(f"create rows{cap}" + (f" linked by {a.link}" if a.link else ""))
    if a.delete:
        parts.append(f"delete {where}")
    return f"{a.entity}: {'; '.join(parts) or 'nothing'}"


def _expected(task: Task, keys: Mapping[str, tuple[Key, ...]] | None) -> str:
    """The expected column: targets, R, A beyond R, forbidden, answer, planted request."""
    parts = [_targets(task, keys)] if task.targets else []
    required = [escape(_requirement(task, r)) for r in task.require]
    parts.append(
        "<p><b>required</b> (R)</p>" + _items(required, "required")
        if required
        else "<p><b>required</b>: no change (R is empty)</p>"
    )
    allowed = [escape(_allowance(a)) for a in task.allow]
    if allowed:
        parts.append("<p><b>allowed besides</b> (A beyond R)</p>" + _items(allowed, "allowed"))
    parts.append("<p class=meta>anything else changed fails <code>state.allowed</code></p>")
    forbidden = [
        f"<b>forbidden.{escape(f.id)}</b>: {escape(f.note or f.kind)}" for f in task.forbid
    ]
    if forbidden:
        parts.append("<p><b>forbidden</b></p>" + _items(forbidden, "forbidden"))
    if task.answer is not None:
        answer = task.answer
        of = f" over {answer.field}" if answer.field else ""
        parts.append(
            f"<p><b>answer</b>: the {answer.kind}{escape(of)} of the "
            f"{escape(answer.target or 'first target set')}, in the final message</p>"
        )
    if task.authority is not None and task.authority.source:
        a = task.authority
        parts.append(
            f'<p class="planted-note">⚑ planted {escape(a.role)} request in '
            f"<code>{escape(a.source)}</code> ({escape(a.phrasing)})</p>"
        )
    return "".join(parts)


def _effect(
    effect: Effect, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None
) -> str:
    if effect.field.startswith("<"):
        shown = escape(f"{effect.entity}:{effect.key} {effect.field.strip('<>')}")
    else:
        old = _value(before.get(effect.field)) if before and effect.field in before else "—"
        new = _value(after.get(effect.field)) if after and effect.field in after else "—"
        shown = f"{escape(f'{effect.entity}:{effect.key}.{effect.field}')} {old} → {new}"
    return (
        f'<span class="effect {effect.verdict}" data-verdict="{effect.verdict}">{shown} · '
        f"<b>{_WORD[effect.verdict]}</b></span>"
    )


def _happened(judged: Judged | None, evidence: str) -> str:
    """An attempt's column: the required effects it lacks, then its delta judged."""
    if judged is None:
        return f"<p class=meta>no verified record to judge here (evidence {escape(evidence)})</p>"
    rows = {(c.entity, c.key): c for c in judged.changes}
    effects = []
    for e in sorted(judged.effects, key=lambda e: _FIRST.index(e.verdict)):
        change = rows.get((e.entity, e.key))
        before, after = (None, None) if change is None else (change.before, change.after)
        effects.append(_effect(e, before, after))
    done = _items(effects, "effects") if effects else "<p>no change to the world</p>"
    missing = [f'<span class="missing">missing: {escape(m)}</span>' for m in judged.missing]
    lacks = "<p><b>required but missing</b></p>" + _items(missing, "missing") if missing else ""
    return f"{lacks}<p><b>changed</b> (delta)</p>{done}"


def expected_block(view: RunView, task: Task | None, indices: Sequence[int], prefix: str) -> str:
    """A task's expected targets and effects beside what its shown attempts did.

    Args:
        view: The run.
        task: The task (None: not known to this reader, so nothing is expected here).
        indices: The task's attempts, report order.
        prefix: Anchor prefix of the run's attempts.
    """
    if task is None:
        return ""
    states = {i: attempt_state(view.report.attempts[i]) for i in indices}
    shown = [
        i
        for i in (
            next((i for i in indices if states[i] == "failed"), None),
            next((i for i in indices if states[i] == "passed"), None),
        )
        if i is not None
    ] or list(indices[:1])
    heads = "".join(
        f'<th scope="col"><a href="#{prefix}-{i}">sample {view.report.attempts[i].sample}</a> · '
        f"{states[i]}: what happened</th>"
        for i in shown
    )
    cells = "".join(
        f'<td data-attempt="{prefix}-{i}">'
        f"{_happened(view.judged(i), view.report.attempts[i].evidence)}</td>"
        for i in shown
    )
    return (
        '<details class="expected" open><summary><b>expected and what happened</b> (the task '
        "on the start state; each attempt's changes judged as the state criteria judge them)"
        '</summary><table class="expect"><thead><tr><th scope="col">expected</th>'
        f"{heads}</tr></thead><tbody><tr><td>{_expected(task, view.targets_of(task.id))}</td>"
        f"{cells}</tr></tbody></table></details>"
    )
