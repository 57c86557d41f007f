"""Provenance: an Ed25519 signature over a run's index (extra: ``harness_world[sign]``).

Replay proves a record consistent and the index binds it to its slot; neither says who made the
run. ``run --sign-key KEY`` signs the run's revision, the exact bytes of its ``index.jsonl`` (so
every record digest) and its manifest's scope (what decides which slots are graded: tasks,
samples, seed, agent, sizes, limits, track and revision; everything but the execution contexts,
which a resume appends to) with the producer's private key; ``verify --trust-key PUB`` checks
that signature against a public key the verifier trusts. Keys are PEM files, e.g. made with
``openssl genpkey -algorithm ed25519 -out key.pem`` and
``openssl pkey -in key.pem -pubout -out key.pub``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import msgspec

from harness_world.engine.canonical import to_json
from harness_world.errors import HarnessWorldError
from harness_world.evidence.binding import INDEX
from harness_world.evidence.runfiles import (
    INDEX_BYTES,
    MANIFEST_BYTES,
    SIGNATURE_BYTES,
    RunFileError,
    read_run_file,
)

__all__ = [
    "SIGNATURE",
    "RunSignature",
    "SigningError",
    "check_private_key",
    "check_run_signature",
    "manifest_scope_of",
    "manifest_scope_sha256",
    "sign_message",
    "sign_run",
    "signature_problem",
    "signed_message_problem",
    "write_keypair",
]

SIGNATURE = "index.sig.json"
_DOMAIN = b"harness_world run signature v2\n"
_MANIFEST = "manifest.json"


class SigningError(HarnessWorldError):
    """A key cannot be read, or the ``[sign]`` extra is not installed."""


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


def manifest_scope_sha256(out: Path) -> str:
    """SHA-256 of a run manifest without its execution contexts, canonically encoded.

    Raises:
        OSError: when the manifest cannot be read.
        ValueError: when it is not a JSON object.
    """
    data = read_run_file(out, _MANIFEST, MANIFEST_BYTES)
    if data is None:
        raise FileNotFoundError(f"{out / _MANIFEST}: no such file")
    return manifest_scope_of(data, str(out / _MANIFEST))


def manifest_scope_of(data: bytes, where: str = _MANIFEST) -> str:
    """`manifest_scope_sha256` of a manifest's bytes, as read once.

    Raises:
        ValueError: when they are not a JSON object.
    """
    value = msgspec.json.decode(data)
    if not isinstance(value, dict):
        raise ValueError(f"{where}: not a JSON object")
    value.pop("contexts", None)
    return hashlib.sha256(to_json(value)).hexdigest()


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
        data = path.read_bytes()
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
    digest = hashlib.sha256((out / INDEX).read_bytes()).hexdigest()
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

    Reads the signature, index and manifest once each; a reader of the whole run checks the
    bytes it reads itself with `signature_problem` instead.

    Raises:
        SigningError: when the trusted key itself cannot be read (the verifier's input).
    """
    try:
        signature = read_run_file(out, SIGNATURE, SIGNATURE_BYTES)
        index = read_run_file(out, INDEX, INDEX_BYTES)
        manifest = read_run_file(out, _MANIFEST, MANIFEST_BYTES)
    except RunFileError as exc:
        _load_key(public_key_file, private=False)
        return f"no valid signature: {exc}"
    return signature_problem(signature, index or b"", manifest or b"", revision, public_key_file)


def signature_problem(
    signature: bytes | None, index: bytes, manifest: bytes, revision: str, public_key_file: Path
) -> str:
    """Why these bytes of a run are not signed by the trusted key (empty when they are).

    A pure check over the bytes a reader read once: the signature file, the index and the
    manifest, and the revision the reader decoded from that manifest.

    Raises:
        SigningError: when the trusted key itself cannot be read (the verifier's input).
    """
    key = _load_key(public_key_file, private=False)
    from cryptography.exceptions import InvalidSignature

    if signature is None:
        return f"no valid signature: the run has no {SIGNATURE}"
    try:
        signed = msgspec.json.decode(signature, type=RunSignature)
        scope = manifest_scope_of(manifest)
    except (ValueError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        return f"no valid signature: {exc}"
    if signed.revision != revision:
        return "the signature is for another revision"
    if signed.public_key != _raw_public(key):
        return "the signature names another signer's key than the trusted one"
    if hashlib.sha256(index).hexdigest() != signed.index_sha256:
        return "the index changed since it was signed"
    if scope != signed.manifest_sha256:
        return "the manifest (tasks, samples, seed, agent, sizes, limits) changed since signing"
    message = _message(revision, signed.index_sha256, signed.manifest_sha256)
    try:
        key.verify(bytes.fromhex(signed.signature), message)
    except (InvalidSignature, ValueError):
        return "the signature does not verify with the trusted key"
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
