"""Provenance: an Ed25519 signature over a run's index (extra: ``harness_world[sign]``).

Replay proves a record consistent and the index binds it to its slot; neither says who made the
run. ``run --sign-key KEY`` signs the run's revision, the exact bytes of its ``index.jsonl`` (so
every record digest) and its manifest's scope (what decides which slots are graded: tasks,
samples, seed, agent, sizes, limits, track and revision; everything but the execution contexts,
which a resume appends to) with the producer's private key; ``verify --trust-key PUB`` checks
that signature against a public key the verifier trusts. Keys are PEM files, e.g. made with
``openssl genpkey -algorithm ed25519 -out key.pem`` and
``openssl pkey -in key.pem -pubout -out key.pub``.

Every file is read through `harness_world.engine.limits.read_regular_file` (a FIFO or device
is refused at once, sizes are bounded), and the check itself, `run_signature_problem`, is a
function of the bytes read: a reader that has read a run once passes them in.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Final

import msgspec

from harness_world.engine.canonical import to_json
from harness_world.engine.limits import read_regular_file
from harness_world.errors import HarnessWorldError
from harness_world.evidence.binding import INDEX, MAX_INDEX_BYTES

__all__ = [
    "SIGNATURE",
    "RunSignature",
    "SigningError",
    "UnreadableRunFile",
    "check_private_key",
    "check_run_signature",
    "manifest_scope_sha256",
    "public_key_hex",
    "resume_key_problem",
    "run_signature_problem",
    "scope_sha256",
    "sign_message",
    "sign_run",
    "signed_message_problem",
    "trusted_key_hex",
    "write_keypair",
]

SIGNATURE = "index.sig.json"
SIGNATURE_BYTES: Final = 64 * 1024
"""Largest ``index.sig.json`` read (one is about 400 bytes)."""
MANIFEST_BYTES: Final = 64 * 1024 * 1024
"""Largest manifest read for its scope (as `harness_world.running.rundir.load_manifest`)."""
KEY_BYTES: Final = 64 * 1024
"""Largest PEM key file read."""
_DOMAIN = b"harness_world run signature v2\n"
_MANIFEST = "manifest.json"


class SigningError(HarnessWorldError):
    """A key cannot be read, or the ``[sign]`` extra is not installed."""


class UnreadableRunFile(HarnessWorldError):
    """A run file a signature check reads is there but is no regular file within its limit.

    A FIFO, a device or a file over its size limit is refused at once (never waited on), as
    an input error rather than a missing signature.
    """


class RunSignature(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``index.sig.json``: who vouches for a run's index.

    Attributes:
        revision: The run's revision id (signed).
        index_sha256: SHA-256 of the exact bytes of ``index.jsonl`` when signed (signed).
        manifest_sha256: SHA-256 of the manifest's scope, canonically encoded (signed; see
            `manifest_scope_sha256`).
        public_key: The signer's raw Ed25519 public key, hex. The verifier checks with the
            key it trusts, never this one, and refuses a file naming any other key.
        signature: The Ed25519 signature, hex.
    """

    revision: str
    index_sha256: str
    manifest_sha256: str
    public_key: str
    signature: str


def _message(revision: str, index_sha256: str, manifest_sha256: str) -> bytes:
    return (
        _DOMAIN
        + revision.encode()
        + b"\n"
        + index_sha256.encode()
        + b"\n"
        + manifest_sha256.encode()
    )


def scope_sha256(manifest: bytes) -> str:
    """SHA-256 of a run manifest's bytes without its execution contexts, canonically encoded.

    Raises:
        ValueError: when they are not a JSON object (`msgspec.DecodeError` is one).
    """
    data = msgspec.json.decode(manifest)
    if not isinstance(data, dict):
        raise ValueError(f"{_MANIFEST}: not a JSON object")
    data.pop("contexts", None)
    return hashlib.sha256(to_json(data)).hexdigest()


def manifest_scope_sha256(out: Path) -> str:
    """`scope_sha256` of the manifest of the run at ``out``.

    Raises:
        OSError: when the manifest cannot be read (or is no regular file, or too large).
        ValueError: when it is not a JSON object.
    """
    return scope_sha256(read_regular_file(out / _MANIFEST, MANIFEST_BYTES))


