"""The report's plots, drawn with matplotlib (Agg) to inline SVG or to PNG files.

matplotlib is the optional extra ``harness_world[report]``; it is imported when a plot is first
drawn, so the rest of the package works without it. Every figure function takes plain data and
returns a `Plot`: the figure plus a one-sentence text alternative for readers who cannot see it.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from harness_world.errors import HarnessWorldError
from harness_world.stats import PassKSummary, ProportionInterval

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "Plot",
    "PlotsUnavailable",
    "band_plot",
    "heatmap_plot",
    "pareto_plot",
    "pass_k_plot",
    "process_plot",
    "vector_plot",
]

COLORS = {
    "passed": "#2e7d32",
    "pending": "#81c784",
    "failed": "#c62828",
    "ungraded": "#f9a825",
    "lost": "#6d4c41",
    "invalid": "#7b1fa2",
    "missing": "#9e9e9e",
}


class PlotsUnavailable(HarnessWorldError):
    """matplotlib is not installed: ``pip install 'harness_world[report]'``."""


@attrs.frozen(slots=True)
class Plot:
    """A drawn figure and its text alternative.

    Attributes:
        name: A file-name stem (``pass_k``, ``heatmap``...).
        title: The figure's title.
        alt: What the figure shows, in one or two sentences (the ``<desc>`` of the SVG).
        figure: The matplotlib figure.
    """

    name: str
    title: str
    alt: str
    figure: Figure

    def svg(self) -> str:
        """The figure as an inline ``<svg>`` element with a title and description (no XML head).

        Text stays text (``svg.fonttype = none``): smaller, selectable, and read by screen
        readers; the viewer's sans-serif font draws it.
        """
        buffer = io.StringIO()
        self.figure.savefig(buffer, format="svg", metadata={"Date": None})
        text = buffer.getvalue()
        text = text[text.index("<svg") :]
        # Inline SVG in HTML needs no namespace declarations and no RDF metadata: dropping
        # them leaves no URL at all in the page (nothing a reader could mistake for a request).
        text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
        text = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", text)
        head = (
            f'<svg role="img" aria-labelledby="{self.name}-t {self.name}-d" '
            f'class="plot" id="plot-{self.name}"'
        )
        text = re.sub(r"^<svg", head, text, count=1)
        close = text.index(">") + 1
        label = (
            f'<title id="{self.name}-t">{_escape(self.title)}</title>'
            f'<desc id="{self.name}-d">{_escape(self.alt)}</desc>'
        )
        return text[:close] + label + text[close:]

    def png(self, folder: Path) -> Path:
        """Write the figure as ``<folder>/<name>.png`` (150 dpi) and return the path."""
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.name}.png"
        self.figure.savefig(path, format="png", dpi=150, metadata={"Software": None})
        return path

    def close(self) -> None:
        """Release the figure's memory."""
        from matplotlib import pyplot as plt

        plt.close(self.figure)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _figure(width: float, height: float) -> tuple[Figure, Any]:
    try:
        import matplotlib
    except ImportError:
        raise PlotsUnavailable(
            "plots need matplotlib: pip install 'harness_world[report]'"
        ) from None
    matplotlib.use("Agg", force=True)
    matplotlib.rcParams["svg.fonttype"] = "none"
    matplotlib.rcParams["svg.hashsalt"] = "harness_world"
    matplotlib.rcParams["font.size"] = 9
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots()


def vector_plot(rates: Sequence[tuple[str, ProportionInterval]]) -> Plot:
    """Each rate of the result vector as a point with its Wilson 95 % interval."""
    fig, ax = _figure(6.4, 0.45 * len(rates) + 1.0)
    labels = [name for name, _ in rates][::-1]
    points = [p for _, p in rates][::-1]
    ys = list(range(len(points)))
    ax.errorbar(
        [p.estimate for p in points],
        ys,
        xerr=[[p.estimate - p.low for p in points], [p.high - p.estimate for p in points]],
        fmt="o",
        color="#1565c0",
        capsize=3,
    )
    ax.set_yticks(
        ys, [f"{n} ({p.successes}/{p.trials})" for n, p in zip(labels, points, strict=True)]
    )
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("rate (Wilson 95 % interval)")
    ax.grid(axis="x", alpha=0.3)
    alt = "; ".join(
        f"{n}: {p.estimate:.3f} [{p.low:.3f}, {p.high:.3f}] of {p.trials}" for n, p in rates
    )
    return Plot(name="vector", title="Outcome, evidence and grade rates", alt=alt, figure=fig)


