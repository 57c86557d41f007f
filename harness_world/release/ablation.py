"""Ablations: one agent setting changed at a time, every arm paired with the baseline.

``run --ablate NAME=VALUE ...`` runs the baseline configuration (the agent ``run``'s options
make) and one *arm* per factor, the baseline with that one setting changed. It is a crossed
run (`harness_world.running.crossed`): every configuration is an ordinary run directory under
the ablation's directory, with the same tasks, samples and base seed, its attempts executed
interleaved in one seeded order, so each arm's slot (task, sample) is paired with the
baseline's by construction. ``ablation.json`` beside ``crossed.json`` names the factor of each
arm.

`compare_ablation` gives, per factor, the arm's pass rate minus the baseline's (mean over tasks
of the per-task mean over paired samples) with the interval of the crossed comparison
(`harness_world.analysis.crossed.paired_difference`: ``compare``'s wild cluster bootstrap-t
over task families), simultaneous over the factors (Bonferroni: ``1 - 0.05 / F`` each).

A factor names one of `FACTORS`. Most are ``run``'s own agent options (the agent itself, its
script, the model's options); ``max-retries`` and ``context-bound`` are settings of the model
agents that ``run`` has no option for (request retries, and bounded context: old tool results
beyond an estimated prompt size sent as notices). An arm whose agent's settings equal the
baseline's (a setting the agent does not use, e.g. a temperature for a scripted agent) is
refused: it would be the baseline again, under another name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, cast

import attrs
import msgspec

from harness_world.analysis.crossed import (
    ProfileDifference,
    difference_line,
    paired_difference,
)
from harness_world.errors import HarnessWorldError
from harness_world.grading.task import Task
from harness_world.integrations.agents import AGENT_NAMES
from harness_world.running.agents import Agent
from harness_world.running.context import ContextPolicy
from harness_world.running.crossed import (
    CROSSED,
    CrossedConfig,
    CrossedResult,
    load_crossed,
    run_crossed,
)
from harness_world.running.heldout import check_split_tasks
from harness_world.running.reader import RunReader
from harness_world.running.rundir import read_json, write_json
from harness_world.stats import DEFAULT_SEED

__all__ = [
    "ABLATION",
    "FACTORS",
    "AblationComparison",
    "AblationError",
    "AblationManifest",
    "Factor",
    "compare_ablation",
    "design_ablation",
    "load_ablation",
    "parse_factors",
    "render_ablation",
    "run_ablation",
]

ABLATION = "ablation.json"
BASELINE = "baseline"
_LEVEL = 0.05  # two-sided, simultaneous over the factors


class AblationError(HarnessWorldError, ValueError):
    """A factor that cannot be run (unknown name, bad value, an arm equal to the baseline)."""


def _int(low: int) -> Callable[[str], int]:
    def convert(raw: str) -> int:
        value = int(raw)
        if value < low:
            raise ValueError
        return value

    return convert


def _number(low: float, *, open_low: bool) -> Callable[[str], float]:
    def convert(raw: str) -> float:
        value = float(raw)
        if not math.isfinite(value) or value < low or (open_low and value == low):
            raise ValueError
        return value

    return convert


def _choice(options: Sequence[str]) -> Callable[[str], str]:
    def convert(raw: str) -> str:
        if raw not in options:
            raise ValueError
        return raw

    return convert


def _file(raw: str) -> Path:
    if not Path(raw).is_file():
        raise ValueError
    return Path(raw)


def _text(raw: str) -> str:
    if not raw.strip():
        raise ValueError
    return raw


@attrs.frozen(slots=True)
class _Setting:
    """How one factor's value is read, and where it goes.

    Attributes:
        convert: Text to value; raises ValueError for a value it does not take.
        expects: What it takes, in words (for the error).
        attribute: The model agent's attribute it sets; empty for a ``run`` option (its
            name with ``_`` for ``-``), given to the agent maker.
    """

    convert: Callable[[str], Any]
    expects: str
    attribute: str = ""


FACTORS: Final[Mapping[str, _Setting]] = {
    "agent": _Setting(_choice(AGENT_NAMES), f"one of {', '.join(AGENT_NAMES)}"),
    "script": _Setting(_file, "an existing .py file"),
    "model": _Setting(_text, "a model name"),
    "base-url": _Setting(_text, "an endpoint URL"),
    "temperature": _Setting(_number(0.0, open_low=False), "a finite number >= 0"),
    "max-tokens": _Setting(_int(1), "an integer >= 1"),
    "request-timeout": _Setting(_number(0.0, open_low=True), "seconds, a finite number > 0"),
    "tool-calling": _Setting(_choice(("native", "text")), "native or text"),
    "system-prompt-file": _Setting(_file, "an existing file"),
    "max-retries": _Setting(_int(0), "an integer >= 0", attribute="max_retries"),
    "context-bound": _Setting(_int(1), "estimated prompt tokens, >= 1", attribute="context"),
}
"""Every factor ``--ablate`` takes, by name."""

ABLATE_HELP: Final = (
    "the baseline (the agent the other options make) and one arm per NAME=VALUE, that one "
    "setting changed, crossed into --out and paired by task and seed; each factor's difference "
    f"is printed with its interval (NAME: {', '.join(FACTORS)})"
)
"""``run --ablate``'s help, beside the factors it lists."""


