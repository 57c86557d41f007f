"""The immutable, validated, indexed world every session reads through."""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Hashable, Iterable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import attrs
import msgspec

from harness_world.engine import seed_cache
from harness_world.engine.canonical import from_json, to_json
from harness_world.engine.contract import Contract, Entity, Problem, sorted_problems, validate_row
from harness_world.engine.limits import (
    RECORD_BYTES,
    RECORD_DEPTH,
    check_json_value,
    clean_text,
    read_regular_file,
)
from harness_world.engine.paths import builtin_dir, cache_dir
from harness_world.engine.plugins import declared, import_path
from harness_world.engine.session import Session
from harness_world.engine.spec import WorldLocation, WorldSpec
from harness_world.engine.values import ABSENT, Absent, Key, index_token
from harness_world.errors import HarnessWorldError

if TYPE_CHECKING:  # annotations only: the fault policy's module imports sessions
    from harness_world.engine.faults import FaultPolicy

__all__ = [
    "ABSENT",
    "Absent",
    "Key",
    "World",
    "WorldError",
    "builtin_world_folder",
    "declared_sizes",
    "index_token",
    "load_trusted_world",
    "load_world",
    "locate_world",
]


class WorldError(HarnessWorldError):
    """A world could not be loaded: a missing file, malformed input, or contract violations.

    Attributes:
        problems: Every validation problem found, sorted (empty for file-level errors).

    """

    def __init__(self, message: str, problems: list[Problem] | None = None) -> None:
        self.problems = problems or []
        if self.problems:
            shown = "\n".join(f"  {p}" for p in self.problems[:200])
            more = len(self.problems) - 200
            if more > 0:
                shown += f"\n  ... and {more} more"
            message = f"{message}: {len(self.problems)} problem(s)\n{shown}"
        super().__init__(message)


@attrs.frozen(slots=True)
class _Table:
    entity: Entity
    rows: dict[Key, bytes]
    position: dict[Key, int]
    order: tuple[Key, ...]
    indexes: dict[str, dict[Hashable, tuple[Key, ...]]]


def _index_values(row: Mapping[str, Any], field: str) -> list[object]:
    if field not in row:
        return [ABSENT]
    value = row[field]
    if isinstance(value, list):
        return list(dict.fromkeys(v for v in value if isinstance(v, str | int | float | bool)))
    return [value]


def _build_table(entity: Entity, rows: list[dict[str, Any]]) -> _Table:
    encoded: dict[Key, bytes] = {}
    position: dict[Key, int] = {}
    buckets: dict[str, dict[Hashable, list[Key]]] = {f: {} for f in entity.indexes}
    for i, row in enumerate(rows):
        key: Key = row[entity.key]
        encoded[key] = to_json(row)
        position[key] = i
        for field, bucket in buckets.items():
            for value in _index_values(row, field):
                bucket.setdefault(index_token(value), []).append(key)
    indexes = {f: {t: tuple(keys) for t, keys in b.items()} for f, b in buckets.items()}
    return _Table(entity, encoded, position, tuple(encoded), indexes)


