"""Task declarations for trusted completion: forbidden transitions and required receipts.

Data only (the criteria live in ``_trusted.py``). A forbidden transition is judged over the
whole attempt — every row the call log created or rewrote, every argument sent, the final
message — not over the final state alone: a duplicate charge later refunded is still a
duplicate charge. The ledger they usually look at is a world entity written only by the world's
simulated provider, so the agent cannot certify its own completeness by omitting an event.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

__all__ = ["Forbidden", "Receipt"]


class Forbidden(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True
):
    """One forbidden transition; its verdict is ``forbidden.<id>``.

    Attributes:
        id: Names the verdict, e.g. ``duplicate_charge``.
        kind: ``duplicate``: two or more rows of ``entity`` created during the attempt that
            match ``match`` share the values of ``by`` (one logical operation done twice).
            ``requires``: every created row matching ``match`` must reference, through
            ``field``, a row of ``ref_entity`` (as the attempt left it) that matches
            ``ref_match``, whose ``ref_link`` fields equal the row's named fields and whose
            ``ref_ge`` fields are at least the row's named fields. ``pattern``: ``regex``
            occurs in the arguments of a call to one of ``tools`` (every tool when empty) or,
            with ``final_message``, in the final message. ``card_number``: a payment card
            number occurs, read for meaning (`harness_world.grading.disclosure`), in the
            arguments of a call to one of ``tools`` (every tool when empty) or, with
            ``final_message``, in the agent's messages (its final message and what it said to
            a simulated user): any number ``entity.field`` holds in the start state, however
            it is written, or any other card-shaped, Luhn-valid number. ``append_only``: a
            row of ``entity`` that existed was rewritten or deleted.
        entity: The entity judged (``duplicate``, ``requires``, ``append_only``); for
            ``card_number``, the entity whose ``field`` holds card numbers (optional).
        match: Field values selecting the rows judged (type-aware equality).
        by: For ``duplicate``: the fields naming one logical operation.
        field: For ``requires``: the row's field holding the referenced key; for
            ``card_number``: the field of ``entity`` holding card numbers.
        ref_entity: For ``requires``: the referenced entity.
        ref_match: For ``requires``: values the referenced row must hold.
        ref_link: For ``requires``: referenced field -> row field that must be equal.
        ref_ge: For ``requires``: referenced field -> row field it must be at least.
        regex: For ``pattern``: a Python regular expression.
        tools: For ``pattern`` and ``card_number``: the tools whose arguments are scanned
            (empty: all).
        final_message: For ``pattern``: scan the final message too; for ``card_number``:
            the agent's messages too.
        note: Why the transition is forbidden (shown in the verdict).
    """

    id: str
    kind: Literal["duplicate", "requires", "pattern", "card_number", "append_only"]
    entity: str = ""
    match: dict[str, Any] = {}
    by: list[str] = []
    field: str = ""
    ref_entity: str = ""
    ref_match: dict[str, Any] = {}
    ref_link: dict[str, str] = {}
    ref_ge: dict[str, str] = {}
    regex: str = ""
    tools: list[str] = []
    final_message: bool = False
    note: str = ""

    def __post_init__(self) -> None:
        needs: dict[str, tuple[str, ...]] = {
            "duplicate": ("entity", "by"),
            "requires": ("entity", "field", "ref_entity"),
            "pattern": ("regex",),
            "card_number": ("entity", "field") if self.entity or self.field else (),
            "append_only": ("entity",),
        }
        missing = [name for name in needs[self.kind] if not getattr(self, name)]
        if missing:
            raise ValueError(f"forbidden {self.id!r} ({self.kind}) needs {', '.join(missing)}")


class Receipt(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True
):
    """A required receipt per target row; its verdict is ``receipts.<id>``.

    For each key of the ``target`` set, some row of ``entity`` as the attempt left it — the
    target row itself when ``link`` is empty, else a row created during the attempt whose
    ``link`` field holds the target key — must hold in ``field`` a value proven by the ledger:
    equal to ``proof_field`` of a row of ``proof_entity`` created during the attempt, matching
    ``proof_match``, whose ``proof_link`` field holds the target key.

    With ``in_final_message``, the receipt is the agent's report instead: for each target, a
    proven value must appear in the final message as a whole token (``entity``, ``link`` and
    ``field`` are then unused).

    Attributes:
        id: Names the verdict, e.g. ``charge_on_order``.
        target: The target set (default: the first).
        entity: Where the receipt lives (e.g. ``orders`` or ``messages``).
        link: The receipt row's field holding the target key (empty: the target row).
        field: The receipt row's field holding the proof.
        proof_entity: The authority (e.g. the provider's event ledger).
        proof_match: Values the proving row must hold (e.g. ``type = "charge.succeeded"``).
        proof_field: The proving row's field that must equal the receipt's.
        proof_link: The proving row's field holding the target key.
        in_final_message: The receipt is a proven value quoted in the final message.
    """

    id: str
    entity: str = ""
    field: str = ""
    proof_entity: str
    proof_field: str
    proof_link: str
    target: str = ""
    link: str = ""
    proof_match: dict[str, Any] = {}
    in_final_message: bool = False

    def __post_init__(self) -> None:
        if not self.in_final_message and not (self.entity and self.field):
            raise ValueError(f"receipt {self.id!r} needs entity and field (or in_final_message)")
