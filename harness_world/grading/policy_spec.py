"""Task declarations for a service policy sheet: who may be served, with whose consent.

Data only (the findings live in `harness_world.grading.rules.policy`). A conversational task
whose service rules say "authenticate the customer first", "get an explicit yes before each
consequential change" and "hand over to a person only what cannot be done" declares them here;
its records then carry a policy sheet (``policy.*`` verdicts) beside the grade, never in it.
"""

from __future__ import annotations

import msgspec

__all__ = ["PolicySheet"]


class PolicySheet(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True
):
    """The service rules a conversational task's records are held to (``[policy]``).

    Attributes:
        identify: The tools that authenticate a customer: a successful call's result is the
            key of the account it authenticated (a text or a number).
        accounts: Entity -> the field of its rows that names the account a row belongs to
            (the account entity's own key field for the accounts themselves). A row of these
            entities is account data: returned or written only after its account was
            authenticated.
        confirm: The write tools that need the user's explicit yes in the turn right before
            each call (empty: every write tool of the world).
        handoff: The tool that hands the conversation to a person (empty: none).
        handoff_expected: The task cannot be done within the agent's scope, so handing over
            is right; otherwise any call of ``handoff`` breaks the sheet.
    """

    identify: list[str]
    accounts: dict[str, str]
    confirm: list[str] = []
    handoff: str = ""
    handoff_expected: bool = False