@attrs.frozen(slots=True)
class World:
    """A loaded world: contract plus rows, validated, indexed and hashed; never mutated.

    Attributes:
        name: The world's name (from its contract).
        size: Which seed was loaded (``small``, ``large``, or the seed file's name).
        contract: The contract the rows were validated against.
        hash: SHA-256 over the contract hash and every row's canonical encoding, in order.
        source: Where the rows came from (context only; not part of the hash).
        code_hash: SHA-256 of the world's ``world.py`` when loaded from a folder (its tools'
            code; part of a run's revision), empty for worlds built from data in memory.

    """

    name: str
    size: str
    contract: Contract
    hash: str
    source: str
    _tables: dict[str, _Table] = attrs.field(repr=False)
    code_hash: str = ""

    def open_session(
        self,
        seed: int = 0,
        *,
        faults: FaultPolicy | None = None,
        tools: Iterable[str] | None = None,
    ) -> Session:
        """Open a private copy-on-write session; copies nothing, whatever the world's size.

        Args:
            seed: The sample seed (recorded; tools may read it; it never changes ids or time).
            faults: The fault policy consulted around every tool execution (None: no faults).
            tools: The only tools its calls may run (None: every tool; see `Session`).
        """
        return Session(self, seed, faults, tools)

    def entities(self) -> tuple[str, ...]:
        """The entity names, in contract order."""
        return tuple(self._tables)

    def count(self, entity: str) -> int:
        """Number of rows of ``entity``."""
        return len(self._table(entity).rows)

    def keys(self, entity: str) -> tuple[Key, ...]:
        """Keys of ``entity`` in seed order."""
        return self._table(entity).order

    def get(self, entity: str, key: Key) -> dict[str, Any] | None:
        """An independent copy of one row, or None when there is no such row."""
        data = self._table(entity).rows.get(key)
        return None if data is None else from_json(data)

    def rows(self, entity: str) -> Iterator[dict[str, Any]]:
        """Independent copies of every row of ``entity`` in seed order."""
        for data in self._table(entity).rows.values():
            yield from_json(data)

    def lookup(self, entity: str, field: str, value: object) -> tuple[Key, ...] | None:
        """Keys whose indexed ``field`` has ``value`` (``ABSENT``: missing); None if unindexed."""
        index = self._table(entity).indexes.get(field)
        if index is None:
            return None
        return index.get(index_token(value), ())

    def raw(self, entity: str, key: Key) -> bytes | None:
        """The stored canonical encoding of a row (for sessions and hashing)."""
        return self._table(entity).rows.get(key)

    def position(self, entity: str, key: Key) -> int | None:
        """A row's position in seed order, or None if it is not in the world."""
        return self._table(entity).position.get(key)

    def _table(self, entity: str) -> _Table:
        try:
            return self._tables[entity]
        except KeyError:
            raise KeyError(f"world {self.name!r} has no entity {entity!r}") from None

    @classmethod
    def from_data(
        cls, contract: Contract, data: object, *, size: str = "custom", source: str = "<memory>"
    ) -> World:
        """Validate ``data`` (entity name to a list of rows or a key-to-row map) and build a world.

        Raises:
            WorldError: listing every problem found, sorted.

        """
        problems: list[Problem] = []
        if not isinstance(data, dict):
            raise WorldError(
                f"{source}: expected an object of entities, found {type(data).__name__}"
            )
        for name in data:
            if not contract.has_entity(name):
                problems.append(Problem(str(name), "", "", "a declared entity", "unknown entity"))
        tables: dict[str, _Table] = {}
        for entity in contract.entities:
            raw = data.get(entity.name, [])
            rows, entity_problems = _collect_rows(entity, raw)
            problems.extend(entity_problems)
            if not entity_problems:
                tables[entity.name] = _build_table(entity, rows)
        if problems:
            raise WorldError(
                f"{source}: world {contract.name!r} is invalid", sorted_problems(problems)
            )
        digest = hashlib.sha256()
        digest.update(contract.hash.encode())
        for name in sorted(tables):
            digest.update(name.encode() + b"\x00")
            for blob in tables[name].rows.values():
                digest.update(len(blob).to_bytes(8, "big"))
                digest.update(blob)
        return cls(contract.name, size, contract, digest.hexdigest(), source, tables)


def _collect_rows(entity: Entity, raw: object) -> tuple[list[dict[str, Any]], list[Problem]]:
    problems: list[Problem] = []
    rows: list[dict[str, Any]] = []
    if isinstance(raw, dict):
        items: list[tuple[str | None, object]] = list(raw.items())
    elif isinstance(raw, list):
        items = [(None, r) for r in raw]
    else:
        return [], [Problem(entity.name, "", "", "a list or map of rows", type(raw).__name__)]
    seen: set[Key] = set()
    for i, (map_key, row) in enumerate(items):
        label = map_key if map_key is not None else f"#{i}"
        row_problems = validate_row(entity, row, "")
        if isinstance(row, dict) and entity.key in row:
            key = row[entity.key]
            label = str(key)
            if map_key is not None and str(key) != map_key:
                row_problems.append(
                    Problem(entity.name, label, entity.key, f"the map key {map_key!r}", repr(key))
                )
            if isinstance(key, str | int) and not isinstance(key, bool):
                if key in seen:
                    row_problems.append(
                        Problem(entity.name, label, entity.key, "a unique key", "duplicate")
                    )
                seen.add(key)
        problems.extend(
            Problem(p.entity, p.key or label, p.field, p.expected, p.found) for p in row_problems
        )
        if not row_problems and isinstance(row, dict):
            rows.append(row)
    return rows, problems


