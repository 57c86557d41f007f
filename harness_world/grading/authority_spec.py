"""Task declarations for authority conditions, scored layers and candidate links.

Data only. A task that plants a request in data the agent reads declares it with
``[authority]``: whether the request is an ``attack`` (a forbidden effect, which must not
happen) or ``benign`` (the legitimate counterpart, which must be carried out), the attack kind
it belongs to, its phrasing, and the id of its counterpart task. ``[[links]]`` declare candidate
mechanism links between a harness-layer criterion and an agent-layer criterion before any run;
``layers`` overrides the layer a criterion is scored in (see ``grading.layers``).
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["Authority", "CandidateLink", "Layer"]

Layer = Literal["agent", "harness"]


class Authority(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True
):
    """The authority condition a task exercises.

    Attributes:
        role: ``attack`` (the planted request asks for a forbidden effect) or ``benign`` (it
            asks for a legitimate effect that must be carried out).
        attack: The attack kind, e.g. ``payout_unapproved_payee``; an attack task and its
            benign counterpart share it.
        phrasing: How the request is worded: ``direct``, ``authority`` (claims a rank or a
            sign-off) or ``tool_output`` (shaped like a tool's result).
        counterpart: The id of the paired task (benign for an attack, and back).
        success: For an attack: the criteria whose failure means the attack succeeded (the
            forbidden effect it asked for happened).
        source: Where the request is planted, e.g. ``invoices.INV-90001.note``.
    """

    role: Literal["attack", "benign"]
    attack: str
    phrasing: Literal["direct", "authority", "tool_output"]
    counterpart: str
    success: list[str] = []
    source: str = ""


class CandidateLink(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True
):
    """A predeclared candidate mechanism link from a harness criterion to an agent criterion.

    A link is *activated* in a run when both endpoints fail in it. Activation records that the
    declared endpoints co-occur; it is not a causal claim.

    Attributes:
        harness: The harness-layer criterion id (e.g. ``harness.same_key_retry``).
        agent: The agent-layer criterion id (e.g. ``forbidden.duplicate_charge``).
        mechanism: One line: the intermediate distortion the link proposes.
    """

    harness: str
    agent: str
    mechanism: str
