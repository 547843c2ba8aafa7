"""The search's answer from its candidates' results: the Pareto front, the recommended
deployment, the pruned and stopped families. Pure functions of the results (dicts as
the core writes them, ``core/search/run.go`` ``Result``), so that a resumed or
distributed search gives the same answer as one run at once."""

from __future__ import annotations

import math
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Sequence

__all__ = ["front", "best", "families", "throughput_per_gpu", "cost_per_million"]


def throughput_per_gpu(r: Mapping[str, Any]) -> float | None:
    """Output tokens/s per GPU of a replayed candidate (``None`` otherwise)."""
    v = r.get("output_tps_per_gpu")
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def cost_per_million(r: Mapping[str, Any], price_per_gpu_hour: float | None) -> float | None:
    """Cost per million output tokens at ``price_per_gpu_hour`` (per GPU-hour): the
    candidate's GPU hours over its measured window, times the price, per million output
    tokens it produced (``summary.gpu_hours``, ``summary.total_output_tokens``:
    docs/metrics.md). ``None`` without a price or a replay."""
    s = r.get("summary") or {}
    hours, tokens = s.get("gpu_hours"), s.get("total_output_tokens")
    if price_per_gpu_hour is None or not hours or not tokens:
        return None
    return price_per_gpu_hour * hours / (tokens / 1e6)


def _point(r: Mapping[str, Any]) -> tuple[float, float] | None:
    x, y = throughput_per_gpu(r), r.get("slo_ratio")
    if r.get("fate") != "simulated" or x is None or not isinstance(y, (int, float)):
        return None
    return x, float(y)


def front(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The Pareto front of the replayed candidates: output tokens/s per GPU (higher is
    better) against the SLO ratio (the largest of the SLO's percentiles over its bound;
    lower is better, ≤ 1 meets). A candidate is on it when no other is at least as good
    on both and better on one. Sorted by throughput per GPU, highest first (ties by
    index)."""
    pts = [(p, r) for r in results if (p := _point(r)) is not None]
    pts.sort(key=lambda pr: (-pr[0][0], pr[0][1], pr[1]["index"]))
    out, best_y = [], math.inf
    for (x, y), r in pts:
        if y < best_y:  # sorted by x descending: only a lower ratio than every better x survives
            out.append(r)
            best_y = y
    return out


#: Throughput per GPU within this fraction of the highest counts as equal when the search
#: picks its best deployment: an open loop's throughput is its offered load for every
#: deployment that keeps up, so the differences below it are the edges of the measured
#: window (the last responses' drain), not the deployment.
TIE = 0.01


def best(results: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The recommended deployment: among the candidates that met the SLO, those within
    :data:`TIE` of the highest output tokens/s per GPU; of them the lowest SLO ratio (the
    most headroom), then the fewest GPUs, then the first enumerated. ``None`` when none
    met it."""
    ok = [r for r in results if r.get("meets") is True and _point(r) is not None]
    if not ok:
        return None
    top = max(throughput_per_gpu(r) for r in ok)
    near = [r for r in ok if throughput_per_gpu(r) >= top * (1 - TIE)]
    return min(near, key=lambda r: (r["slo_ratio"], r["gpus"], r["index"]))


#: The prunes whose verdict the formats decide as much as the layout (what fits in memory).
_BY_FORMAT = ("memory", "kv_cache")


def _family(r: Mapping[str, Any]) -> str:
    """The family a pruned or stopped candidate belongs to: its mode and pools, and for a
    memory or KV prune its formats too (the batch limits left out: a family is what a
    prune says about a layout)."""
    c = r["candidate"]
    pools = " + ".join(f"{p['count']}×TP{p['tp']}" + (f" DP{p['dp']}" if p.get("dp", 1) > 1 else "")
                       + (" EP" if p.get("ep") else "") for p in c["pools"])
    if r.get("kind") not in _BY_FORMAT:
        return f"{c['mode']} {pools}"
    w = c.get("weights") or "checkpoint weights"
    kv = f"{c['kv_cache']} KV" if c.get("kv_cache") else "default KV"
    return f"{c['mode']} {pools}, {w}, {kv}"


def families(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The pruned and stopped candidates grouped by why and by family (mode, pools,
    formats for memory): ``[{"fate", "kind", "family", "candidates", "reason"}]`` in order
    of first appearance, ``reason`` the first candidate's (the others' differ in their
    batch limits or formats)."""
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in results:
        if r.get("fate") not in ("pruned", "stopped"):
            continue
        k = (r["fate"], r.get("kind") or "", _family(r))
        g = groups.get(k)
        if g is None:
            groups[k] = g = {"fate": k[0], "kind": k[1], "family": k[2], "candidates": 0, "reason": r.get("reason")}
        g["candidates"] += 1
    return list(groups.values())