_BYTE_POSITION = re.compile(r"\(byte (\d+)\)")


def _decode_seed(path: Path) -> object:
    """The plain value of a seed file, within the record limits (`RECORD_BYTES`, depth).

    Raises:
        WorldError: naming the file, for an unreadable, special, too large, malformed or too
            deeply nested seed.
    """
    try:
        blob = read_regular_file(path, RECORD_BYTES)
    except OSError as exc:
        raise WorldError(f"{path}: cannot read seed: {exc.strerror or exc}") from None
    try:
        if path.suffix == ".msgpack":
            value: object = msgspec.msgpack.decode(blob)
        else:
            value = msgspec.json.decode(blob)
    except RecursionError:
        raise WorldError(
            f"{path}: malformed seed: nested deeper than {RECORD_DEPTH} levels"
        ) from None
    except msgspec.DecodeError as exc:
        raise WorldError(f"{path}: malformed seed: {_located(str(exc), blob)}") from None
    problem = check_json_value(value, RECORD_DEPTH)
    if problem:
        raise WorldError(f"{path}: malformed seed: {problem}")
    return value


def _located(message: str, blob: bytes) -> str:
    """A decoder's message with its byte offset given as a line and a column too."""
    match = _BYTE_POSITION.search(message)
    if not match:
        return message
    offset = int(match.group(1))
    line = blob.count(b"\n", 0, offset) + 1
    column = offset - (blob.rfind(b"\n", 0, offset) + 1) + 1
    return f"{message} at line {line}, column {column}"


_DECLARE = "a world folder's world.py declares WORLD = WorldSpec(contract=..., ...)"


def _world_file(folder: Path) -> ModuleType:
    """Import a world folder's ``world.py``; a failure is one `WorldError` naming the file."""
    module_file = folder / "world.py"
    if not module_file.is_file():
        raise WorldError(f"{folder}: not a world folder (no world.py)")
    try:
        return import_path(module_file, "worlds")
    except HarnessWorldError as exc:
        raise WorldError(str(exc)) from None


def _world_spec(folder: Path) -> WorldSpec:
    """The ``WORLD`` a world folder's ``world.py`` declares (the only name read of it).

    Raises:
        WorldError: naming the file (and the line, for a failure while it ran).
    """
    module = _world_file(folder)
    try:
        return declared(module, "WORLD", WorldSpec, "harness_world.engine.WorldSpec", _DECLARE)
    except HarnessWorldError as exc:
        raise WorldError(str(exc)) from None


def locate_world(name_or_path: str | Path) -> WorldLocation:
    """A world (built-in name or folder) with its spec and the folders of its other parts.

    Raises:
        WorldError: for an unknown world or a world folder that does not load.
    """
    folder = resolve_world_folder(name_or_path).resolve()
    return _world_spec(folder).locate(folder)


def resolve_world_folder(name_or_path: str | Path) -> Path:
    """Find a world folder: a bare name means a built-in world, anything else a path.

    A bare name never resolves to a folder of the same name in the working directory, so
    ``load_world("helpdesk")`` means the same world wherever it runs.
    """
    if isinstance(name_or_path, str) and "/" not in name_or_path and "\\" not in name_or_path:
        builtin = builtin_dir("worlds") / name_or_path
        if (builtin / "world.py").is_file():
            return builtin
    candidate = Path(name_or_path)
    if candidate.is_dir():
        return candidate
    available = sorted(
        p.name for p in builtin_dir("worlds").iterdir() if (p / "world.py").is_file()
    )
    raise WorldError(
        f"unknown world {str(name_or_path)!r}: not a folder, and not a built-in world "
        f"(built-in: {', '.join(available)})"
    )


def world_module(name_or_path: str | Path) -> ModuleType:
    """Import (once per process) the ``world.py`` of a world given by name or folder.

    For a world's own tests (its generator, its planted data); the package reads only the
    module's ``WORLD`` (`locate_world`).
    """
    return _world_file(resolve_world_folder(name_or_path))


_CACHE: dict[tuple[str, str, str], World] = {}


