"""Progress of a run or a verification: a rich display on a terminal, plain text elsewhere.

The display shows attempts done out of scheduled, passed, failed and ungraded or invalid so
far, the elapsed time and an ETA, and the task ids most recently finished. It is drawn only when
stderr is a terminal, ``rich`` is installed (the extra ``harness_world[report]``) and neither
``--quiet`` nor ``--json`` was given. Without rich a terminal gets one counter line redrawn
in place. Anywhere else (a CI log, a pipe, a file) a run prints whole lines instead, one every
tenth of the attempts or every `PLAIN_INTERVAL_S` seconds and a last one, so that a log reads
line by line; ``run --progress`` asks for the redrawn line there too. ``run`` calls
`run_progress`, ``verify`` `verify_progress`.
"""

from __future__ import annotations

import atexit
import importlib.util
import sys
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol, TextIO

import attrs

__all__ = [
    "PLAIN_INTERVAL_S",
    "LiveProgress",
    "PeriodicLines",
    "Progress",
    "live_enabled",
    "run_progress",
    "run_progress_hook",
    "verify_progress",
    "verify_progress_factory",
]


@attrs.define(slots=True)
class Progress:
    """A one-line progress counter on stderr, shown only when there is much to do.

    Attributes:
        total: How many units of work there are.
        label: What is being counted.
        enabled: Whether to draw at all (off for ``--json`` and short jobs).
        stream: Where to draw.
    """

    total: int
    label: str
    enabled: bool
    stream: TextIO = sys.stderr
    done: int = 0

    def advance(self, note: str = "") -> None:
        """Count one unit and redraw."""
        self.done += 1
        if self.enabled:
            end = "\n" if self.done == self.total else ""
            self.stream.write(f"\r{self.label} {self.done}/{self.total} {note}".ljust(60) + end)
            self.stream.flush()


class _RunProgressLike(Protocol):
    done: int
    total: int
    passed: int
    failed: int
    ungraded: int


def _is_terminal(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    return callable(isatty) and bool(isatty())


def live_enabled(*, quiet: bool, stream: Any = None) -> bool:
    """Whether a live display may be drawn: not quiet, a terminal, and rich installed."""
    stream = sys.stderr if stream is None else stream
    return not quiet and _is_terminal(stream) and importlib.util.find_spec("rich") is not None


class LiveProgress:
    """A rich progress bar with pass / fail / ungraded counts and recent task ids.

    Started on the first update, stopped when everything is done (or at exit).
    """

    def __init__(self, total: int, label: str) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.total = total
        self.recent: deque[str] = deque(maxlen=3)
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn(
                "[green]{task.fields[passed]} passed[/] [red]{task.fields[failed]} failed"
                "[/] [yellow]{task.fields[other]} ungraded/invalid[/]"
            ),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("[dim]{task.fields[recent]}"),
            console=Console(stderr=True),
            transient=False,
        )
        self.task = self.progress.add_task(
            label, total=total, passed=0, failed=0, other=0, recent=""
        )
        self.started = False
        atexit.register(self.stop)

    def update(self, done: int, passed: int, failed: int, other: int, current: str = "") -> None:
        """Redraw with the counts so far; ``current`` is the task id that just finished."""
        if not self.started:
            self.progress.start()
            self.started = True
        if current:
            self.recent.append(current)
        self.progress.update(
            self.task,
            completed=done,
            passed=passed,
            failed=failed,
            other=other,
            recent=" ".join(self.recent),
        )
        if done >= self.total:
            self.stop()

    def stop(self) -> None:
        """Stop drawing (idempotent)."""
        if self.started:
            self.progress.stop()
            self.started = False


def run_progress_hook(
    plain: Callable[[Any], None], *, quiet: bool, enabled: bool
) -> Callable[[Any], None]:
    """The progress callback ``run`` passes to `harness_world.running.run.run`.

    Args:
        plain: The command's plain printer (kept for non-terminals).
        quiet: ``--quiet``: print no progress at all.
        enabled: False for ``--json``.
    """
    if quiet or not enabled:
        return lambda _p: None
    if not live_enabled(quiet=quiet):
        return plain
    live: LiveProgress | None = None

    def hook(p: _RunProgressLike) -> None:
        nonlocal live
        if live is None:
            live = LiveProgress(p.total, "attempts")
        live.update(p.done, p.passed, p.failed, p.ungraded, getattr(p, "task_id", ""))

    return hook