class Factor(msgspec.Struct, frozen=True, kw_only=True):
    """One setting changed from the baseline's: ``NAME=VALUE``.

    Attributes:
        name: One of `FACTORS`.
        value: The value as given.
    """

    name: str
    value: str

    @property
    def text(self) -> str:
        """``NAME=VALUE``."""
        return f"{self.name}={self.value}"

    def parsed(self) -> Any:
        """The value as its setting takes it."""
        return FACTORS[self.name].convert(self.value)


def _factor(text: str) -> Factor:
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep:
        raise AblationError(f"--ablate {text}: expected NAME=VALUE")
    setting = FACTORS.get(name)
    if setting is None:
        raise AblationError(
            f"--ablate {text}: unknown setting {name!r} (settings: {', '.join(FACTORS)})"
        )
    try:
        setting.convert(value)
    except ValueError:
        raise AblationError(
            f"--ablate {text}: {name} expects {setting.expects}, got {value!r}"
        ) from None
    return Factor(name=name, value=value)


def parse_factors(texts: Sequence[str]) -> list[Factor]:
    """The factors of ``NAME=VALUE`` texts, in order.

    Raises:
        AblationError: naming the text, for no factor, one that is not ``NAME=VALUE``, an
            unknown name, a value its setting does not take, or a factor given twice.
    """
    if not texts:
        raise AblationError("--ablate: give at least one NAME=VALUE")
    factors = [_factor(t) for t in texts]
    seen: set[str] = set()
    for f in factors:
        if f.text in seen:
            raise AblationError(f"--ablate {f.text}: given twice")
        seen.add(f.text)
    return factors


class AblationManifest(msgspec.Struct, frozen=True, kw_only=True):
    """``ablation.json``: which configuration of the crossed run is the baseline, which arms.

    Attributes:
        format: The file format version.
        baseline: The baseline configuration's name.
        arms: Each arm's configuration name -> its factor, in the order given.
    """

    format: int = 1
    baseline: str = BASELINE
    arms: dict[str, Factor]


def _arm_name(number: int, factor: Factor) -> str:
    """A configuration name for the arm (letters, digits and ``._@+-``), numbered."""
    return f"{number}.{re.sub(r'[^A-Za-z0-9._@+-]', '_', factor.text)}"[:100]


def load_ablation(out: str | Path) -> AblationManifest:
    """Read ``ablation.json`` of an ablation run.

    Raises:
        AblationError: when it is missing or not an ablation manifest.
    """
    return read_json(Path(out) / ABLATION, AblationManifest, "ablation manifest", AblationError)


def _arm_agent(
    factor: Factor, baseline: Agent, make_agent: Callable[[Mapping[str, Any]], Agent]
) -> Agent:
    """The baseline with one setting changed; refused when that changes none of its settings."""
    setting, value = FACTORS[factor.name], factor.parsed()
    if setting.attribute == "context":
        value = ContextPolicy(max_tokens=value)
    try:
        if setting.attribute:
            arm = _with_attribute(factor, baseline, setting.attribute, value)
        else:
            arm = make_agent({factor.name.replace("-", "_"): value})
    except AblationError:
        raise
    except (ValueError, TypeError, OSError) as exc:
        raise AblationError(f"--ablate {factor.text}: {exc}") from None
    return _checked(factor, baseline, arm)


def _with_attribute(factor: Factor, baseline: Agent, attribute: str, value: Any) -> Agent:
    """The baseline agent with one of its own attributes changed (a model agent's setting)."""
    kind: Any = type(baseline)
    if not (attrs.has(kind) and attribute in attrs.fields_dict(kind)):
        raise AblationError(
            f"--ablate {factor.text}: agent {baseline.name!r} has no {factor.name} setting "
            "(the model agents have it)"
        )
    return cast(Agent, attrs.evolve(cast(Any, baseline), **{attribute: value}))


def _checked(factor: Factor, baseline: Agent, arm: Agent) -> Agent:
    if arm.settings() == baseline.settings():
        raise AblationError(
            f"--ablate {factor.text}: changes none of agent {baseline.name!r}'s settings "
            "(it does not use this one), so the arm would be the baseline again"
        )
    return arm


def design_ablation(
    factors: Sequence[Factor], make_agent: Callable[[Mapping[str, Any]], Agent]
) -> tuple[AblationManifest, list[tuple[CrossedConfig, Agent]]]:
    """The manifest and the configurations of an ablation: the baseline first, then each arm.

    Raises:
        AblationError: as `run_ablation`, before anything is written.
    """
    baseline = make_agent({})
    manifest = AblationManifest(arms={_arm_name(i, f): f for i, f in enumerate(factors, 1)})
    configs = [(CrossedConfig(name=BASELINE, harness=BASELINE, profile="ablation"), baseline)]
    seen: dict[bytes, str] = {}
    for name, factor in manifest.arms.items():
        arm = _arm_agent(factor, baseline, make_agent)
        settings = msgspec.json.encode(arm.settings(), order="sorted")
        if settings in seen:
            raise AblationError(
                f"--ablate {factor.text}: the same arm as --ablate {seen[settings]}"
            )
        seen[settings] = factor.text
        configs.append((CrossedConfig(name=name, harness=factor.text, profile="ablation"), arm))
    return manifest, configs


