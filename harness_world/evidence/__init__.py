"""Evidence: the record one attempt leaves, its canonical encoding, and replay.

A `Record` is sealed with a digest and saved atomically; `replay` re-executes it in a fresh
session and lists every `Mismatch`. Replay proves consistency: whether a record verifies does
not depend on anything the record says about itself beyond its calls. A run's ``index.jsonl``
(`IndexEntry`) binds each record to its slot; ``harness_world.evidence.signing`` signs it.
"""

from harness_world.evidence.binding import (
    INDEX,
    IndexEntry,
    append_index,
    binding_problem,
    index_entry,
    read_index,
    save_bound,
)
from harness_world.evidence.record import (
    FORMAT_VERSION,
    Outcome,
    OutcomeStatus,
    Record,
    RecordContext,
    RecordError,
    Synthetic,  # forks
    TranscriptMessage,
    TranscriptToolCall,
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
    "INDEX",
    "Evidence",
    "IndexEntry",
    "Mismatch",
    "Outcome",
    "OutcomeStatus",
    "Record",
    "RecordContext",
    "RecordError",
    "Synthetic",
    "TranscriptMessage",
    "TranscriptToolCall",
    "Usage",
    "UserTurn",
    "WorldRef",
    "append_index",
    "binding_problem",
    "index_entry",
    "load_record",
    "make_record",
    "read_index",
    "record_digest",
    "replay",
    "save_bound",
    "save_record",
]
