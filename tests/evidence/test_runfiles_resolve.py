"""A run file is reached from the run's real path one component at a time, and that path is the
one a full resolution gives: a link anywhere on the way (inside or out) is resolved in full."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_world.engine.limits import read_regular_file
from harness_world.evidence.runfiles import RunFileError, read_run_file
from tests.conftest import examples

# where a link may stand in place of a real folder or file, and where it points
_PLACES = ("records", "records/t", "records/t/0.json")
_TARGETS = ("inside", "outside", "loop", "none")


def _reference(root: Path, relative: str) -> bytes | str | None:
    """What reading ``relative`` must give, from a full resolution: bytes, None or 'refused'."""
    try:
        resolved = (root / relative).resolve(strict=True)
    except FileNotFoundError:
        return None
    except (OSError, RuntimeError):
        return "refused"
    inside = root.resolve()
    if resolved != inside and inside not in resolved.parents:
        return "refused"
    return resolved.read_bytes() if resolved.is_file() else "refused"


def _layout(base: Path, place: str, target: str) -> Path:
    root = base / "run"
    for folder in (root / "records" / "t", root / "real" / "t", base / "away" / "t"):
        folder.mkdir(parents=True)
    for folder, text in ((root / "records" / "t", "own"), (root / "real" / "t", "inner")):
        (folder / "0.json").write_text(text)
    (base / "away" / "t" / "0.json").write_text("outside")
    if target == "none":
        return root
    link = root / place
    real = {"inside": root / "real", "outside": base / "away", "loop": link}[target]
    real = real / Path(place).relative_to("records") if place != "records" else real
    if link.is_dir():
        for child in sorted(link.rglob("*"), reverse=True):
            child.unlink() if child.is_file() else child.rmdir()
        link.rmdir()
    elif link.exists():
        link.unlink()
    os.symlink(real, link)
    return root


@settings(max_examples=examples(40, 400), deadline=None)
@given(place=st.sampled_from(_PLACES), target=st.sampled_from(_TARGETS), real=st.booleans())
def test_reading_a_run_file_gives_what_a_full_resolution_gives(
    tmp_path_factory: pytest.TempPathFactory, place: str, target: str, real: bool
) -> None:
    base = tmp_path_factory.mktemp("layout")
    root = _layout(base, place, target)
    relative = "records/t/0.json"
    expected = _reference(root, relative)
    try:
        got: bytes | str | None = read_run_file(
            root, relative, real_root=os.path.realpath(root) if real else None
        )
    except RunFileError:
        got = "refused"
    assert got == expected


@given(
    size=st.integers(min_value=0, max_value=3000), limit=st.integers(min_value=0, max_value=3000)
)
def test_a_file_is_read_whole_or_refused_over_the_limit(
    tmp_path_factory: pytest.TempPathFactory, size: int, limit: int
) -> None:
    path = tmp_path_factory.mktemp("f") / "x"
    path.write_bytes(bytes(range(256)) * (size // 256) + bytes(size % 256))
    if size > limit:
        with pytest.raises(OSError, match="over the limit"):
            read_regular_file(path, limit)
    else:
        assert read_regular_file(path, limit) == path.read_bytes()
