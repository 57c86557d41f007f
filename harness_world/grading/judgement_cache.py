"""The verifier's own judgement cache: judgements kept on this machine, used only by their maker.

A judgement (a slot's `SlotResult` and the figures measured from its replayed record) is a pure
function of what the verifier was given: the record files' bytes, the slot that binds them, the
task, the worlds, the verifier's bounds and the code that judged. The verifier keys each
judgement by a hash over all of those (`harness_world.grading.verifier.Verifier.judgement`), so
any difference in any of them is a different key and a fresh replay. This module stores the
judgements and refuses to hand back any it did not write itself:

- it lives under `harness_world.engine.paths.cache_dir` (``judgements/``), never in a run
  directory, and a reader whose run contains the cache does not use it;
- every entry is authenticated with HMAC-SHA256 under a secret made here (``secret``, 32 random
  bytes, mode 0600, owned by this user): an entry planted or edited by anyone without the
  secret, or copied from another machine's cache, fails the check and is never used; a secret
  or an entry store that another user owns or others may read or write turns the cache off;
- the entry holds its own key under the MAC, so an entry moved to another key is refused;
- the entries are rows of one SQLite database (``entries.sqlite3``, write-ahead log), written
  in transactions of up to `BATCH` entries: concurrent readers and writers see a whole entry
  or none, and a read that fills the cache creates one file, not one per entry (a file's
  creation cost more than the rest of an entry's storing on this machine's disk);
- the store is bounded (`DEFAULT_LIMIT` bytes, or ``HARNESS_WORLD_JUDGEMENTS_MB``): past the
  bound the least recently used entries are removed.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hmac
import os
import shutil
import sqlite3
import stat
import threading
import time
from pathlib import Path

import attrs

from harness_world.engine.paths import build_identity, cache_dir
from harness_world.engine.seed_cache import SECRET
from harness_world.engine.seed_cache import private_secret as _secret

__all__ = [
    "BATCH",
    "CACHE_OPTIONS",
    "DEFAULT_LIMIT",
    "FOLDER",
    "JudgementCache",
    "judgement_cache",
    "judging_build",
]

FOLDER = "judgements"
"""The cache's folder under `harness_world.engine.paths.cache_dir`."""

DEFAULT_LIMIT = 1024 * 1024 * 1024
"""The most bytes the cache's entries take before the least recently used are removed."""

CACHE_OPTIONS = {
    "--no-cache": "replay every record: use and keep no cached judgement (README: the judgement "
    "cache)",
    "--clear-cache": "first remove every judgement this user's judgement cache holds",
}
"""The options of every command that reads runs, and their help."""

BATCH = 512
"""The most entries one transaction writes (a process's entries are committed by then, by
`JudgementCache.flush`, or by `JudgementCache.trim`)."""

_MAGIC = b"hwj1"
_MAC = 32
_STORE = "entries.sqlite3"
_ENTRY_BYTES = 64 * 1024 * 1024  # an entry larger than this is no entry the cache wrote
_TOUCH_AFTER_S = 600.0  # an entry used again is marked used when its mark is older than this
# Held while a connection is opened; made anew in a forked child (a thread may hold it then).
_OPENING = [threading.Lock()]
os.register_at_fork(after_in_child=lambda: _OPENING.__setitem__(0, threading.Lock()))


@functools.cache
def judging_build() -> str:
    """The build of harness_world judging in this process (`build_identity`, once a process)."""
    return build_identity()