def run_ablation(
    factors: Sequence[Factor],
    make_agent: Callable[[Mapping[str, Any]], Agent],
    tasks: Sequence[Task],
    *,
    out: str | Path,
    splits: Sequence[str | Path] = (),
    **crossed: Any,
) -> CrossedResult:
    """Run the baseline and one arm per factor as a crossed run into ``out``.

    Args:
        factors: The factors (`parse_factors`), one arm each.
        make_agent: The baseline's agent maker: given ``{}`` it makes the baseline; given one
            ``run`` option (``max_tokens``, ``agent``, ...) and its value, the baseline with
            that option changed.
        tasks: The tasks every configuration runs.
        out: The ablation's directory.
        splits: Held-out split locks: every configuration is a candidate on each.
        **crossed: `harness_world.running.crossed.run_crossed`'s other options (``samples``,
            ``seed``: shared by every configuration, which pairs the slots; ``size``,
            ``limits``, ``executor``, ``progress``).

    Raises:
        AblationError: for an arm the agent maker refuses, one equal to the baseline or to
            another arm, or ``out`` holding another ablation or a crossed run.
        SplitError: as `harness_world.running.run.run`, before anything is written.
        RevisionMismatch: when a configuration's directory holds a run of another revision.
    """
    manifest, configs = design_ablation(factors, make_agent)
    root = Path(out)
    if (root / ABLATION).is_file():
        if load_ablation(root) != manifest:
            raise AblationError(f"{root}: holds an ablation of other factors; use a new --out")
    elif (root / CROSSED).is_file():
        raise AblationError(f"{root}: holds a crossed run that is no ablation; use a new --out")
    check_split_tasks(splits, tasks)  # before ablation.json is written
    root.mkdir(parents=True, exist_ok=True)
    write_json(root / ABLATION, manifest)  # first: a run cut short is still read as one
    return run_crossed(configs, tasks, out=root, splits=splits, **crossed)


class AblationComparison(msgspec.Struct, frozen=True, kw_only=True):
    """Every arm of an ablation against the baseline.

    Attributes:
        out: The ablation's directory.
        baseline_agent: The baseline's agent name.
        factors: One difference per factor, arm minus baseline, in the order given (each
            difference's ``profile`` is the factor, ``NAME=VALUE``).
        confidence: Each interval's two-sided level (``1 - 0.05 / F``: 95% over all together).
        seed: Seed of the bootstrap's random sign patterns (used above 12 clusters).
    """

    out: str
    baseline_agent: str
    factors: list[ProfileDifference]
    confidence: float
    seed: int = DEFAULT_SEED


def compare_ablation(
    out: str | Path,
    *,
    tasks: Sequence[Task] | None = None,
    seed: int = DEFAULT_SEED,
    reader: RunReader | None = None,
) -> AblationComparison:
    """Compare each arm of an ablation with its baseline, paired by task, sample and seed.

    Args:
        out: The ablation's directory.
        tasks: The tasks to grade against (default: the built-in tasks).
        seed: Seed of the bootstrap's random sign patterns.
        reader: How its runs are read (default: by ``tasks``, provenance unchecked).

    Raises:
        AblationError: when ``out`` holds no ablation manifest.
        CrossedError: when it holds no readable crossed run.
    """
    root = Path(out)
    manifest = load_ablation(root)
    load_crossed(root)  # an ablation is a crossed run: refuse a half-written one here
    reader = reader or RunReader.of(tasks)
    base = reader.read(root / manifest.baseline)
    confidence = 1 - _LEVEL / max(1, len(manifest.arms))
    differences = [
        paired_difference(
            factor.text,
            base.slots,
            reader.read(root / name).slots,
            base.families,
            seed=seed,
            confidence=confidence,
        )
        for name, factor in manifest.arms.items()
    ]
    return AblationComparison(
        out=str(root),
        baseline_agent=base.manifest.agent,
        factors=differences,
        confidence=confidence,
        seed=seed,
    )


def render_ablation(c: AblationComparison) -> str:
    """The comparison as text: a header, then one line per factor (ends with a newline)."""
    lines = [
        f"ablation {c.out}: each factor against the baseline ({c.baseline_agent}), one at a "
        f"time, paired by task, sample and seed (pass rate; {c.confidence * 100:.4g}% "
        f"intervals, 95% over the {len(c.factors)} factor(s) together, from compare's wild "
        f"bootstrap over families; random patterns' seed {c.seed})",
        *(difference_line(d) for d in c.factors),
    ]
    return "\n".join(lines) + "\n"
