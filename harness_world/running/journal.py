"""Append-only JSON-lines files: ledgers and review logs that nothing rewrites or rolls back.

Each append is one ``write`` of whole lines on a descriptor opened ``O_APPEND``, made durable
(fsync) before it returns, so two writers appending at once do not interleave their lines and
an acknowledged line survives a crash.

A *chained* journal (`append_chained`, `parse_chained`) links every line to the one before it:
each carries ``previous``, the SHA-256 of the previous line's bytes, and the first line the
SHA-256 of an anchor (what the journal belongs to: a split's lock, a run's revision). Beside
it, its *head* (``<name>.head.json``, `JournalHead`) holds how many lines the journal has and
the link after the last one, rewritten by every append while the journal is locked. Editing,
removing, inserting or reordering a line breaks the chain at the next line; cutting lines from
the end, or editing the last one, no longer matches the head. Each reading names the line.

The chain and the head have no secret: on their own they catch an accident, not a forger who
rewrites the lines after an edit and the head with them ("unsigned: integrity only"). A writer
holding an Ed25519 key also signs the head (`SignedHead`, one per key, each covering the lines
there were when that key last appended); a reader trusting that key checks its signature and
that the journal still begins with the lines it covers, so removing, reordering or editing any
of them, or cutting them off, is named. What no head can tell is a journal *and* its head put
back together to a state the key signed earlier (a rollback by someone who kept copies): a
reader compares the head it is shown (lines and hash, printed by every reader) with one it
knows.

Every file is read through `harness_world.engine.limits.read_regular_file` (a FIFO or a device
is refused, sizes are bounded), and `parse_chained` is a function of the bytes read.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Final, Generic, TypeVar

import attrs
import msgspec

from harness_world.engine.limits import read_regular_file
from harness_world.errors import HarnessWorldError
from harness_world.evidence.record import write_atomically
from harness_world.evidence.signing import sign_message, signed_message_problem, trusted_key_hex

__all__ = [
    "HEAD_BYTES",
    "JOURNAL_BYTES",
    "BrokenChain",
    "ChainState",
    "Chained",
    "JournalHead",
    "SignedHead",
    "append_chained",
    "append_chained_all",
    "chain_link",
    "describe_chain",
    "head_path",
    "parse_chained",
    "read_chained",
    "read_journal_files",
    "sign_head",
]

JOURNAL_BYTES: Final = 256 * 1024 * 1024
"""Largest journal read (a review line may hold a note of a million characters)."""
HEAD_BYTES: Final = 1024 * 1024
"""Largest head file read (a signed head takes about 250 bytes)."""
HEAD_FORMAT: Final = 1
_HEAD_DOMAIN = b"harness_world journal head v1\n"
_Sha256 = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]

S = TypeVar("S", bound=msgspec.Struct)


class BrokenChain(HarnessWorldError, ValueError):
    """A chained journal whose lines or head do not agree: a line or the head was changed."""


class SignedHead(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A journal's head as one key signed it when it last appended (or countersigned).

    Attributes:
        lines: Lines the journal had then.
        head: The link after the last of them (of the anchor, for none).
        public_key: The signer's raw Ed25519 public key, hex. A reader checks with the key
            it trusts, never this one.
        signature: Ed25519 signature of `head_message` (anchor, lines, head), hex.
    """

    lines: Annotated[int, msgspec.Meta(ge=0)]
    head: _Sha256
    public_key: str
    signature: str


