"""Scripts for the report's demo run: oracles on most tasks, the demo's mutants on some.

``python -m harness_world run --world helpdesk --agent scripted --script docs/demo_scripts.py
--samples 3 --out runs/demo`` makes the run whose plots are in ``docs/img/``. A task listed in
``FLAKY`` alternates between its mutant and its oracle from one attempt to the next (a stand-in
for an agent that is right some of the time); a task in ``BROKEN`` always runs its mutant; the
others run their oracle. The alternation counts attempts within this process, so run it with the
default ``--workers 1`` for the same pattern every time.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

from harness_world.coverage import ScriptContext, load_mutants, load_oracles

Script = Callable[[ScriptContext], str]

ORACLES = load_oracles("helpdesk")
MUTANTS = {m.id: m for m in load_mutants("helpdesk")}

BROKEN = {
    "helpdesk.reply_and_solve": "reply_and_solve.no_reply",
    "helpdesk.security_count": "security_count.first_page_count",
}
FLAKY = {
    "helpdesk.escalate_outage": "escalate_outage.first_page",
    "helpdesk.vip_two_statuses": "vip_two_statuses.one_status",
    "helpdesk.reassign_departed": "reassign_departed.reverted",
}


def _alternating(mutant: Script, oracle: Script) -> Script:
    turns: Iterator[Script] = itertools.cycle([mutant, oracle, oracle])

    def script(ctx: ScriptContext) -> str:
        return next(turns)(ctx)

    return script


SCRIPTS: dict[str, Script] = dict(ORACLES)
for _task, _mutant in BROKEN.items():
    SCRIPTS[_task] = MUTANTS[_mutant].script
for _task, _mutant in FLAKY.items():
    SCRIPTS[_task] = _alternating(MUTANTS[_mutant].script, ORACLES[_task])