@attrs.define(slots=True)
class JudgementCache:
    """An authenticated store of judgements by key, in one folder of this machine.

    Attributes:
        root: The folder (``<cache_dir>/judgements`` by default).
        limit: The most bytes its entries may take; older entries are removed past it.
    """

    root: Path
    limit: int = DEFAULT_LIMIT
    _secret: bytes | None = attrs.field(default=None, init=False)
    _off: bool = attrs.field(default=False, init=False)
    _wrote: bool = attrs.field(default=False, init=False)
    _store: sqlite3.Connection | None = attrs.field(default=None, init=False)
    _owner: int = attrs.field(default=0, init=False)  # the process that opened ``_store``
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False)
    _pending: dict[str, bytes] = attrs.field(factory=dict, init=False)
    _touched: dict[str, float] = attrs.field(factory=dict, init=False)

    @classmethod
    def default(cls) -> JudgementCache:
        """The cache of this user on this machine (``HARNESS_WORLD_JUDGEMENTS_MB`` bounds it)."""
        megabytes = os.environ.get("HARNESS_WORLD_JUDGEMENTS_MB", "")
        limit = int(megabytes) * 1024 * 1024 if megabytes.isdigit() else DEFAULT_LIMIT
        return cls(root=cache_dir() / FOLDER, limit=limit)

    def serves(self, run: Path) -> bool:
        """Whether this cache may judge for ``run``: it must not lie inside the run directory."""
        try:
            self.root.resolve().relative_to(run.resolve())
        except ValueError:
            return True
        return False

    def get(self, key: str) -> bytes | None:
        """The payload stored under ``key`` by this cache, or None (absent, or not its own)."""
        secret = self._key()
        store = self._connection()
        if secret is None or store is None:
            return None
        with self._lock:
            data = self._pending.get(key)
            if data is None:
                try:
                    row = store.execute(
                        "SELECT body, used FROM entry WHERE key = ?", (key,)
                    ).fetchone()
                except sqlite3.Error:
                    return None
                if row is None or not isinstance(row[0], bytes):
                    return None
                data, used = row[0], row[1]
                if not isinstance(used, float | int) or time.time() - used > _TOUCH_AFTER_S:
                    self._touched[key] = time.time()  # recently used: evicted last
        return _opened(secret, key, data)

    def put(self, key: str, payload: bytes) -> None:
        """Store ``payload`` under ``key``; a failure to write is not an error.

        Kept in this process until `BATCH` entries wait, `flush` or `trim` is called, or the
        process exits, then written in one short transaction (never one held open while
        records are judged, which would stall every other process that writes).
        """
        secret = self._key()
        if secret is None or len(payload) > _ENTRY_BYTES - 64:
            return
        if self._connection() is None:
            return
        mac = hmac.digest(secret, key.encode() + b"\x00" + payload, "sha256")
        with self._lock:
            self._pending[key] = _MAGIC + mac + payload
            self._wrote = True
            full = len(self._pending) >= BATCH
        if full:
            self.flush()

    def flush(self) -> None:
        """Write the entries this process keeps and the uses it noted, in one transaction."""
        with self._lock:
            store = self._store if self._owner == os.getpid() else None
            if store is None or not (self._pending or self._touched):
                return
            now = time.time()
            rows = [(k, body, now) for k, body in self._pending.items()]
            uses = [(t, k) for k, t in self._touched.items()]
            self._pending, self._touched = {}, {}
            try:
                store.execute("BEGIN IMMEDIATE")
                store.executemany(
                    "INSERT OR REPLACE INTO entry (key, body, used) VALUES (?, ?, ?)", rows
                )
                store.executemany("UPDATE entry SET used = ? WHERE key = ?", uses)
                store.execute("COMMIT")
            except sqlite3.Error:  # a cache: entries not written are judged again
                with contextlib.suppress(sqlite3.Error):
                    store.execute("ROLLBACK")

    def mark_written(self) -> None:
        """Note that entries were written (by worker processes), so `trim` bounds the store."""
        self._wrote = True

    def trim(self) -> int:
        """Write what waits, then remove the least recently used entries past the bound.

        A reader calls it after a read that wrote.

        Returns:
            How many entries were removed.
        """
        self.flush()
        if not self._wrote:
            return 0
        self._wrote = False
        store = self._connection()
        if store is None:
            return 0
        with self._lock:
            try:
                return _evict(store, self.limit)
            except sqlite3.Error:
                with contextlib.suppress(sqlite3.Error):
                    store.execute("ROLLBACK")
                return 0

    def clear(self) -> int:
        """Remove every entry (and the secret, so nothing written before is ever used again).

        Returns:
            How many entries were removed.
        """
        removed = 0
        store = self._connection()
        if store is not None:
            with self._lock, contextlib.suppress(sqlite3.Error):
                removed = int(store.execute("SELECT count(*) FROM entry").fetchone()[0])
        self._pending, self._touched = {}, {}
        self.close()
        for name in (_STORE, f"{_STORE}-wal", f"{_STORE}-shm", SECRET):
            with contextlib.suppress(OSError):
                (self.root / name).unlink()
        removed += _remove_entry_folders(self.root)
        self._secret, self._off = None, False
        return removed

    def close(self) -> None:
        """Write what waits and close this process's connection to the store."""
        self.flush()
        with self._lock:
            if self._store is not None and self._owner == os.getpid():
                with contextlib.suppress(sqlite3.Error):
                    self._store.close()
            self._store, self._owner = None, 0

    def _connection(self) -> sqlite3.Connection | None:
        """The connection of this process to the store, opened on first use (None: off).

        A forked process never uses the connection it inherited (SQLite forbids it): it opens
        its own, with a fresh lock and nothing waiting (the parent's entries are the parent's
        to write). Entries still waiting when the process exits are written then.
        """
        if self._store is not None and self._owner == os.getpid():
            return self._store
        if self._key() is None:
            return None
        with _OPENING[0]:  # two threads' first use opens one connection
            if self._store is not None and self._owner == os.getpid():
                return self._store
            self._lock = threading.Lock()
            self._pending, self._touched = {}, {}
            try:
                self._store = _open_store(self.root)
            except (OSError, sqlite3.Error):
                self._store = None
            self._owner = os.getpid() if self._store is not None else 0
            self._off = self._store is None
            if self._store is not None:
                atexit.register(self.flush)
            return self._store

    def _key(self) -> bytes | None:
        """The cache's secret, made on first use (None: the cache is off)."""
        if self._secret is None and not self._off:
            try:
                self._secret = _secret(self.root)
            except OSError:
                self._secret = None
            self._off = self._secret is None
        return self._secret


