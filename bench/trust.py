"""What the limits cost: loading a record strictly (JSON values only, within the limits) against
msgspec's plain typed decode, and both against a whole ``verify`` (load + replay + grade); and
what refusing a run costs: ``verify --trust-key`` of a signed run whose signature does not
verify (checked before any replay) against the same command on the intact run, and a record
holding more calls than its task's budget (refused before replay) against replaying it.

The strict loader reads a JSON file laid out as ``save_record`` writes it on a fast path (typed
decode, limits read off the bytes, byte-identical re-encoding: D28); otherwise it decodes into
plain values first (Python's ``json`` with a duplicate-key hook, or msgspec msgpack with an Ext
hook and a canonical-length check), walks them iteratively against
``harness_world.engine.limits``, then converts to a ``Record``. Measured side by side in one run,
interleaved, on the oracle record of ``helpdesk.vip_two_statuses`` (small seed) in both
encodings.

Requires the ``[sign]`` extra (cryptography) for the signature figures.

    python bench/trust.py            # full
    python bench/trust.py --quick    # fewer repetitions (CI smoke)

Last line: one JSON object with every figure.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

import harness_world as hw
from harness_world.cli import main as main_cli
from harness_world.coverage import load_oracles, run_script
from harness_world.evidence.record import (
    Outcome,
    Record,
    decode_record,
    encode_record,
    make_record,
)
from harness_world.grading import Verifier


def _median_us(fn: Callable[[], object], batches: int, per: int) -> float:
    times = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(per):
            fn()
        times.append((time.perf_counter() - start) / per * 1e6)
    return statistics.median(times)


def _keypair(folder: Path) -> tuple[Path, Path]:
    from harness_world.evidence.signing import write_keypair

    private, public = folder / "key.pem", folder / "key.pub"
    write_keypair(private, public)
    return private, public


def _verify_seconds(run: Path, public: Path) -> float:
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main_cli(["verify", "--quiet", "--json", "--trust-key", str(public), str(run)])
    return time.perf_counter() - start


def signature_figures(quick: bool) -> dict[str, float]:
    """``verify --trust-key``: a bad signature against a good one, interleaved, same run."""
    from harness_world.evidence.signing import sign_run

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        private, public = _keypair(folder)
        good = folder / "good"
        tasks = hw.load_tasks("helpdesk")
        result = hw.run(tasks, hw.oracle_agent("helpdesk"), samples=1 if quick else 5, out=good)
        sign_run(good, result.revision.id, private)
        bad = folder / "bad"
        shutil.copytree(good, bad)
        signature = json.loads((bad / "index.sig.json").read_text())
        signature["signature"] = "00" * 64
        (bad / "index.sig.json").write_text(json.dumps(signature))
        rounds = 3 if quick else 7
        full, refused = [], []
        for _ in range(rounds):
            full.append(_verify_seconds(good, public))
            refused.append(_verify_seconds(bad, public))
    slots = float(len(tasks) * (1 if quick else 5))
    good_s, bad_s = statistics.median(full), statistics.median(refused)
    return {
        "signed_slots": slots,
        "verify_signed_s": round(good_s, 3),
        "verify_bad_signature_s": round(bad_s, 4),
        "bad_signature_share": round(bad_s / good_s, 4),
    }


def call_bound_figures(batches: int, per: int) -> dict[str, float]:
    """A record over its task's tool-call budget: refused before replay, against replaying it.

    Each call lists one ticket that has an owner, which reads every ticket to find it: small
    to store, costly to replay (the shape of a record built to make verify slow).
    """
    world = hw.load_world("helpdesk")
    every = hw.load_tasks("helpdesk")
    task = next(t for t in every if t.id == "helpdesk.comment_assign_authority")
    session = world.open_session(0)
    for _ in range(400):
        session.call("list_tickets", {"owner_missing": False, "limit": 1})
    record = make_record(
        session,
        outcome=Outcome(status="completed"),
        task_id=task.id,
        task_hash=task.hash,
        final_message="done",
    )
    tight = Verifier(tasks={task.id: task})
    loose = Verifier(tasks=None)  # evidence only: held to the global bound, so replayed
    path = Path(tempfile.mkdtemp()) / "over.json"
    hw.save_record(record, path)
    refused = _median_us(lambda: tight.check_file(path), batches, max(per // 20, 1))
    replayed = _median_us(lambda: loose.check_file(path), batches, max(per // 20, 1))
    verdict = tight.check_file(path).verification
    assert verdict.evidence == "ungraded" and "not replayed" in verdict.reason, verdict
    shutil.rmtree(path.parent)
    return {
        "over_budget_calls": float(len(record.calls)),
        "refuse_over_budget_us": round(refused, 1),
        "replay_over_budget_us": round(replayed, 1),
        "refuse_share_of_replay": round(refused / replayed, 4),
    }


def main() -> None:
    quick = "--quick" in sys.argv
    batches, per = (5, 20) if quick else (21, 100)
    world = hw.load_world("helpdesk")
    task = next(t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.vip_two_statuses")
    record = run_script(world, task, load_oracles("helpdesk")[task.id])
    blobs = {fmt: encode_record(record, fmt) for fmt in ("json", "msgpack")}
    figures: dict[str, float] = {"calls": float(len(record.calls))}
    for fmt, blob in blobs.items():
        typed = msgspec.json.Decoder(Record) if fmt == "json" else msgspec.msgpack.Decoder(Record)
        plain = _median_us(lambda: typed.decode(blob), batches, per)  # noqa: B023
        strict = _median_us(lambda: decode_record(blob, fmt), batches, per)  # type: ignore[arg-type]  # noqa: B023
        figures[f"{fmt}_typed_us"] = round(plain, 1)
        figures[f"{fmt}_strict_us"] = round(strict, 1)
        figures[f"{fmt}_strict_over_typed"] = round(strict / plain, 2)
    verify = _median_us(lambda: hw.verify(record, world=world, task=task), batches, per // 10 or 1)
    figures["verify_us"] = round(verify, 1)
    figures["json_strict_share_of_verify"] = round(figures["json_strict_us"] / verify, 3)
    print(f"record: {len(record.calls)} calls, {len(blobs['json'])} bytes as JSON")
    for fmt in blobs:
        print(
            f"{fmt:8} typed {figures[f'{fmt}_typed_us']:8.1f} µs  strict "
            f"{figures[f'{fmt}_strict_us']:8.1f} µs  ×{figures[f'{fmt}_strict_over_typed']}"
        )
    print(
        f"verify (replay + grade) {verify:.1f} µs; strict JSON load is "
        f"{figures['json_strict_share_of_verify']:.1%} of it"
    )
    figures.update(call_bound_figures(batches, per))
    print(
        f"a {figures['over_budget_calls']:.0f}-call record over its budget: refused in "
        f"{figures['refuse_over_budget_us']:.0f} µs, replayed in "
        f"{figures['replay_over_budget_us']:.0f} µs ({figures['refuse_share_of_replay']:.2%})"
    )
    figures.update(signature_figures(quick))
    print(
        f"verify --trust-key over {figures['signed_slots']:.0f} slots: signed "
        f"{figures['verify_signed_s']:.3f} s, bad signature {figures['verify_bad_signature_s']:.4f}"
        f" s ({figures['bad_signature_share']:.2%} of a full verify)"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
