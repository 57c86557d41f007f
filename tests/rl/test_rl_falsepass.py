"""The plain reward function audited by falsepass, a reward auditor we did not write.

falsepass's own runner loads the adapter of `tests.rl.falsepass_audit` and sends the
reward function its probes, our oracle routes (known-good) and our hand mutants (known-bad).
The bar: no false pass and no false fail. Reduced here to a sample of the built-in worlds'
tasks; every task under HW_FULL=1 (the table in docs/rl.md is the full run).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, examples, requires

pytestmark = [
    pytest.mark.rl,
    requires("falsepass", "the reward audit needs falsepass (the [rl] extra)"),
]


def audit(folder: Path, n: int) -> dict[str, Any]:
    """falsepass's runner on ``n`` tasks (sampled from seed 0); its payload."""
    from falsepass import runner

    folder.mkdir()
    (folder / "adapter.py").write_text(
        "from tests.rl.falsepass_audit import make_adapter\n\nADAPTER = make_adapter()\n"
    )
    (folder / "src").mkdir()  # what falsepass's static scan reads: the reward's own code
    shutil.copy(REPO / "harness_world" / "rewards.py", folder / "src" / "rewards.py")
    payload: dict[str, Any] = runner.run(folder, n=n, seed=0, few=n, jobs=1)
    return payload


def test_falsepass_finds_no_false_pass_and_no_false_fail(tmp_path: Path) -> None:
    from falsepass.model import Expect

    payload = audit(tmp_path / "audit", examples(6, 10_000))
    rows = payload["results"]
    failed = [r for r in rows if not r["passed"]]
    assert failed == [], [
        (r["probe"], r["variant"], r["example"], r["score"], r["detail"]) for r in failed
    ]
    good = [r for r in rows if r["expected"] == Expect.FULL.value]
    bad = [r for r in rows if r["expected"] == Expect.ZERO.value]
    assert good and all(r["score"] == 1.0 for r in good)
    assert {r["probe"] for r in bad} >= {"T5", "T6", "T8", "M1", "P3", "P6", "P10"}
    assert max(r["score"] for r in bad) == 0.0
    assert (tmp_path / "audit" / "summary.md").is_file()


def test_the_audit_catches_a_reward_that_pays_for_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same audit against a planted defect (half a reward for every failed episode):
    falsepass reports false passes, so the clean audit above can fail."""
    import tests.rl.falsepass_audit as audited
    from harness_world import rewards

    def lenient(completions: Any, task_id: Any, seed: Any, **columns: Any) -> list[float]:
        return [0.5 if v == 0.0 else v for v in rewards.reward(completions, task_id, seed)]

    monkeypatch.setattr(audited, "reward", lenient)
    payload = audit(tmp_path / "audit", 2)
    false_passes = [r for r in payload["results"] if not r["passed"] and r["expected"] == "zero"]
    assert false_passes