class _VerifyProgress:
    """``verify``'s counter: ``advance(note, row)`` with the row it just produced."""

    def __init__(self, total: int, plain: Any, live: LiveProgress | None) -> None:
        self.total = total
        self.plain = plain
        self.live = live
        self.done = self.passed = self.failed = self.other = 0

    def advance(self, note: str = "", row: Any = None) -> None:
        """Count one record (its row, a `VerifyRow`, gives evidence and grade) and redraw."""
        self.done += 1
        grade = getattr(row, "grade", None)
        if grade == "passed":
            self.passed += 1
        elif grade == "failed":
            self.failed += 1
        else:
            self.other += 1
        if self.live is not None:
            self.live.update(
                self.done, self.passed, self.failed, self.other, str(getattr(row, "task", ""))
            )
        else:
            self.plain.advance(note)


def verify_progress(total: int, plain: Any, *, quiet: bool, json: bool) -> _VerifyProgress:
    """``verify``'s progress: live on a terminal, else the plain counter (or none when quiet)."""
    if quiet:
        plain.enabled = False
    live = None
    if not json and live_enabled(quiet=quiet):
        live = LiveProgress(total, "verifying")
    return _VerifyProgress(total, plain, live)


PLAIN_INTERVAL_S = 10.0
"""Off a terminal, a run prints a progress line at least this often while attempts finish."""


def _counts(p: _RunProgressLike) -> str:
    return (
        f"{p.done}/{p.total} attempts: {p.passed} passed, {p.failed} failed, {p.ungraded} ungraded"
    )


def _redrawn_run_line(p: _RunProgressLike) -> None:
    """The counter of a run on a terminal without rich: one line on stderr, redrawn in place."""
    print(f"\r{_counts(p)}", end="\n" if p.done == p.total else "", file=sys.stderr, flush=True)


@attrs.define(slots=True)
class PeriodicLines:
    """A run's progress where nothing can be redrawn: whole lines, now and then.

    A line is printed when a tenth of the attempts (at least one) finished since the last line,
    when `PLAIN_INTERVAL_S` seconds passed since it, and for the last attempt.

    Attributes:
        stream: Where the lines go.
        interval_s: The longest wait between two lines while attempts finish.
        clock: Seconds, monotonic.
    """

    stream: TextIO
    interval_s: float = PLAIN_INTERVAL_S
    clock: Callable[[], float] = time.monotonic
    printed: int = attrs.field(default=0, init=False)
    last: float = attrs.field(default=0.0, init=False)

    def __attrs_post_init__(self) -> None:
        self.last = self.clock()  # the run starts now: a slow first attempt gets its line

    def __call__(self, p: _RunProgressLike) -> None:
        """Print a line for ``p`` when one is due."""
        now = self.clock()
        step = max(1, p.total // 10)
        due = (
            p.done >= p.total or p.done - self.printed >= step or now - self.last >= self.interval_s
        )
        if due and p.done > self.printed:
            self.stream.write(_counts(p) + "\n")
            self.stream.flush()
            self.printed, self.last = p.done, now


def run_progress(*, quiet: bool, json: bool, force: bool = False) -> Callable[[Any], None]:
    """``run``'s progress on stderr; none with ``quiet`` or ``json``.

    On a terminal: the live display (with rich) or one counter line redrawn in place. Elsewhere:
    `PeriodicLines`, unless ``force`` (``run --progress``) asks for the redrawn line anyway.
    """
    redraw = force or _is_terminal(sys.stderr)
    plain = _redrawn_run_line if redraw else PeriodicLines(sys.stderr)
    return run_progress_hook(plain, quiet=quiet, enabled=not json)


def verify_progress_factory(*, quiet: bool, json: bool) -> Callable[[int], _VerifyProgress]:
    """``verify``'s progress over each batch of records (live on a terminal, else a counter).

    The plain counter is drawn only on a terminal and for 20 records or more.
    """

    def make(total: int) -> _VerifyProgress:
        enabled = not json and total >= 20 and sys.stderr.isatty()
        plain = Progress(total, "verifying", enabled=enabled)
        return verify_progress(total, plain, quiet=quiet, json=json)

    return make
