"""Which reads reconcile a lost write: the ones that look its effect up.

After a write whose response was lost (``timeout``), only a read of the thing that failed says
whether it happened. A later call *looks up* the lost write when it succeeded, is not a write,
and either returned whole a row the write changes (its tool's `harness_world.engine.Lookup`
with an entity and a key template) or a row the lost write created, or is a call of the
write's declared lookup tool given the write's own values. A write tool that declares no
lookups keeps the older rule: any successful read but ``wait``. A retry carrying the lost
call's ``idempotency_key`` that the provider answered with the original (the tool's
`harness_world.engine.Tool.replayed` flag true in its result) is a *confirmed replay*.

The harness criteria (``harness.reconcile_before_retry``, ``harness.no_unverified_action``) and
the ``refused_calls`` advisory read this one definition, through the trace view.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from harness_world.engine.calls import CallRecord
from harness_world.engine.world import World
from harness_world.grading.shown import Observations

__all__ = ["Reconciliation", "key_of"]

_KEY = "idempotency_key"


def key_of(call: CallRecord) -> object:
    """The ``idempotency_key`` a call was given (None: none)."""
    return call.args.get(_KEY) if isinstance(call.args, dict) else None


@attrs.frozen(slots=True)
class Reconciliation:
    """Which later calls look up a lost write's effect (see the module docstring).

    Attributes:
        calls: The call log.
        writes: The names of the world's write tools.
        world: The start world (its tools' lookups); None: every write tool undeclared.
        shown: The rows each result returned (`harness_world.grading.shown.Observations`,
            shared with the trace view); None with no world.
    """

    calls: Sequence[CallRecord]
    writes: frozenset[str]
    world: World | None = None
    shown: Observations | None = None

    def looks_up(self, lost: int, read: int) -> bool:
        """Whether call ``read`` (0-based) looked up the effect of the lost call ``lost``."""
        call, later = self.calls[lost], self.calls[read]
        if not later.ok or later.tool in self.writes:
            return False
        spec = None if self.world is None else self.world.contract.tool(call.tool)
        if spec is None or spec.lookups is None or self.shown is None:
            return later.tool != "wait"  # undeclared: any successful read
        if any(lookup.called(later.tool, later.args, call.args) for lookup in spec.lookups):
            return True
        rows = [(lookup.entity, lookup.row_key(call.args)) for lookup in spec.lookups]
        rows += [(w.entity, str(w.key)) for w in call.writes if w.before is None]
        returned = {(entity, str(key)) for entity, key in self.shown.index(read).whole}
        return any(row in returned for row in rows if row[1] is not None)

    def confirmed_replay(self, lost: int, retry: int) -> bool:
        """Whether call ``retry`` repeated ``lost`` with its key and got the original back."""
        call, again = self.calls[lost], self.calls[retry]
        spec = None if self.world is None else self.world.contract.tool(call.tool)
        flag = "" if spec is None else spec.replayed
        key = key_of(call)
        return (
            bool(flag)
            and again.ok
            and key is not None
            and key_of(again) == key
            and isinstance(again.result, dict)
            and again.result.get(flag) is True
        )
