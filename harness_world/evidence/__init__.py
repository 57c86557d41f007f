"""Evidence: the record one attempt leaves, its canonical encoding, and replay.

A `Record` is sealed with a digest and saved atomically; `replay` re-executes it in a fresh
session and lists every `Mismatch`. Replay proves consistency: whether a record verifies does
not depend on anything the record says about itself beyond its calls.
"""

from harness_world.evidence.record import (
    FORMAT_VERSION,
    Outcome,
    OutcomeStatus,
    Record,
    RecordContext,
    RecordError,
    Usage,
    UserTurn,
    WorldRef,
    load_record,
    make_record,
    record_digest,
    save_record,
)
from harness_world.evidence.replay import Evidence, Mismatch, replay

__all__ = [
    "FORMAT_VERSION",
    "Evidence",
    "Mismatch",
    "Outcome",
    "OutcomeStatus",
    "Record",
    "RecordContext",
    "RecordError",
    "Usage",
    "UserTurn",
    "WorldRef",
    "load_record",
    "make_record",
    "record_digest",
    "replay",
    "save_record",
]
