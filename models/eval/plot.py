"""The utility-leakage scatter with the empirical Pareto frontier (the paper's Figure 3), PNG and SVG.

Leakage on x, utility on y, both x100; marker area grows with SoftScore. The
frontier joins the points no other point beats on both axes (lower or equal
leakage and higher or equal utility, one strictly), drawn as a dashed step
line: the best trade-offs observed. Rendered with matplotlib's Agg canvas (no
display, no pyplot state), so it runs in a server or a test; imported when a chart is drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Point:
    label: str
    leakage: float  # x100
    utility: float  # x100
    soft: float  # x100


def pareto_front(points: Sequence[Point]) -> list[Point]:
    """Points not dominated by any other (less leakage and more utility is better), by rising leakage."""
    front = [
        p for p in points
        if not any(
            q.leakage <= p.leakage and q.utility >= p.utility and (q.leakage < p.leakage or q.utility > p.utility)
            for q in points
        )
    ]
    return sorted(front, key=lambda p: (p.leakage, p.utility))


def scatter(points: Sequence[Point], out_stem: Path, *, title: str = "SNEAK: utility vs leakage") -> list[Path]:
    """Write ``out_stem``.png and .svg; returns both paths."""
    # matplotlib loads when a chart is drawn: a command refused before it (or one that draws nothing)
    # neither pays its import nor writes its font cache.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 5.2))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    offsets = ((6, 4), (6, -11), (-8, 9), (-8, -14))  # neighbours' labels take turns around their points
    for i, p in enumerate(sorted(points, key=lambda q: (q.leakage, q.utility))):
        ax.scatter([p.leakage], [p.utility], s=30 + 6 * max(p.soft, 0.0), alpha=0.7)
        dx, dy = offsets[i % len(offsets)]
        # Never clipped: a label near 100 is drawn outside the axes and the saved figure grows to hold it.
        ax.annotate(p.label, (p.leakage, p.utility), textcoords="offset points", xytext=(dx, dy), fontsize=8,
                    ha="left" if dx > 0 else "right", annotation_clip=False)
    front = pareto_front(points)
    if front:
        xs: list[float] = []
        ys: list[float] = []
        for i, p in enumerate(front):
            if i:
                xs.append(p.leakage)
                ys.append(front[i - 1].utility)
            xs.append(p.leakage)
            ys.append(p.utility)
        ax.plot(xs, ys, linestyle="--", color="grey", linewidth=1, label="empirical Pareto frontier")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_xlim(-3, 103)
    ax.set_ylim(-3, 103)
    ax.set_xlabel("Leakage (lower is better)")
    ax.set_ylabel("Utility (higher is better)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    out_stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [out_stem.with_suffix(".png"), out_stem.with_suffix(".svg")]
    for path in paths:
        fig.savefig(path, bbox_inches="tight")
    return paths