def _serialization() -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
    except ImportError:
        raise SigningError("signing needs the extra: pip install 'harness_world[sign]'") from None
    return serialization


def _load_key(path: Path, *, private: bool) -> Any:
    serialization = _serialization()
    from cryptography.hazmat.primitives.asymmetric import ed25519

    try:
        data = read_regular_file(path, KEY_BYTES)
        key = (
            serialization.load_pem_private_key(data, password=None)
            if private
            else serialization.load_pem_public_key(data)
        )
    except (OSError, ValueError, TypeError) as exc:
        raise SigningError(f"{path}: not a readable PEM key: {exc}") from None
    wanted = ed25519.Ed25519PrivateKey if private else ed25519.Ed25519PublicKey
    if not isinstance(key, wanted):
        raise SigningError(f"{path}: not an Ed25519 key")
    return key


def _raw_public(key: Any) -> str:
    serialization = _serialization()
    raw: bytes = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw.hex()


def write_keypair(private_file: Path, public_file: Path) -> None:
    """Make a fresh Ed25519 key pair for ``run --sign-key`` and ``verify --trust-key``.

    The private key is PKCS#8 PEM, created readable by its owner only; the public key is
    SubjectPublicKeyInfo PEM.

    Raises:
        SigningError: when the ``[sign]`` extra is missing.
        FileExistsError: when either file exists (a key is never overwritten).
    """
    serialization = _serialization()
    from cryptography.hazmat.primitives.asymmetric import ed25519

    for path in (private_file, public_file):
        if path.exists():
            raise FileExistsError(f"{path}: exists; a key is never overwritten")
    key = ed25519.Ed25519PrivateKey.generate()
    secret = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    descriptor = os.open(private_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(secret)
    public_file.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


def check_private_key(key_file: Path) -> None:
    """Check before any work that ``key_file`` holds a usable Ed25519 private key.

    Raises:
        SigningError: when it does not, or the extra is missing.
    """
    _load_key(key_file, private=True)


def sign_run(out: Path, revision: str, key_file: Path) -> Path:
    """Sign the run's revision and index with the private key in ``key_file``.

    Raises:
        SigningError: when the key cannot be read or the extra is missing.
        OSError: when the signature cannot be written.
    """
    key = _load_key(key_file, private=True)
    digest = hashlib.sha256(read_regular_file(out / INDEX, MAX_INDEX_BYTES)).hexdigest()
    scope = manifest_scope_sha256(out)
    signature = RunSignature(
        revision=revision,
        index_sha256=digest,
        manifest_sha256=scope,
        public_key=_raw_public(key.public_key()),
        signature=key.sign(_message(revision, digest, scope)).hex(),
    )
    path = out / SIGNATURE
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(msgspec.json.encode(signature) + b"\n")
    tmp.replace(path)
    return path


def check_run_signature(out: Path, revision: str, public_key_file: Path) -> str:
    """Why the run at ``out`` is not signed by the trusted key (empty when it is).

    Reads ``index.sig.json``, ``index.jsonl`` and ``manifest.json`` once each (regular files
    within their limits, never waited on) and hands the bytes to `run_signature_problem`. A
    missing file is a problem (the run is not signed).

    Raises:
        SigningError: when the trusted key itself cannot be read (the verifier's input).
        UnreadableRunFile: when one of them is a FIFO, a device, over its limit, or cannot
            be read.
    """
    key = _load_key(public_key_file, private=False)
    try:
        signature = read_regular_file(out / SIGNATURE, SIGNATURE_BYTES)
        index = read_regular_file(out / INDEX, MAX_INDEX_BYTES)
        manifest = read_regular_file(out / _MANIFEST, MANIFEST_BYTES)
    except FileNotFoundError as exc:
        return f"no valid signature: {_os_problem(exc)}"
    except OSError as exc:
        where = exc.filename or out
        raise UnreadableRunFile(f"{where}: cannot read: {exc.strerror or exc}") from None
    return _signature_problem(signature, index, manifest, revision, key)


def run_signature_problem(
    signature: bytes, index: bytes, manifest: bytes, *, revision: str, public_key_file: Path
) -> str:
    """Why these bytes of a run are not signed by the trusted key (empty when they are).

    Args:
        signature: The bytes of ``index.sig.json``.
        index: The bytes of ``index.jsonl``.
        manifest: The bytes of ``manifest.json``.
        revision: The run's revision id, as the reader computed it from the manifest.
        public_key_file: The public key the reader trusts (PEM).

    Raises:
        SigningError: when the trusted key itself cannot be read (the verifier's input).
    """
    key = _load_key(public_key_file, private=False)
    return _signature_problem(signature, index, manifest, revision, key)


def _signature_problem(
    signature_bytes: bytes, index: bytes, manifest: bytes, revision: str, key: Any
) -> str:
    from cryptography.exceptions import InvalidSignature

    try:
        signature = msgspec.json.decode(signature_bytes, type=RunSignature)
        scope = scope_sha256(manifest)
    except (ValueError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        return f"no valid signature: {exc}"
    if signature.revision != revision:
        return "the signature is for another revision"
    if signature.public_key != _raw_public(key):
        return "the signature names another signer's key than the trusted one"
    if hashlib.sha256(index).hexdigest() != signature.index_sha256:
        return "the index changed since it was signed"
    if scope != signature.manifest_sha256:
        return "the manifest (tasks, samples, seed, agent, sizes, limits) changed since signing"
    message = _message(revision, signature.index_sha256, signature.manifest_sha256)
    try:
        key.verify(bytes.fromhex(signature.signature), message)
    except (InvalidSignature, ValueError):
        return "the signature does not verify with the trusted key"
    return ""


def _os_problem(exc: OSError) -> str:
    where = f"{Path(exc.filename).name}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"


def public_key_hex(key_file: Path) -> str:
    """The raw Ed25519 public key, hex, of the private key in ``key_file``.

    Raises:
        SigningError: when the key cannot be read or the extra is missing.
    """
    return str(_raw_public(_load_key(key_file, private=True).public_key()))


def trusted_key_hex(public_key_file: Path) -> str:
    """The raw Ed25519 public key, hex, in a trusted public key file (PEM).

    Raises:
        SigningError: when the key cannot be read or the extra is missing.
    """
    return str(_raw_public(_load_key(public_key_file, private=False)))


def resume_key_problem(out: Path, key_file: Path | None) -> str:
    """Why records may not be added to the run at ``out`` with this key (empty: they may).

    A run holding ``index.sig.json`` (whatever kind of file it is) takes records only from
    the holder of the key that signed it, who signs it again at the end: anybody else could
    delete its failing records and run them again under the old signature's name.

    Raises:
        SigningError: when ``key_file`` cannot be read.
    """
    path = out / SIGNATURE
    if not os.path.lexists(path):
        return ""
    if key_file is None:
        return (
            f"{path}: the run is signed; only its signer adds records to it (run --sign-key "
            "with the key that signed it)"
        )
    mine = public_key_hex(key_file)
    try:
        signed = msgspec.json.decode(read_regular_file(path, SIGNATURE_BYTES), type=RunSignature)
    except OSError as exc:
        return f"{path}: cannot read the run's signature: {exc.strerror or exc}"
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return f"{path}: not a run signature: {exc}"
    if signed.public_key != mine:
        return f"{path}: the run is signed by another key than {key_file}"
    return ""


def sign_message(key_file: Path, message: bytes) -> tuple[str, str]:
    """Sign ``message`` (already domain-separated by the caller) with the key in ``key_file``.

    Returns:
        The signer's raw public key and the signature, both hex.

    Raises:
        SigningError: when the key cannot be read or the extra is missing.
    """
    key = _load_key(key_file, private=True)
    return _raw_public(key.public_key()), key.sign(message).hex()


def signed_message_problem(
    public_key_file: Path, public_key: str, signature: str, message: bytes
) -> str:
    """Why ``signature`` is not the trusted key's signature of ``message`` (empty when it is).

    Raises:
        SigningError: when the trusted key itself cannot be read (the verifier's input).
    """
    key = _load_key(public_key_file, private=False)
    from cryptography.exceptions import InvalidSignature

    if public_key != _raw_public(key):
        return "signed by another key than the trusted one" if public_key else "not signed"
    try:
        key.verify(bytes.fromhex(signature), message)
    except (InvalidSignature, ValueError):
        return "the signature does not verify with the trusted key"
    return ""
