"""What the limits cost: loading a record strictly (JSON values only, within the limits) against
msgspec's plain typed decode, and both against a whole ``verify`` (load + replay + grade).

The strict loader reads a JSON file laid out as ``save_record`` writes it on a fast path (typed
decode, limits read off the bytes, byte-identical re-encoding: D28); otherwise it decodes into
plain values first (Python's ``json`` with a duplicate-key hook, or msgspec msgpack with an Ext
hook and a canonical-length check), walks them iteratively against
``harness_world.engine.limits``, then converts to a ``Record``. Measured side by side in one run,
interleaved, on the oracle record of ``helpdesk.vip_two_statuses`` (small seed) in both
encodings.

    python bench/trust.py            # full
    python bench/trust.py --quick    # fewer repetitions (CI smoke)

Last line: one JSON object with every figure.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable

import msgspec

import harness_world as hw
from harness_world.coverage import load_oracles, run_script
from harness_world.evidence.record import Record, decode_record, encode_record


def _median_us(fn: Callable[[], object], batches: int, per: int) -> float:
    times = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(per):
            fn()
        times.append((time.perf_counter() - start) / per * 1e6)
    return statistics.median(times)


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
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