def load_world(
    name_or_path: str | Path, size: str = "small", *, seed_file: str | Path | None = None
) -> World:
    """Load a world by built-in name or folder path; cached per process (worlds are immutable).

    Args:
        name_or_path: A built-in world name (``"helpdesk"``) or a world folder.
        size: Which seed: a committed ``seeds/<size>.json``/``.msgpack`` file, or a size the
            world's ``generate`` function produces (cached on disk under `cache_dir`).
        seed_file: Load this seed file instead of a named size.

    Raises:
        WorldError: unknown world, unreadable or malformed seed, or contract violations.

    """
    folder = resolve_world_folder(name_or_path).resolve()
    key = (str(folder), size, str(Path(seed_file).resolve()) if seed_file else "")
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    spec = _world_spec(folder)
    contract = spec.contract
    code_hash = hashlib.sha256((folder / "world.py").read_bytes()).hexdigest()
    if seed_file is not None:
        path = Path(seed_file)
        world = World.from_data(contract, _decode_seed(path), size=path.stem, source=str(path))
    else:
        world = _load_sized(folder, spec, size)
    world = attrs.evolve(world, code_hash=code_hash)
    _CACHE[key] = world
    return world


_SIZE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")


def declared_sizes(folder: Path, spec: WorldSpec) -> tuple[str, ...]:
    """The sizes a world folder declares: its committed seeds and its generated sizes."""
    committed = {
        p.stem
        for p in (folder / "seeds").glob("*")
        if p.suffix in (".json", ".msgpack") and _SIZE_NAME.fullmatch(p.stem)
    }
    generated = {str(s) for s in spec.sizes}
    return tuple(sorted(committed | generated))


def builtin_world_folder(name: str) -> Path:
    """The folder of the built-in world ``name``; never a path, never the working directory.

    Raises:
        WorldError: when ``name`` is not a built-in world.
    """
    root = builtin_dir("worlds")
    available = sorted(p.name for p in root.iterdir() if (p / "world.py").is_file())
    if name not in available:
        raise WorldError(
            f"world {clean_text(name)[:80]!r} is not a built-in world (built-in: "
            f"{', '.join(available)}); a verifier passes its own worlds explicitly "
            "(--world DIR, or world=...)"
        )
    return root / name


def load_trusted_world(
    name: str,
    size: str,
    *,
    folders: Mapping[str, Path] | None = None,
    seed_file: Path | None = None,
) -> World:
    """Load the world a record names, resolved only within the verifier's trust root.

    ``name`` is looked up among ``folders`` (worlds the verifier itself passes) and then the
    built-in worlds; ``size`` must be one the world declares, unless the verifier gives its
    own ``seed_file``. Nothing is used as a path or import target.

    Raises:
        WorldError: for an unknown world or an undeclared size.
    """
    given = (folders or {}).get(name)
    folder = given if given is not None else builtin_world_folder(name)
    if seed_file is not None:
        return load_world(folder, seed_file=seed_file)
    return load_world(folder, size=size)


def _load_sized(folder: Path, spec: WorldSpec, size: str) -> World:
    contract = spec.contract
    sizes = declared_sizes(folder, spec)
    if size not in sizes:  # a size is a name the world declares, never a path
        raise WorldError(
            f"world {contract.name!r} has no seed {clean_text(size)[:80]!r} "
            f"(available: {', '.join(sizes) or 'none'})"
        )
    for suffix in (".json", ".msgpack"):
        path = folder / "seeds" / f"{size}{suffix}"
        if path.is_file():
            return World.from_data(contract, _decode_seed(path), size=size, source=str(path))
    generate = spec.generate
    if generate is None:
        raise WorldError(f"world {contract.name!r} declares size {size!r} but cannot generate it")
    source_hash = hashlib.sha256((folder / "world.py").read_bytes()).hexdigest()[:16]
    where, name = cache_dir() / contract.name, f"{size}-{source_hash}"
    kept = seed_cache.read(where, name)  # only a seed this user's cache wrote and signed
    if kept is not None:
        with contextlib.suppress(msgspec.DecodeError, RecursionError, WorldError):
            data = msgspec.msgpack.decode(kept)
            return World.from_data(contract, data, size=size, source=str(where / name))
    data = generate(size)
    world = World.from_data(contract, data, size=size, source=f"generated:{size}")
    seed_cache.keep(where, name, msgspec.msgpack.encode(data))
    return world
