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
  that another user owns or others may read or write turns the cache off;
- the entry holds its own key under the MAC, so an entry renamed to another key is refused;
- entries are written to a temporary file and renamed into place (atomic, so concurrent
  readers and writers see a whole entry or none);
- the folder is bounded (`DEFAULT_LIMIT` bytes, or ``HARNESS_WORLD_JUDGEMENTS_MB``): past
  the bound the least recently used entries are removed.
"""

from __future__ import annotations

import contextlib
import functools
import hmac
import os
import secrets
import stat
import time
from pathlib import Path

import attrs

from harness_world.engine.paths import build_identity, cache_dir

__all__ = [
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

_MAGIC = b"hwj1"
_MAC = 32
_SECRET = "secret"
_ENTRY_BYTES = 64 * 1024 * 1024  # an entry larger than this is no entry the cache wrote
_TOUCH_AFTER_S = 600.0  # an entry used again is marked used when its mark is older than this


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
        if secret is None:
            return None
        path = self._path(key)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            size = info.st_size if stat.S_ISREG(info.st_mode) else _ENTRY_BYTES + 1
            data = os.read(fd, size) if size <= _ENTRY_BYTES else b""
        except OSError:
            return None
        finally:
            os.close(fd)
        head = len(_MAGIC) + _MAC
        if len(data) > _ENTRY_BYTES or len(data) < head or not data.startswith(_MAGIC):
            return None
        mac, body = data[len(_MAGIC) : head], data[head:]
        signed = key.encode() + b"\x00" + body
        if not hmac.compare_digest(mac, hmac.digest(secret, signed, "sha256")):
            return None
        if time.time() - info.st_mtime > _TOUCH_AFTER_S:
            with contextlib.suppress(OSError):
                os.utime(path)  # recently used: evicted last
        return body

    def put(self, key: str, payload: bytes) -> None:
        """Store ``payload`` under ``key`` (atomically; a failure to write is not an error)."""
        secret = self._key()
        if secret is None or len(payload) > _ENTRY_BYTES - 64:
            return
        mac = hmac.digest(secret, key.encode() + b"\x00" + payload, "sha256")
        path = self._path(key)
        temporary = os.path.join(os.path.dirname(path), f".{key[2:]}.{secrets.token_hex(6)}")
        try:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            with open(temporary, "xb") as handle:
                handle.write(_MAGIC + mac + payload)
            os.replace(temporary, path)
            self._wrote = True
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)

    def mark_written(self) -> None:
        """Note that entries were written (by worker processes), so `trim` bounds the folder."""
        self._wrote = True

    def trim(self) -> int:
        """Remove the least recently used entries past the bound (after a read that wrote).

        Returns:
            How many entries were removed.
        """
        if not self._wrote:
            return 0
        self._wrote = False
        entries = sorted(self._entries(), key=lambda e: e[0])
        total = sum(size for _, size, _ in entries)
        removed = 0
        for _, size, path in entries:
            if total <= self.limit:
                break
            with contextlib.suppress(OSError):
                path.unlink()
                total -= size
                removed += 1
        return removed

    def clear(self) -> int:
        """Remove every entry (and the secret, so nothing written before is ever used again).

        Returns:
            How many entries were removed.
        """
        removed = 0
        for _, _, path in self._entries():
            with contextlib.suppress(OSError):
                path.unlink()
                removed += 1
        with contextlib.suppress(OSError):
            (self.root / _SECRET).unlink()
        self._secret = None
        return removed

    def _entries(self) -> list[tuple[float, int, Path]]:
        """Every entry file: (last use, size, path)."""
        found: list[tuple[float, int, Path]] = []
        try:
            folders = [e for e in os.scandir(self.root) if e.is_dir(follow_symlinks=False)]
        except OSError:
            return found
        for folder in folders:
            with contextlib.suppress(OSError):
                for entry in os.scandir(folder.path):
                    if entry.is_file(follow_symlinks=False):
                        info = entry.stat(follow_symlinks=False)
                        found.append((info.st_mtime, info.st_size, Path(entry.path)))
        return found

    def _path(self, key: str) -> str:
        return os.path.join(self.root, key[:2], key[2:])

    def _key(self) -> bytes | None:
        """The cache's secret, made on first use (None: the cache is off)."""
        if self._secret is None and not self._off:
            try:
                self._secret = _secret(self.root)
            except OSError:
                self._secret = None
            self._off = self._secret is None
        return self._secret


def _secret(root: Path) -> bytes | None:
    """The secret in ``root``, made when absent; None when it is not this user's alone.

    Raises:
        OSError: when the folder or the secret cannot be made or read.
    """
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = root / _SECRET
    if not path.exists():  # made whole, then linked into place: a reader never sees half
        made = root / f".{_SECRET}.{secrets.token_hex(6)}"
        fd = os.open(made, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(32))
        try:
            os.link(made, path)
        except FileExistsError:
            pass  # another process made it first: use theirs
        finally:
            made.unlink()
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        private = info.st_mode & (stat.S_IRWXG | stat.S_IRWXO) == 0
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or not private:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(33)
    finally:
        os.close(fd)
    return data if len(data) == 32 else None


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