def pass_k_plot(configs: Mapping[str, Sequence[PassKSummary]]) -> Plot:
    """pass^k (solid) and pass@k (dashed) against k, one colour per configuration."""
    fig, ax = _figure(6.4, 3.4)
    alt = []
    for index, (name, summaries) in enumerate(configs.items()):
        color = f"C{index}"
        ks = [s.k for s in summaries]
        ax.plot(ks, [s.pass_hat_k for s in summaries], "o-", color=color, label=f"{name} pass^k")
        ax.plot(ks, [s.pass_at_k for s in summaries], "s--", color=color, label=f"{name} pass@k")
        alt.append(
            f"{name}: "
            + ", ".join(
                f"k={s.k} pass^k {s.pass_hat_k:.3f} pass@k {s.pass_at_k:.3f}" for s in summaries
            )
        )
    ax.set_xlabel("k (samples)")
    ax.set_ylabel("probability")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    if configs and max((len(s) for s in configs.values()), default=0) > 0:
        ticks = {s.k for ss in configs.values() for s in ss}
        if len(ticks) > 12:  # hundreds of k: tick the ones the table bounds
            ticks = {s.k for ss in configs.values() for s in ss if s.lower is not None}
        ax.set_xticks(sorted(ticks))
    return Plot(name="pass_k", title="pass^k and pass@k by k", alt="; ".join(alt), figure=fig)


