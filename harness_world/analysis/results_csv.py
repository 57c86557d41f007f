"""The results CSV: one row per task, per run, per configuration.

Format (UTF-8, an optional byte-order mark is ignored)::

    # comment lines start with '#'; blank lines are skipped
    task_id,run_index,config,passed
    fix-login,0,main,1
    fix-login,0,pr,fail

* The first line that is neither blank nor a comment is the header. It must name the four
  columns ``task_id``, ``run_index``, ``config`` and ``passed``, and may name ``family`` and
  ``fingerprint`` (case-insensitive, any order, each once).
* ``family`` (optional) names the task's family, a group of related tasks whose results move
  together; ``compare`` then uses a cluster-robust standard error over families. An empty cell
  means no family. A task must not be given two different families.
* ``fingerprint`` (optional) says what made the run: ``report --csv`` writes
  ``revision=<id>;models=<a+b or none>;build=<hash>``. It is carried, never compared.
* Cells are separated by commas and trimmed of surrounding spaces. There is no quoting: task ids
  and config names must not contain commas or double quotes, and must not be empty.
* ``run_index`` is a non-negative decimal integer. ``passed`` is ``1``/``0``, ``true``/``false``
  or ``pass``/``fail``, case-insensitive.
* A (task_id, run_index, config) triple may appear once.

Every error names the 1-based line number and what was expected there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from harness_world.errors import HarnessWorldError
from harness_world.stats import RunRow

__all__ = [
    "COLUMNS",
    "OPTIONAL_COLUMNS",
    "ResultsCsvError",
    "format_results",
    "parse_results",
    "read_results",
    "write_results",
]

COLUMNS: Final = ("task_id", "run_index", "config", "passed")
"""The four required columns, in the order `format_results` writes them."""

OPTIONAL_COLUMNS: Final = ("family", "fingerprint")
"""Columns a header may add; `format_results` writes each, in this order, when a row has one."""

_TRUE: Final = frozenset({"1", "true", "pass"})
_FALSE: Final = frozenset({"0", "false", "fail"})
_RUN_INDEX: Final = re.compile(r"[0-9]+")


class ResultsCsvError(HarnessWorldError, ValueError):
    """A results CSV is malformed.

    Attributes:
        line: The 1-based line number concerned (None when the error is not about one line).

    """

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


def _skippable(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _parse_header(line: str, lineno: int) -> dict[str, int]:
    names = [cell.strip().lower() for cell in line.split(",")]
    expected = ",".join(COLUMNS)
    positions: dict[str, int] = {}
    for i, name in enumerate(names):
        if name not in COLUMNS and name not in OPTIONAL_COLUMNS:
            raise ResultsCsvError(
                f"unknown header column {name!r}; expected the columns {expected} "
                f"(and optionally {', '.join(OPTIONAL_COLUMNS)})",
                lineno,
            )
        if name in positions:
            raise ResultsCsvError(f"header names column {name!r} twice", lineno)
        positions[name] = i
    missing = [c for c in COLUMNS if c not in positions]
    if missing:
        raise ResultsCsvError(
            f"header is missing column(s) {', '.join(missing)}; expected the columns {expected}",
            lineno,
        )
    return positions


def _parse_passed(cell: str, lineno: int) -> bool:
    value = cell.lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ResultsCsvError(f"passed value {cell!r} is not one of 1/0, true/false, pass/fail", lineno)


def parse_results(lines: Iterable[str]) -> list[RunRow]:
    """Parse results CSV text, given as lines (with or without their line endings).

    Args:
        lines: The file's lines, e.g. ``text.splitlines()`` or an open text file.

    Returns:
        The rows in file order.

    Raises:
        ResultsCsvError: The file is empty (no header), the header is wrong, a line has the
            wrong number of cells, a cell is empty or malformed, or a row repeats an earlier
            (task_id, run_index, config); the message names the line.

    """
    header: dict[str, int] | None = None
    seen: dict[tuple[str, int, str], int] = {}
    families: dict[str, tuple[str, int]] = {}
    rows: list[RunRow] = []
    lineno = 0
    for lineno, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if lineno == 1:
            line = line.removeprefix("\ufeff")
        if _skippable(line):
            continue
        if header is None:
            header = _parse_header(line, lineno)
            continue
        row = _parse_row(line, header, lineno)
        _check_family(row, families, lineno)
        _check_unique(row, seen, lineno)
        rows.append(row)
    if header is None:
        where = lineno + 1 if lineno else 1
        raise ResultsCsvError(f"no header found; expected the header {','.join(COLUMNS)}", where)
    return rows


def _split_cells(line: str, header: dict[str, int], lineno: int) -> list[str]:
    """The line's trimmed cells, checked for their number and for quotes."""
    cells = [cell.strip() for cell in line.split(",")]
    if len(cells) != len(header):
        raise ResultsCsvError(
            f"expected {len(header)} cells ({','.join(header)} in header order), got {len(cells)}",
            lineno,
        )
    if any('"' in cell for cell in cells):
        raise ResultsCsvError("quoted cells are not supported; remove the double quotes", lineno)
    return cells


