"""The search's Pareto plot: every replayed candidate's output tokens/s per GPU against
its SLO ratio (the largest of its SLO percentiles over their bounds), the front joined, the
SLO's edge (ratio 1) and the recommended deployment marked."""

from __future__ import annotations

import os

from ...binding import lazy as _lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from . import SearchResult

__all__ = ["pareto_figure"]


def pareto_figure(res: SearchResult, path: str | os.PathLike[str] | None = None):
    """The figure; written to ``path`` (its suffix the format) when given.

    Raises:
        ImportError: matplotlib is not installed.
    """
    # no pyplot: any backend; a notebook shows it as PNG (aisimulate.plot's figures)
    fig, axes = _lazy.module("aisimulate.plot").figure(1, 1, 7.5, 4.8)
    ax = axes[0][0]
    pts = [r for r in res.results if r.get("fate") == "simulated" and r.get("slo_ratio") is not None
           and r.get("output_tps_per_gpu") is not None]
    for meets, color, label in ((True, "tab:green", "meets the SLO"), (False, "tab:gray", "misses it")):
        sel = [r for r in pts if bool(r.get("meets")) == meets]
        ax.scatter([r["slo_ratio"] for r in sel], [r["output_tps_per_gpu"] for r in sel], s=12, c=color,
                   alpha=0.6, label=f"{label} ({len(sel)})")
    fr = sorted(res.front, key=lambda r: r["slo_ratio"])
    ax.plot([r["slo_ratio"] for r in fr], [r["output_tps_per_gpu"] for r in fr], "-o", c="tab:blue", ms=4,
            lw=1.2, label=f"Pareto front ({len(fr)})")
    ax.axvline(1.0, c="tab:red", lw=0.8, ls="--", label="SLO bound")
    b = res.best
    if b is not None:
        ax.scatter([b.result["slo_ratio"]], [b.result["output_tps_per_gpu"]], s=120, marker="*", c="tab:orange",
                   zorder=5, label=f"best: {b.key}")
    ax.set_xscale("log")
    ax.set_xlabel(f"SLO ratio (max over bounds of p{res.slo['percentile']:g} / bound; ≤ 1 meets)")
    ax.set_ylabel("output tokens/s per GPU")
    ax.set_title(f"aisimulate search: {res.counts['simulated']} simulated, {res.counts['stopped']} stopped, "
                 f"{res.counts['pruned']} pruned", fontsize=10)
    ax.legend(fontsize=7, loc="best")
    if path is not None:
        fig.savefig(os.fspath(path))
    return fig