def heatmap_plot(rows: Sequence[tuple[str, Sequence[str]]]) -> Plot:
    """Task × sample states as coloured cells (for PNG; the HTML draws its own linked grid)."""
    from matplotlib.colors import ListedColormap

    states = list(COLORS)
    n_samples = max((len(cells) for _, cells in rows), default=1)
    fig, ax = _figure(min(6.0 + 0.3 * n_samples, 14), min(1.2 + 0.25 * len(rows), 40))
    grid = [
        [states.index(c) for c in cells] + [states.index("missing")] * (n_samples - len(cells))
        for _, cells in rows
    ]
    ax.imshow(
        grid or [[0]],
        cmap=ListedColormap(list(COLORS.values())),
        vmin=0,
        vmax=len(states) - 1,
        aspect="auto",
        interpolation="nearest",
    )
    ax.set_yticks(range(len(rows)), [label for label, _ in rows], fontsize=7)
    ax.set_xticks(range(n_samples) if n_samples <= 30 else range(0, n_samples, n_samples // 10))
    ax.set_xlabel("sample")
    ax.set_xticks([x - 0.5 for x in range(1, n_samples)], minor=True)
    ax.set_yticks([y - 0.5 for y in range(1, len(rows))], minor=True)
    ax.grid(which="minor", color="white", linewidth=1.5 if n_samples <= 30 else 0)
    ax.tick_params(which="minor", length=0)
    from matplotlib.patches import Patch

    handles = [Patch(color=c, label=s) for s, c in COLORS.items()]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7)
    counts = {s: sum(cells.count(s) for _, cells in rows) for s in states}
    alt = f"{len(rows)} tasks × {n_samples} samples; " + ", ".join(
        f"{s} {n}" for s, n in counts.items() if n
    )
    return Plot(name="heatmap", title="Task × sample results", alt=alt, figure=fig)


def band_plot(
    differences: Sequence[tuple[str, float]],
    mean: float,
    band: tuple[float, float],
    verdict: str,
) -> Plot:
    """Per-task differences (candidate - baseline) with their mean and the noise band.

    ``band`` is (low, high) around 0: the decision's band, not always symmetric.
    """
    low, high = band
    width = (
        f"-{-low * 100:.1f}/+{high * 100:.1f}"
        if abs(low + high) >= 5e-4
        else (f"±{high * 100:.1f}")
    )
    fig, ax = _figure(6.4, min(1.2 + 0.18 * len(differences), 30))
    ordered = sorted(differences, key=lambda d: d[1])
    ys = list(range(len(ordered)))
    colors = ["#c62828" if d < 0 else "#2e7d32" if d > 0 else "#757575" for _, d in ordered]
    ax.barh(ys, [d for _, d in ordered], color=colors, height=0.7)
    ax.axvspan(low, high, color="#90a4ae", alpha=0.3, label="noise band")
    ax.axvline(mean, color="#1565c0", linewidth=2, label=f"mean change {mean * 100:+.1f} pts")
    ax.axvline(0, color="black", linewidth=0.6)
    ax.set_yticks(ys, [t for t, _ in ordered], fontsize=6 if len(ordered) > 40 else 8)
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("candidate - baseline pass rate, per task")
    ax.set_title(f"verdict: {verdict} the band ({width} pts)")
    ax.legend(loc="best", fontsize=8)
    alt = (
        f"{len(ordered)} paired tasks; mean change {mean * 100:+.1f} points; band "
        f"{width} points; verdict {verdict}; "
        f"{sum(1 for _, d in ordered if d < 0)} tasks lower, "
        f"{sum(1 for _, d in ordered if d > 0)} higher"
    )
    return Plot(name="band", title="Paired differences and the noise band", alt=alt, figure=fig)


def pareto_plot(points: Sequence[tuple[str, float, float, float, bool]], cost_label: str) -> Plot:
    """Cost (x) against success (y), bubble area from pass^k; dominated configs hollow."""
    fig, ax = _figure(6.4, 3.6)
    for index, (name, cost, success, pass_k, dominated) in enumerate(points):
        color = f"C{index}"
        ax.scatter(
            [cost],
            [success],
            s=60 + 900 * pass_k,
            facecolors="none" if dominated else color,
            edgecolors=color,
            linewidths=2,
            alpha=0.8,
        )
        ax.annotate(
            f"{name}{' (dominated)' if dominated else ''}",
            (cost, success),
            fontsize=8,
            xytext=(8, 6),
            textcoords="offset points",
        )
    ax.margins(x=0.25)
    ax.set_xlabel(cost_label)
    ax.set_ylabel("pass rate")
    ax.set_ylim(-0.05, 1.1)
    ax.grid(alpha=0.3)
    alt = "; ".join(
        f"{n}: {cost_label} {c:.4g}, pass rate {s:.3f}, pass^k {k:.3f}"
        + (", dominated" if d else ", on the frontier")
        for n, c, s, k, d in points
    )
    return Plot(name="pareto", title="Cost against success (bubble: pass^k)", alt=alt, figure=fig)


def process_plot(configs: Mapping[str, Mapping[str, ProportionInterval | None]]) -> Plot:
    """Backtrack, verification and irreversible-action rates per configuration."""
    fig, ax = _figure(6.4, 2.8)
    names = ["backtrack", "verification", "irreversible"]
    width = 0.8 / max(1, len(configs))
    alt = []
    for index, (config, rates) in enumerate(configs.items()):
        xs = [i + index * width for i in range(len(names))]
        values = [rates.get(n) for n in names]
        est = [v.estimate if v else 0.0 for v in values]
        err = [
            [v.estimate - v.low if v else 0.0 for v in values],
            [v.high - v.estimate if v else 0.0 for v in values],
        ]
        ax.bar(xs, est, width=width, yerr=err, capsize=3, color=f"C{index}", label=config)
        alt.append(
            f"{config}: "
            + ", ".join(
                f"{n} {v.estimate:.3f}" if v else f"{n} undefined"
                for n, v in zip(names, values, strict=True)
            )
        )
    ax.set_xticks([i + width * (len(configs) - 1) / 2 for i in range(len(names))], names)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share of write calls")
    ax.legend(fontsize=8)
    return Plot(
        name="process", title="Process rates (of write calls)", alt="; ".join(alt), figure=fig
    )
