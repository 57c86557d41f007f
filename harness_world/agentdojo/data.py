r"""Reading an AgentDojo data folder: a suite's environment, its injection vectors, its traces.

AgentDojo builds a suite's start state in four steps, and the injected text of a run depends on
all four, so they are repeated here exactly: load ``environment.yaml`` (resolving ``!include``
relative to the including file), dump it back to YAML with every string double-quoted and the
keys sorted, substitute each ``{placeholder}`` of the dumped text with its injection (or the
vector's default) by `str.format`, and parse the result. Text substituted into a double-quoted
YAML string is read by YAML's rules (a single line break folds into a space, ``\\t`` becomes a
tab), which is why the texts must not be substituted into the parsed values instead.

The folder layout is the one of ``shared/external/agentdojo`` (see its README): ``data/suites/
<suite>/`` for the data, ``agentdojo_src/`` for AgentDojo's own code (read by `source`),
``traces/`` for published runs. PyYAML is needed (``pip install 'harness_world[agentdojo]'``).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from harness_world.errors import HarnessWorldError

SUITES = ("workspace", "travel", "banking", "slack")
"""AgentDojo's four suites, in its own order."""


class DojoDataError(HarnessWorldError):
    """An AgentDojo data folder that cannot be read; the message names the path at fault."""


def _yaml() -> Any:
    try:
        import yaml
    except ImportError:
        raise DojoDataError(
            "reading AgentDojo data needs PyYAML: pip install 'harness_world[agentdojo]'"
        ) from None
    return yaml


def suite_folder(folder: Path, suite: str) -> Path:
    """The data folder of one suite (``<folder>/data/suites/<suite>``).

    Raises:
        DojoDataError: for an unknown suite or a folder without the suite's files.
    """
    if suite not in SUITES:
        raise DojoDataError(f"unknown AgentDojo suite {suite!r} (one of {', '.join(SUITES)})")
    path = folder / "data" / "suites" / suite
    if not (path / "environment.yaml").is_file():
        raise DojoDataError(f"{path}: no environment.yaml (is {folder} an AgentDojo data folder?)")
    return path


def _loader(yaml: Any) -> Any:
    """A safe loader class that reads ``!include FILE`` relative to the including file."""

    class IncludeLoader(yaml.SafeLoader):  # type: ignore[misc]
        def __init__(self, stream: Any) -> None:
            self.root = Path(getattr(stream, "name", ".")).parent
            super().__init__(stream)

    def include(loader: Any, node: Any) -> Any:
        path = loader.root / loader.construct_scalar(node)
        try:
            with path.open(encoding="utf-8") as stream:
                return yaml.load(stream, IncludeLoader)
        except OSError as exc:
            raise DojoDataError(f"{path}: cannot read included file: {exc.strerror}") from None

    IncludeLoader.add_constructor("!include", include)
    return IncludeLoader


def _quoted_dumper(yaml: Any) -> Any:
    """A dumper class that writes every string double-quoted, as AgentDojo's does."""

    class QuotedDumper(yaml.Dumper):  # type: ignore[misc]
        pass

    def quoted(dumper: Any, data: str) -> Any:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')

    QuotedDumper.add_representer(str, quoted)
    return QuotedDumper


def dumped(path: Path) -> str:
    """A suite file loaded (includes resolved) and dumped back as AgentDojo dumps it.

    The text is kept per file while no file of its folder changes: a run's many start states
    all fill the same dump.

    Raises:
        DojoDataError: for a file that cannot be read or parsed.
    """
    try:
        stamp = max(p.stat().st_mtime_ns for p in path.parent.rglob("*.yaml"))
    except (OSError, ValueError):
        stamp = 0
    return _dumped(path.resolve(), stamp)


def _parse(yaml: Any, text: str) -> Any:
    """Plain YAML text parsed safely (with libyaml's parser where PyYAML has it: same result)."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@functools.lru_cache(maxsize=32)
def _dumped(path: Path, stamp: int) -> str:
    yaml = _yaml()
    try:
        with path.open(encoding="utf-8") as stream:
            value = yaml.load(stream, _loader(yaml))
    except OSError as exc:
        raise DojoDataError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise DojoDataError(f"{path}: malformed YAML: {str(exc).splitlines()[0]}") from None
    return str(yaml.dump(value, Dumper=_quoted_dumper(yaml), default_flow_style=False))


def vector_defaults(folder: Path, suite: str) -> dict[str, str]:
    """Each injection vector's default text (placeholder name to text).

    Raises:
        DojoDataError: for a missing or malformed ``injection_vectors.yaml``.
    """
    path = suite_folder(folder, suite) / "injection_vectors.yaml"
    yaml = _yaml()
    vectors = _parse(yaml, dumped(path))
    if not isinstance(vectors, dict):
        raise DojoDataError(f"{path}: expected a map of injection vectors")
    out: dict[str, str] = {}
    for name, vector in vectors.items():
        if not isinstance(vector, dict) or not isinstance(vector.get("default"), str):
            raise DojoDataError(f"{path}: vector {name!r} has no default text")
        out[str(name)] = vector["default"]
    return out


def environment(
    folder: Path, suite: str, injections: dict[str, str] | None = None
) -> dict[str, Any]:
    """A suite's environment as plain data, each placeholder filled AgentDojo's way.

    Args:
        folder: The AgentDojo data folder.
        suite: The suite's name.
        injections: Placeholder to injected text; every other placeholder gets its default.

    Raises:
        DojoDataError: for an unreadable suite, an injection naming no vector, or a filled
            environment that is not YAML.
    """
    defaults = vector_defaults(folder, suite)
    unknown = sorted(set(injections or {}) - set(defaults))
    if unknown:
        raise DojoDataError(f"suite {suite!r} has no injection vector {unknown[0]!r}")
    path = suite_folder(folder, suite) / "environment.yaml"
    text = dumped(path)
    try:
        filled = text.format(**{**defaults, **(injections or {})})
    except (KeyError, IndexError, ValueError) as exc:
        raise DojoDataError(f"{path}: a placeholder cannot be filled: {exc}") from None
    yaml = _yaml()
    try:
        value = _parse(yaml, filled)
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0]
        raise DojoDataError(f"{path}: the injected environment is not YAML: {first}") from None
    if not isinstance(value, dict):
        raise DojoDataError(f"{path}: expected a map at the top")
    return value