def _opened(secret: bytes, key: str, data: bytes) -> bytes | None:
    """The payload of a stored entry when its MAC is this cache's for ``key`` (else None)."""
    head = len(_MAGIC) + _MAC
    if len(data) > _ENTRY_BYTES or len(data) < head or not data.startswith(_MAGIC):
        return None
    mac, body = data[len(_MAGIC) : head], data[head:]
    signed = key.encode() + b"\x00" + body
    if not hmac.compare_digest(mac, hmac.digest(secret, signed, "sha256")):
        return None
    return body


def _evict(store: sqlite3.Connection, limit: int) -> int:
    """Delete the least recently used entries until the store's entries fit in ``limit``."""
    total = store.execute("SELECT coalesce(sum(length(body)), 0) FROM entry").fetchone()[0]
    if total <= limit:
        return 0
    doomed: list[tuple[str]] = []
    for key, size in store.execute("SELECT key, length(body) FROM entry ORDER BY used, key"):
        if total <= limit:
            break
        doomed.append((key,))
        total -= size
    store.execute("BEGIN")
    store.executemany("DELETE FROM entry WHERE key = ?", doomed)
    store.execute("COMMIT")
    return len(doomed)


def _private(fd: int) -> bool:
    """Whether an open file is a regular file of this user's that no one else may use."""
    info = os.fstat(fd)
    private = info.st_mode & (stat.S_IRWXG | stat.S_IRWXO) == 0
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and private


def _open_store(root: Path) -> sqlite3.Connection | None:
    """The store's connection; None when its file is not this user's alone.

    The file is made here, mode 0600, before SQLite opens it (SQLite would make it with the
    process's umask). A store made afresh removes the entry folders of the file-per-entry
    layout this store replaced, which nothing reads any more.

    Raises:
        OSError: when the file cannot be made or looked at.
        sqlite3.Error: when it is not a database SQLite can use.
    """
    path = root / _STORE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        made = True
    except FileExistsError:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
        made = False
    try:
        if not _private(fd):
            return None
    finally:
        os.close(fd)
    if made:
        _remove_entry_folders(root)
    store = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    store.execute("PRAGMA journal_mode=WAL")
    store.execute("PRAGMA synchronous=NORMAL")  # a cache: a lost last commit is a replay
    # a rowid table: its key index stays small, where a table clustered on the key holds the
    # entries' bodies in its tree (a lookup there cost about four times as much, measured)
    store.execute(
        "CREATE TABLE IF NOT EXISTS entry "
        "(key TEXT PRIMARY KEY, body BLOB NOT NULL, used REAL NOT NULL)"
    )
    store.execute("CREATE INDEX IF NOT EXISTS entry_used ON entry (used)")
    return store


def _remove_entry_folders(root: Path) -> int:
    """Remove the two-hex-digit entry folders of the earlier file-per-entry layout."""
    removed = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            name = entry.name
            legacy = len(name) == 2 and all(c in "0123456789abcdef" for c in name)
            if legacy and entry.is_dir(follow_symlinks=False):
                removed += sum(len(files) for _, _, files in os.walk(entry.path))
                shutil.rmtree(entry.path, ignore_errors=True)
    return removed


def judgement_cache(*, use: bool = True, clear: bool = False) -> JudgementCache | None:
    """The user's judgement cache as a command's options ask (``--no-cache``, ``--clear-cache``).

    Args:
        use: Whether to use it (False: every slot judged afresh, nothing kept).
        clear: Remove every entry first.
    """
    cache = JudgementCache.default()
    if clear:
        cache.clear()
    return cache if use else None