def _parse_row(line: str, header: dict[str, int], lineno: int) -> RunRow:
    """One data line as a row, each cell checked on its own (not against other rows)."""
    cells = _split_cells(line, header, lineno)
    task_id = cells[header["task_id"]]
    config = cells[header["config"]]
    run_cell = cells[header["run_index"]]
    if not task_id:
        raise ResultsCsvError("task_id is empty; expected a task identifier", lineno)
    if not config:
        raise ResultsCsvError("config is empty; expected a configuration name", lineno)
    if not _RUN_INDEX.fullmatch(run_cell):
        raise ResultsCsvError(f"run_index {run_cell!r} is not a non-negative integer", lineno)
    run_index = int(run_cell)
    passed = _parse_passed(cells[header["passed"]], lineno)
    family = cells[header["family"]] if "family" in header else ""
    fingerprint = cells[header["fingerprint"]] if "fingerprint" in header else ""
    return RunRow(
        task_id=task_id,
        run_index=run_index,
        config=config,
        passed=passed,
        family=family,
        fingerprint=fingerprint,
    )


def _check_family(row: RunRow, families: dict[str, tuple[str, int]], lineno: int) -> None:
    """Refuse a task given a family different from the one an earlier line gave it."""
    if not row.family:
        return
    first = families.setdefault(row.task_id, (row.family, lineno))
    if first[0] != row.family:
        raise ResultsCsvError(
            f"task {row.task_id!r} has family {row.family!r} here but {first[0]!r} on line "
            f"{first[1]}; expected one family per task",
            lineno,
        )


def _check_unique(row: RunRow, seen: dict[tuple[str, int, str], int], lineno: int) -> None:
    """Refuse a (task_id, run_index, config) triple an earlier line already gave."""
    key = (row.task_id, row.run_index, row.config)
    if key in seen:
        raise ResultsCsvError(
            f"duplicate row for task {row.task_id!r}, run {row.run_index}, "
            f"config {row.config!r} (first on line {seen[key]}); expected each run once",
            lineno,
        )
    seen[key] = lineno


def read_results(path: str | Path) -> list[RunRow]:
    """Read a results CSV file (see the module docstring for the format).

    Raises:
        ResultsCsvError: The content is malformed (the message names the line) or is not
            UTF-8.
        OSError: The file cannot be read.

    """
    if Path(path).exists() and not Path(path).is_file():  # a FIFO or device would block
        raise ResultsCsvError(f"{path}: not a regular file")
    try:
        with Path(path).open(encoding="utf-8", newline=None) as handle:
            return parse_results(handle)
    except UnicodeDecodeError as exc:
        raise ResultsCsvError(f"{path}: not UTF-8 text ({exc.reason})") from exc


def _check_name(value: str, column: str) -> None:
    bad = (
        not value
        or value != value.strip()
        or value.startswith("#")
        or any(ch in value for ch in ',"\r\n')
    )
    if bad:
        raise ResultsCsvError(
            f"cannot write {column} {value!r}: it must be non-empty, without surrounding "
            "spaces, commas, double quotes or line breaks, and must not start with '#'"
        )


def format_results(rows: Iterable[RunRow]) -> str:
    """Format rows as results CSV text: the header, then one line per row, ``passed`` as 1/0.

    Rows are written in the order given. A ``family`` column is added when any row has a
    family, then a ``fingerprint`` column when any row has one. Reading the text back with
    `parse_results` gives the same rows.

    Raises:
        ResultsCsvError: A task id or config cannot be written unambiguously (empty, a comma,
            a quote, a line break, surrounding spaces, a leading '#'), a negative run index, or
            a duplicate (task_id, run_index, config).

    """
    row_list = list(rows)
    with_family = any(row.family for row in row_list)
    with_fingerprint = any(row.fingerprint for row in row_list)
    header = (*COLUMNS, *(("family",) * with_family), *(("fingerprint",) * with_fingerprint))
    out = [",".join(header)]
    seen: set[tuple[str, int, str]] = set()
    for row in row_list:
        _check_name(row.task_id, "task_id")
        _check_name(row.config, "config")
        if row.run_index < 0:
            raise ResultsCsvError(f"cannot write negative run_index {row.run_index}")
        key = (row.task_id, row.run_index, row.config)
        if key in seen:
            raise ResultsCsvError(
                f"cannot write duplicate row for task {row.task_id!r}, run {row.run_index}, "
                f"config {row.config!r}"
            )
        seen.add(key)
        line = f"{row.task_id},{row.run_index},{row.config},{int(row.passed)}"
        if with_family:
            if row.family:
                _check_name(row.family, "family")
            line += f",{row.family}"
        if with_fingerprint:
            if row.fingerprint:
                _check_name(row.fingerprint, "fingerprint")
            line += f",{row.fingerprint}"
        out.append(line)
    return "\n".join(out) + "\n"


def write_results(path: str | Path, rows: Iterable[RunRow], comments: Iterable[str] = ()) -> None:
    """Write rows to ``path`` as a results CSV (UTF-8, newline line endings).

    ``comments`` are written first, each as a ``#`` line (what the rows' ``passed`` counted,
    e.g. how many attempts were pending review); a reader skips them.

    Raises:
        ResultsCsvError: See `format_results`.
        OSError: The file cannot be written.

    """
    head = "".join(f"# {' '.join(c.split())}\n" for c in comments)
    Path(path).write_text(head + format_results(rows), encoding="utf-8", newline="\n")