class JournalHead(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``<journal>.head.json``: how many lines the journal has and the link after the last.

    Attributes:
        format: Head format version.
        anchor: The link of the anchor (SHA-256 of what the journal belongs to).
        lines: Lines in the journal.
        head: The link after the last line (the anchor's, for none).
        signed: One head per key that signed one, as of its last append.
    """

    format: Annotated[int, msgspec.Meta(ge=HEAD_FORMAT, le=HEAD_FORMAT)] = HEAD_FORMAT
    anchor: _Sha256
    lines: Annotated[int, msgspec.Meta(ge=0)]
    head: _Sha256
    signed: list[SignedHead] = []


class ChainState(msgspec.Struct, frozen=True, kw_only=True):
    """What a journal's chain vouches for, as its readers report it.

    Attributes:
        lines: Lines in the journal.
        head: The link after the last line, hex (compare it with a head you know).
        trusted: Lines covered by a head the trusted key signed; None when read without a
            trusted key (integrity only).
        signers: How many keys signed a head of it (checked only for a trusted key).
    """

    lines: int
    head: str
    trusted: int | None = None
    signers: int = 0


@attrs.frozen(slots=True)
class Chained(Generic[S]):
    """A chained journal read and checked: its items, their links and its head.

    Attributes:
        items: The lines, decoded, in order.
        links: ``links[i]`` is the link after ``i`` lines (``links[0]`` the anchor's).
        head: The head file, decoded (None for a journal that has none yet).
        source: The journal's path, for messages.
    """

    items: list[S]
    links: list[str]
    head: JournalHead | None
    source: Path

    def state(self, trusted: int | None = None) -> ChainState:
        """The chain's state; ``trusted``: lines a trusted key's head covers."""
        signers = len(self.head.signed) if self.head else 0
        return ChainState(
            lines=len(self.items), head=self.links[-1], trusted=trusted, signers=signers
        )

    def signed_by(self, trust_key: Path) -> SignedHead | None:
        """The head the trusted key signed, its signature checked (None: it signed none).

        Raises:
            BrokenChain: when that head's signature does not verify.
            SigningError: when the trusted key cannot be read.
        """
        mine = trusted_key_hex(trust_key)
        signed = self.head.signed if self.head else []
        entry = next((e for e in signed if e.public_key == mine), None)
        if entry is None:
            return None
        message = head_message(self.links[0], entry.lines, entry.head)
        if problem := signed_message_problem(trust_key, mine, entry.signature, message):
            raise BrokenChain(f"{head_path(self.source)}: the trusted key's head: {problem}")
        return entry


def head_path(path: Path) -> Path:
    """The head beside a journal: ``reviews.jsonl`` -> ``reviews.head.json``."""
    return path.with_name(f"{path.stem}.head.json")


def chain_link(data: bytes) -> str:
    """The link to ``data`` a following line carries: its SHA-256, hex."""
    return hashlib.sha256(data).hexdigest()


def head_message(anchor: str, lines: int, head: str) -> bytes:
    """What a signed head signs: the anchor's link, the line count and the head link."""
    return _HEAD_DOMAIN + f"{anchor}\n{lines}\n{head}".encode()


def describe_chain(state: ChainState) -> str:
    """A chain's state in words: lines, head, and what vouches for them."""
    shown = f"{state.lines} line(s), head {state.head[:16]}"
    if state.trusted is None and state.signers:
        return f"{shown}; signed by {state.signers} key(s), none trusted here: integrity only"
    if state.trusted is None:
        return f"{shown}; unsigned: integrity only"
    rest = state.lines - state.trusted
    after = f"; the {rest} after them are not" if rest else ""
    return f"{shown}; lines 1-{state.trusted} signed by the trusted key{after}"


def _lines(data: bytes) -> list[tuple[int, bytes]]:
    """The non-blank lines of ``data`` with their 1-based line numbers."""
    return [(n, line) for n, line in enumerate(data.splitlines(), start=1) if line.strip()]


def _decoded(decoder: msgspec.json.Decoder[S], number: int, line: bytes) -> S:
    """One line decoded; an error names the line."""
    try:
        return decoder.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise type(exc)(f"line {number}: {exc}") from None
    except RecursionError as exc:  # a line nested past the decoder's stack: one error, no trace
        raise msgspec.DecodeError(f"line {number}: {exc}") from None


def _linked(
    data: bytes, anchor: tuple[bytes, str], kind: type[S], source: Path
) -> tuple[list[S], list[str]]:
    """The items of a chained journal's bytes and the link after each prefix."""
    anchor_name = anchor[1]
    decoder = msgspec.json.Decoder(kind)
    links, items = [chain_link(anchor[0])], list[S]()
    for number, line in _lines(data):
        item = _decoded(decoder, number, line)
        if getattr(item, "previous", None) != links[-1]:
            why = (
                f"line {number} does not follow the line before it: that line was edited, or "
                "a line was removed, inserted or moved"
                if items
                else f"line {number} does not follow {anchor_name} as it was when the line was "
                f"written: {anchor_name} was edited, or the first line was edited, removed or moved"
            )
            raise BrokenChain(f"{source}: {why}")
        items.append(item)
        links.append(chain_link(line))
    return items, links


def _span(first: int, last: int) -> str:
    """``line 3 was`` or ``lines 3-5 were``."""
    return f"line {first} was" if first == last else f"lines {first}-{last} were"


def _head_problem(head: JournalHead, links: list[str]) -> str:
    """Why the head does not describe the journal whose links these are (empty: it does)."""
    count = len(links) - 1
    if head.anchor != links[0]:
        return "it belongs to another journal (another anchor)"
    if head.lines > count:
        return (
            f"it counts {head.lines} line(s) and the journal has {count}: "
            f"{_span(count + 1, head.lines)} cut from the end"
        )
    if head.lines < count:
        return (
            f"it counts {head.lines} line(s) and the journal has {count}: "
            f"{_span(head.lines + 1, count)} appended without it, or it was replaced by an "
            "older one"
        )
    if head.head != links[-1]:
        return f"line {count} (the last) was edited since it was written, or the chain recomputed"
    for entry in head.signed:
        if entry.lines > count or links[entry.lines] != entry.head:
            return (
                f"the head signed by key {entry.public_key[:16]} covers {entry.lines} line(s) "
                "the journal no longer begins with: a line among them was removed, moved or "
                "edited, or lines were cut from the end"
            )
    return ""


def parse_chained(
    data: bytes, head: bytes | None, anchor: tuple[bytes, str], kind: type[S], source: Path
) -> Chained[S]:
    """A chained journal's bytes and its head's bytes, checked against each other.

    Args:
        data: The journal's bytes (empty when it does not exist).
        head: The head file's bytes (None when it does not exist).
        anchor: The bytes the first line links to, and what they are (for messages).
        kind: What a line is (a struct with a ``previous`` field).
        source: The journal's path, for messages.

    Raises:
        msgspec.DecodeError: when a line is not JSON (the message names the line).
        msgspec.ValidationError: when a line is not a ``kind`` (likewise).
        BrokenChain: when a line does not carry the link to the line before (or the anchor),
            or the head is missing, unreadable or does not describe the journal.
    """
    items, links = _linked(data, anchor, kind, source)
    where = head_path(source)
    if head is None:
        if items:
            raise BrokenChain(
                f"{where}: missing: the journal's {len(items)} line(s) have no head, so lines "
                "cut from its end could not be told (the head was removed)"
            )
        return Chained(items=items, links=links, head=None, source=source)
    try:
        decoded = msgspec.json.decode(head, type=JournalHead)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BrokenChain(f"{where}: not a journal head: {exc}") from None
    if problem := _head_problem(decoded, links):
        raise BrokenChain(f"{where}: does not describe {source.name}: {problem}")
    return Chained(items=items, links=links, head=decoded, source=source)


def read_journal_files(path: Path) -> tuple[bytes, bytes | None]:
    """The bytes of a journal (empty when it does not exist) and of its head (None: none).

    Raises:
        OSError: when either exists and is not a regular file within its limit, or cannot
            be read.
    """
    data = _read_if_present(path, JOURNAL_BYTES)
    head = _read_if_present(head_path(path), HEAD_BYTES)
    return data or b"", head


def _read_if_present(path: Path, limit: int) -> bytes | None:
    if not os.path.lexists(path):
        return None
    return read_regular_file(path, limit)


def read_chained(path: Path, anchor: tuple[bytes, str], kind: type[S]) -> Chained[S]:
    """A chained journal and its head read from disk and checked (`parse_chained`).

    Raises:
        OSError: as `read_journal_files`.
        msgspec.DecodeError, msgspec.ValidationError, BrokenChain: as `parse_chained`.
    """
    data, head = read_journal_files(path)
    return parse_chained(data, head, anchor, kind, path)


def append_chained(
    path: Path,
    anchor: tuple[bytes, str],
    kind: type[S],
    make: Callable[[str], S],
    *,
    signer: Path | None = None,
) -> S:
    """Append ``make(previous)`` to a chained journal, durably; the item written.

    See `append_chained_all` (of one item).
    """
    return append_chained_all(path, anchor, kind, [make], signer=signer)[0]


def append_chained_all(
    path: Path,
    anchor: tuple[bytes, str],
    kind: type[S],
    makes: Sequence[Callable[[str], S]],
    *,
    signer: Path | None = None,
) -> list[S]:
    """Append one item per ``make`` (each given the link it must carry) in one write.

    The journal is locked while its chain and head are read and checked, the lines written
    and made durable, and the head rewritten (signed by ``signer`` too, when given), so two
    writers appending at once each link to the other's lines. Nothing is appended to a
    journal already broken. A crash between the lines and the head leaves a head one append
    behind, which the next reading reports (never a cut it hides).

    Raises:
        OSError: when the journal is not a regular file, or cannot be opened, read or
            written.
        SigningError: when ``signer`` cannot be read.
        msgspec.DecodeError, msgspec.ValidationError, BrokenChain: as `parse_chained`.
    """
    fd = _open_journal(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        chain = parse_chained(_read_fd(fd, path), _read_head(path), anchor, kind, path)
        items, lines, links = [], [], list(chain.links)
        for make in makes:
            item = make(links[-1])
            line = msgspec.json.encode(item)
            items.append(item)
            lines.append(line + b"\n")
            links.append(chain_link(line))
        head = _new_head(chain, links, signer)  # signed before anything is written
        os.write(fd, b"".join(lines))
        os.fsync(fd)
        write_atomically(msgspec.json.encode(head) + b"\n", head_path(path))
    finally:
        os.close(fd)  # releases the lock
    return items


def sign_head(path: Path, anchor: tuple[bytes, str], kind: type[S], signer: Path) -> ChainState:
    """Sign a journal's head as it stands (e.g. an empty ledger when its split is frozen).

    Raises:
        OSError, SigningError, msgspec.DecodeError, msgspec.ValidationError, BrokenChain: as
            `append_chained_all`.
    """
    fd = _open_journal(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        chain = parse_chained(_read_fd(fd, path), _read_head(path), anchor, kind, path)
        head = _new_head(chain, chain.links, signer)
        write_atomically(msgspec.json.encode(head) + b"\n", head_path(path))
    finally:
        os.close(fd)
    return chain.state()


def _open_journal(path: Path) -> int:
    """A descriptor on the journal, created if absent; refused at once unless a regular file."""
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags, 0o644)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > JOURNAL_BYTES:
        os.close(fd)
        why = "not a regular file" if not stat.S_ISREG(info.st_mode) else "over the size limit"
        raise OSError(errno.EINVAL, why, str(path))
    return fd


def _read_fd(fd: int, path: Path) -> bytes:
    with os.fdopen(os.dup(fd), "rb") as handle:
        handle.seek(0)
        data = handle.read(JOURNAL_BYTES + 1)
    if len(data) > JOURNAL_BYTES:
        raise OSError(errno.EFBIG, f"over the limit of {JOURNAL_BYTES} bytes", str(path))
    return data


def _read_head(path: Path) -> bytes | None:
    return _read_if_present(head_path(path), HEAD_BYTES)


def _new_head(chain: Chained[S], links: list[str], signer: Path | None) -> JournalHead:
    """The head for ``links``; with ``signer``, its own signed head replaced too."""
    signed = list(chain.head.signed) if chain.head else []
    lines = len(links) - 1
    if signer is not None:
        public, signature = sign_message(signer, head_message(links[0], lines, links[-1]))
        mine = SignedHead(lines=lines, head=links[-1], public_key=public, signature=signature)
        signed = [e for e in signed if e.public_key != public] + [mine]
    return JournalHead(anchor=links[0], lines=lines, head=links[-1], signed=signed)
