"""Records: the evidence one attempt leaves, saved atomically, loaded defensively."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from harness_world.engine.calls import CallRecord, FinalRow
from harness_world.engine.canonical import normalised, sha256_hex, to_json
from harness_world.engine.faults import FaultLog
from harness_world.engine.limits import (
    MAX_STRING,
    RECORD_BYTES,
    RECORD_DEPTH,
    check_json_value,
    clean_text,
)
from harness_world.engine.session import Session
from harness_world.errors import HarnessWorldError

__all__ = [
    "FORMAT_VERSION",
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
    "load_record",
    "make_record",
    "read_record_bytes",
    "record_digest",
    "save_record",
    "seal_record",
    "write_atomically",
]

FORMAT_VERSION = 1
OutcomeStatus = Literal[
    "completed", "error", "turn_limit", "budget_limit", "interrupted", "infrastructure"
]


class WorldRef(msgspec.Struct, frozen=True, kw_only=True):
    """Which world a record ran against.

    Attributes:
        name: The world's name (a built-in world, or the folder name of a user world).
        size: The seed loaded (``small``, ``large``, or a seed file's stem).
        hash: The world's content hash; replay refuses a world with another hash.
        contract_hash: The contract's hash (entities, tools and their schemas).
    """

    name: str
    size: str
    hash: str
    contract_hash: str


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """How execution ended (a fact apart from evidence and grade).

    Attributes:
        status: ``completed``, ``error`` (the agent's own code failed: counted as an attempt),
            ``turn_limit``, ``budget_limit``, ``interrupted`` or ``infrastructure`` (the
            harness or the model provider failed: not counted, the run exits 1).
        reason: Why, in words (empty for a plain completion).
    """

    status: OutcomeStatus
    reason: str = ""


# Usage figures are never negative: a record saying otherwise is refused on reading (`lost`),
# so a forged or misreported figure cannot lower a total.
_Count = Annotated[int, msgspec.Meta(ge=0)]
_Money = Annotated[float, msgspec.Meta(ge=0)]


class Usage(msgspec.Struct, frozen=True, kw_only=True):
    """What the attempt consumed (every figure >= 0).

    Attributes:
        turns: Model round trips (agent turns).
        requests: HTTP requests to the model provider, retries included.
        retries: Requests that were retries of an earlier one.
        input_tokens: Prompt tokens over all requests.
        output_tokens: Completion tokens over all requests.
        cost: Money spent, in US dollars, as reported or priced.
        uncertain_cost: Money reserved for requests whose response was lost, or reported
            usage no record can hold: exposure of unknown size, never counted as zero.
        lost_requests: Requests whose response never arrived (connection error, timeout, or
            still open when the attempt ended), or reported unusable usage: the provider may
            have spent tokens on them.
        lost_input_tokens_estimate: The prompt tokens of those requests, *estimated* from the
            prompt the driver sent (no response reports them); their output tokens are unknown.
            Not part of ``input_tokens``.
        models: The model ids the provider's responses named, distinct, in order of first
            appearance: what answered, as opposed to the alias the agent asked for.
    """

    turns: _Count = 0
    requests: _Count = 0
    retries: _Count = 0
    input_tokens: _Count = 0
    output_tokens: _Count = 0
    cost: _Money = 0.0
    uncertain_cost: _Money = 0.0
    lost_requests: _Count = 0
    lost_input_tokens_estimate: _Count = 0
    models: list[str] = []


class RecordContext(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Facts about where and when a record was made: kept out of replay and out of the digest.

    Attributes:
        started_at: Wall-clock start, ISO-8601 UTC.
        finished_at: Wall-clock end, ISO-8601 UTC.
        host: Host name.
        pid: Process id.
        workers: Parallelism of the run that made it.
        latency_s: Wall-clock duration in seconds.
        queue_s: Seconds the attempt waited from being scheduled by its run to opening (its
            world loaded), e.g. behind other attempts for a worker; 0 when not measured.
        notes: Free-form extra context.
    """

    started_at: str = ""
    finished_at: str = ""
    host: str = ""
    pid: int = 0
    workers: int = 0
    latency_s: float = 0.0
    queue_s: float = 0.0
    notes: dict[str, str] = {}


class Synthetic(msgspec.Struct, frozen=True, kw_only=True):
    """An observation a fork showed its agent instead of the real one (diagnose: forks).

    Attributes:
        seq: The call whose real result (in ``calls``) the agent never saw.
        shown: What the agent was shown instead: an invented result.
    """

    seq: int
    shown: Any


# -- user channel: user turns are recorded inputs, like model outputs ----------------------


class UserTurn(msgspec.Struct, frozen=True, kw_only=True):
    """One exchange with a simulated user: what the agent said and what the user answered.

    User turns are inputs of an attempt (like a model's outputs): replay never recomputes them;
    the record's digest covers them.

    Attributes:
        after_call: How many tool calls the attempt had made when the agent spoke.
        agent: The agent's message to the user.
        user: The user's answer (may end the conversation, see ``stop``).
        stop: Whether the user ended the conversation with this answer.
    """

    after_call: int
    agent: str
    user: str
    stop: bool = False


# -- end user channel -------------------------------------------------------------------------


class TranscriptToolCall(msgspec.Struct, frozen=True, kw_only=True):
    """One tool call a model message asked for, as the model wrote it.

    Attributes:
        id: The provider's id of the call (a tool message answers it by this id).
        name: The tool named.
        arguments: The arguments as the model wrote them (JSON text, possibly malformed).
    """

    id: str
    name: str
    arguments: str = ""


class TranscriptMessage(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One message of the conversation between a model-backed agent and its model.

    The transcript is what the model was shown and what it wrote, kept so that an attempt can be
    re-read turn by turn. Like the final message it is an input of the attempt: replay never
    recomputes it, the digest covers it, and no criterion reads it.

    Attributes:
        role: ``system``, ``user``, ``assistant`` or ``tool``.
        content: The message's text (a tool message: the result as the agent showed it).
        tool_calls: The calls an assistant message asked for.
        tool_call_id: The call a tool message answers.
        after_call: Tool calls made before this message (places it in the call log).
    """

    role: str
    content: str = ""
    tool_calls: list[TranscriptToolCall] = []
    tool_call_id: str = ""
    after_call: int = 0


class Record(msgspec.Struct, frozen=True, kw_only=True):
    """The evidence of one attempt; see ``docs/record-format.md`` for the file format.

    Attributes:
        format: The record format version (`FORMAT_VERSION`).
        world: The world it ran against.
        task_id: The task attempted (empty for free-form sessions).
        task_hash: The hash of the task's definition at the time (empty without a task).
        revision: The run revision id (empty outside a pinned run).
        sample: The sample index within the run.
        seed: The session seed.
        calls: The whole call log.
        final: The final state of every key the session wrote.
        outcome: How execution ended.
        final_message: The agent's last message.
        usage: Turns, requests, tokens and cost.
        user_turns: The conversation with a simulated user, in order (empty without a user;
            then left out of the digest, so records made before the field keep their digest).
        transcript: The model conversation of a model-backed agent (unset for agents that
            have none, and then absent from the file and the digest).
        digest: SHA-256 over the canonical encoding of every field above (not ``context``):
            a single edited byte is detected even where replay cannot recompute the field.
        context: Wall-clock times, host, pid, parallelism: recorded, never compared.
        faults: The fault schedule, fault seed and every fault fired (null for an attempt
            without a schedule; records made before faults existed load with null).
        synthetic: Observations a counterfactual fork invented (absent in every real record):
            a record carrying them is never verified as evidence of an attempt.
        tools: The only tools the attempt offered (its task's allow-list, sorted); unset, and
            absent from the file and the digest, when every tool of the world was offered.
            Replay refuses the other tools the same way.
    """

    format: int = FORMAT_VERSION
    world: WorldRef
    task_id: str = ""
    task_hash: str = ""
    revision: str = ""
    sample: int = 0
    seed: int = 0
    calls: list[CallRecord]
    final: list[FinalRow]
    outcome: Outcome
    final_message: str = ""
    usage: Usage = Usage()
    user_turns: list[UserTurn] = []
    transcript: list[TranscriptMessage] | UnsetType = UNSET
    digest: str = ""
    context: RecordContext = RecordContext()
    faults: FaultLog | None = None
    # forks. Unset (and absent from the encoding, so every digest is unchanged)
    # except in a live fork with an edited result.
    synthetic: list[Synthetic] | UnsetType = UNSET
    tools: list[str] | UnsetType = UNSET


class RecordError(HarnessWorldError):
    """A record file could not be read: missing, truncated, malformed, or of another format."""


class _DigestUsage(msgspec.Struct, frozen=True, kw_only=True):
    """What the digest hashes of `Usage`.

    The counters added after the format's first release are unset while they are zero, so a
    record made before them keeps its digest.
    """

    turns: int
    requests: int
    retries: int
    input_tokens: int
    output_tokens: int
    cost: float
    uncertain_cost: float
    lost_requests: int | UnsetType = UNSET
    lost_input_tokens_estimate: int | UnsetType = UNSET
    models: list[str] | UnsetType = UNSET

    @classmethod
    def of(cls, usage: Usage) -> _DigestUsage:
        """The digest's view of ``usage``."""
        return cls(
            turns=usage.turns,
            requests=usage.requests,
            retries=usage.retries,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost=usage.cost,
            uncertain_cost=usage.uncertain_cost,
            lost_requests=usage.lost_requests or UNSET,
            lost_input_tokens_estimate=usage.lost_input_tokens_estimate or UNSET,
            models=usage.models or UNSET,
        )


class _DigestBody(msgspec.Struct, frozen=True, kw_only=True):
    """What the digest hashes: a record without ``digest`` and ``context`` (both blanked).

    Encoded with sorted keys, it is byte for byte the canonical JSON of the record's builtins
    with those two fields blanked; fields added after the format's first release are unset
    while they hold nothing (a null ``faults``, empty ``user_turns``, zero usage counters of
    lost requests), so older records keep
    their digests. ``calls`` and ``final`` may be pre-encoded `msgspec.Raw` JSON (replay has
    encoded them to compare them; splicing saves encoding them again).
    """

    format: int
    world: WorldRef
    task_id: str
    task_hash: str
    revision: str
    sample: int
    seed: int
    calls: Any
    final: Any
    outcome: Outcome
    final_message: str
    usage: _DigestUsage
    user_turns: list[UserTurn] | UnsetType = UNSET
    transcript: list[TranscriptMessage] | UnsetType = UNSET
    digest: str = ""
    context: RecordContext = RecordContext()
    faults: FaultLog | UnsetType = UNSET
    synthetic: list[Synthetic] | UnsetType = UNSET
    tools: list[str] | UnsetType = UNSET


def record_digest(
    record: Record,
    *,
    calls_json: list[bytes] | bytes | None = None,
    final_json: bytes | None = None,
) -> str:
    """The digest of a record's evidence: everything except ``digest`` and ``context``.

    Args:
        record: The record.
        calls_json: The canonical JSON of ``record.calls``, whole or entry by entry, when the
            caller has it.
        final_json: The canonical JSON of ``record.final``, when the caller has it.
    """
    body = _DigestBody(
        format=record.format,
        world=record.world,
        task_id=record.task_id,
        task_hash=record.task_hash,
        revision=record.revision,
        sample=record.sample,
        seed=record.seed,
        calls=_spliced(record.calls, calls_json),
        final=record.final if final_json is None else msgspec.Raw(final_json),
        outcome=record.outcome,
        final_message=record.final_message,
        usage=_DigestUsage.of(record.usage),
        user_turns=record.user_turns or UNSET,
        transcript=record.transcript,
        faults=UNSET if record.faults is None else record.faults,
        synthetic=record.synthetic,
        tools=record.tools,
    )
    return sha256_hex(to_json(body))


def _spliced(calls: list[CallRecord], encoded: list[bytes] | bytes | None) -> Any:
    if encoded is None:
        return calls
    if isinstance(encoded, bytes):
        return msgspec.Raw(encoded)
    return [msgspec.Raw(c) for c in encoded]


def make_record(
    session: Session,
    *,
    outcome: Outcome,
    task_id: str = "",
    task_hash: str = "",
    revision: str = "",
    sample: int = 0,
    final_message: str = "",
    usage: Usage | None = None,
    context: RecordContext | None = None,
    user_turns: list[UserTurn] | None = None,
    transcript: list[TranscriptMessage] | None = None,
) -> Record:
    """Seal a session's evidence into a record (the digest is computed here)."""
    world = session.world
    record = Record(
        world=WorldRef(
            name=world.name, size=world.size, hash=world.hash, contract_hash=world.contract.hash
        ),
        task_id=task_id,
        task_hash=task_hash,
        revision=revision,
        sample=sample,
        seed=session.seed,
        calls=list(session.log),
        final=session.touched(),
        outcome=outcome,
        final_message=final_message,
        usage=usage or Usage(),
        user_turns=list(user_turns or []),
        transcript=list(transcript) if transcript else UNSET,
        context=context or RecordContext(),
        faults=None if session.faults is None else session.faults.log(),
        tools=UNSET if session.tools is None else sorted(session.tools),
    )
    return msgspec.structs.replace(record, digest=record_digest(record))


def encode_record(record: Record, fmt: Literal["json", "msgpack"] = "json") -> bytes:
    """Canonical bytes of a record: sorted keys; JSON indented for reading."""
    if fmt == "msgpack":
        return _MSGPACK.encode(normalised(record))
    return msgspec.json.format(to_json(record), indent=1) + b"\n"


def seal_record(record: Record, fmt: Literal["json", "msgpack"] = "json") -> tuple[bytes, Record]:
    """The bytes a writer saves for ``record``, and the record every reader decodes from them.

    Every writer goes through here, so no record is saved that `decode_record` (the reader,
    with the limits of `harness_world.engine.limits`) would refuse, and whoever judges the
    returned record judges what every reader will read. Bytes as `encode_record` writes them
    that pass the reader's fast-path tests (size, digit runs, indentation depth) need only be
    decoded once here; anything else takes the reader's exact path.

    Raises:
        RecordError: naming the task, the sample and the limit broken (nothing may be saved).
    """
    data = encode_record(record, fmt)
    readable = _decode_sealed(data) if fmt == "json" else None
    if readable is not None:
        return data, readable
    try:
        return data, decode_record(data, fmt)
    except RecordError as exc:
        raise RecordError(
            f"the record of {clean_text(record.task_id)[:200]!r} sample {record.sample} would "
            f"be refused on reading, so it is not saved: {exc}"
        ) from None


def _decode_sealed(data: bytes) -> Record | None:
    """`_decode_canonical` for bytes `encode_record` has just written (None: check exactly).

    Such bytes are canonical by construction, so the typed decode alone stands for the
    reader's fast path (whose re-encoding check exists for bytes of unknown origin).
    """
    if (
        len(data) > MAX_STRING
        or _DEEP_LINE in data
        or _SIXTEEN_DIGITS in data.translate(_DIGITS_TO_ZERO)
    ):
        return None
    try:
        record = _RECORD_JSON.decode(data)
    except (msgspec.DecodeError, RecursionError, ValueError):
        return None
    return record if record.format == FORMAT_VERSION else None


def save_record(record: Record, path: str | Path) -> Path:
    """Write a record atomically: temp file, fsync, rename, fsync of the folder.

    The format follows the suffix: ``.msgpack`` for msgpack, anything else canonical JSON. A
    crash at any moment leaves either the previous file or the complete new one, never half.

    Raises:
        RecordError: when the reader would refuse the record (`seal_record`); nothing is
            written then.
    """
    target = Path(path)
    data, _ = seal_record(record, "msgpack" if target.suffix == ".msgpack" else "json")
    return write_atomically(data, target)


def write_atomically(data: bytes, path: str | Path) -> Path:
    """Write bytes already encoded (e.g. by `encode_record`) as `save_record` writes a record."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    dir_fd = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return target


def decode_record(data: bytes, fmt: Literal["json", "msgpack"] = "json") -> Record:
    """Decode record bytes with strict types, within the limits of `harness_world.engine.limits`.

    Only JSON types are accepted in either format (no msgpack Ext or timestamps, string keys
    only, no duplicate keys), so a record means the same whichever format holds it.

    Raises:
        RecordError: on malformed or truncated input, a broken limit, or an unknown format
            version.
    """
    if len(data) > RECORD_BYTES:
        raise RecordError(f"record of {len(data)} bytes is over the limit of {RECORD_BYTES}")
    record = _decode_canonical(data) if fmt == "json" else None
    if record is None:
        record = _decode_strict(data, fmt)
    if record.format != FORMAT_VERSION:
        raise RecordError(
            f"record format {record.format} is not supported (this build reads {FORMAT_VERSION})"
        )
    return record


def _decode_strict(data: bytes, fmt: Literal["json", "msgpack"]) -> Record:
    """Plain values first, walked against the limits, then typed; every refusal worded."""
    try:
        plain = _decode_plain(data, fmt)
    except RecursionError:
        raise RecordError(f"not a valid record: nested deeper than {RECORD_DEPTH} levels") from None
    problem = check_json_value(plain, RECORD_DEPTH)
    if problem:
        raise RecordError(f"not a valid record: {problem}")
    if fmt == "msgpack" and len(_MSGPACK.encode(plain)) != len(data):
        # Same size whatever the key order; smaller when keys repeat or widths are padded.
        raise RecordError("not a valid record: msgpack not canonically encoded (duplicate keys?)")
    try:
        return msgspec.convert(plain, type=Record)
    except (msgspec.ValidationError, RecursionError) as exc:
        raise RecordError(f"not a valid record: {exc}") from None


# A line indented this deep holds a value nested past the limit, or nearly (see below).
_DEEP_LINE = b"\n" + b" " * RECORD_DEPTH
# Every integer outside ±2^53 has at least 16 digits (2^53 = 9007199254740992): with every
# digit mapped to "0", such a run is a run of sixteen "0" bytes (translate and find are C).
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_SIXTEEN_DIGITS = b"0" * 16
_RECORD_JSON = msgspec.json.Decoder(Record)


def _decode_canonical(data: bytes) -> Record | None:
    """The fast path: a JSON record byte for byte as `encode_record` writes it, or None.

    Such a file is decoded straight into a `Record` (C speed, no plain pass, no walk) and the
    limits are read off its bytes: it is at most `MAX_STRING` bytes long (so no string is
    longer), it holds no run of 16 digits (so every integer is within ±2^53), and no line is
    indented `RECORD_DEPTH` spaces (with one space per level, a value at indentation k sits in
    a container at level k, so no container is deeper than the limit). Equality with the
    canonical encoding of what was decoded proves there were no duplicate keys, no escapes of
    lone surrogates and nothing else the strict loader would refuse. Anything else (another
    layout, a long digit run inside a string, a bigger record) returns None and takes the
    exact, slower path, which also words every refusal.
    """
    if (
        len(data) > MAX_STRING
        or _DEEP_LINE in data
        or _SIXTEEN_DIGITS in data.translate(_DIGITS_TO_ZERO)
    ):
        return None
    try:
        record = _RECORD_JSON.decode(data)
        canonical = encode_record(record)
    except (msgspec.DecodeError, msgspec.EncodeError, RecursionError, ValueError, TypeError):
        return None
    return record if canonical == data else None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        repeated = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise ValueError(f"duplicate key {clean_text(repeated)[:40]!r}")
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _decode_plain(data: bytes, fmt: Literal["json", "msgpack"]) -> Any:
    """Decode into plain values; duplicate JSON keys and msgpack Ext values refused."""
    if fmt == "msgpack":
        try:
            plain = msgspec.msgpack.decode(data, ext_hook=_refuse_ext)
        except (msgspec.DecodeError, ValueError) as exc:
            raise RecordError(f"not a valid record: {exc}") from None
        return plain
    try:
        return json.loads(data, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except (ValueError, TypeError) as exc:
        raise RecordError(f"not a valid record: {exc}") from None


def _refuse_ext(code: int, data: memoryview) -> Any:
    raise ValueError(f"msgpack extension type {code} is not JSON")


_MSGPACK = msgspec.msgpack.Encoder(order="sorted")


def read_record_bytes(path: str | Path) -> bytes:
    """The exact bytes of a record file (a regular file only: a FIFO or device would block).

    Raises:
        RecordError: naming the file when it cannot be read.
    """
    source = Path(path)
    try:
        if source.exists() and not source.is_file():
            raise RecordError(f"{source}: not a regular file")
        return source.read_bytes()
    except OSError as exc:
        raise RecordError(f"{source}: cannot read: {exc.strerror or exc}") from None


def load_record(path: str | Path) -> Record:
    """Read a record file (JSON or ``.msgpack``).

    Raises:
        RecordError: naming the file and what is wrong with it.
    """
    source = Path(path)
    data = read_record_bytes(source)
    try:
        return decode_record(data, "msgpack" if source.suffix == ".msgpack" else "json")
    except RecordError as exc:
        raise RecordError(f"{source}: {exc}") from None
