"""Generated seeds kept on this machine, used only when this user's cache wrote them.

A world's generated sizes (``helpdesk``'s ``large``) are made by its ``generate`` function and
kept under `harness_world.engine.paths.cache_dir` (``<world>/<size>-<source hash>.msgpack``)
so the next load decodes them instead. What is kept there is the data every record of that
size is replayed on and graded against, so it is held to what the judgement cache's entries
are held to: each file carries an HMAC-SHA256 under a secret of the folder's own (``secret``,
32 random bytes, mode 0600, this user's), over the file's name and its bytes. A seed planted
or edited by anyone without the secret, copied from another machine's cache or moved to
another size's name is not used: the world is generated again and kept afresh. A secret that
another user owns or others may read keeps nothing and uses nothing.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from harness_world.engine.limits import RECORD_BYTES

__all__ = ["SECRET", "keep", "private_secret", "read"]

SECRET = "secret"
"""The file holding a cache folder's secret."""

_MAGIC = b"hws1"
_MAC = 32
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def private_secret(root: Path) -> bytes | None:
    """The secret in ``root``, made when absent; None when it is not this user's alone.

    Raises:
        OSError: when the folder or the secret cannot be made or read.
    """
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = root / SECRET
    if not path.exists():  # made whole, then linked into place: a reader never sees half
        made = root / f".{SECRET}.{secrets.token_hex(6)}"
        fd = os.open(made, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(32))
        try:
            os.link(made, path)
        except FileExistsError:
            pass  # another process made it first: use theirs
        finally:
            made.unlink()
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
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


def _secret(folder: Path) -> bytes | None:
    try:
        return private_secret(folder)
    except OSError:
        return None


def _mac(secret: bytes, name: str, data: bytes) -> bytes:
    return hmac.digest(secret, name.encode() + b"\x00" + data, "sha256")


def read(folder: Path, name: str) -> bytes | None:
    """The bytes kept as ``<name>.msgpack`` in ``folder`` by this cache.

    None when absent, or not its own: planted, edited, another cache's or another name's.
    """
    secret = _secret(folder)
    if secret is None:
        return None
    try:
        fd = os.open(folder / f"{name}.msgpack", os.O_RDONLY | _NOFOLLOW)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > RECORD_BYTES + len(_MAGIC) + _MAC:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            blob = handle.read(RECORD_BYTES + len(_MAGIC) + _MAC + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    head = len(_MAGIC) + _MAC
    if len(blob) < head or not blob.startswith(_MAGIC):
        return None
    data = blob[head:]
    if not hmac.compare_digest(blob[len(_MAGIC) : head], _mac(secret, name, data)):
        return None
    return data


def keep(folder: Path, name: str, data: bytes) -> None:
    """Keep ``data`` as ``<name>.msgpack`` in ``folder``, authenticated.

    A failure to write is no error: the seed is generated again next time.
    """
    secret = _secret(folder)
    if secret is None or len(data) > RECORD_BYTES:
        return
    made = folder / f".{name}.{secrets.token_hex(6)}"
    try:
        fd = os.open(made, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(_MAGIC + _mac(secret, name, data) + data)
        os.replace(made, folder / f"{name}.msgpack")
    except OSError:
        with contextlib.suppress(OSError):
            made.unlink()
