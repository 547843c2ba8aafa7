"""The search's answer from its candidates' results: the Pareto front, the recommended
deployment, the pruned and stopped families. Pure functions of the results (dicts as
the core writes them, ``core/search/run.go`` ``Result``), so that a resumed or
distributed search gives the same answer as one run at once."""

from __future__ import annotations

import math
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable, Sequence

__all__ = ["front", "best", "families", "throughput_per_gpu", "cost_per_million", "leader", "dominated"]


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


def leader(results: Iterable[Mapping[str, Any]], below: int) -> Mapping[str, Any] | None:
    """Of the candidates of fewer than ``below`` GPUs that met the SLO, the one with the
    most output tokens/s per GPU (the first enumerated of equals), or ``None``."""
    ok = [r for r in results if r.get("meets") is True and r["gpus"] < below and _point(r) is not None]
    return max(ok, key=lambda r: (throughput_per_gpu(r), -r["index"])) if ok else None


def dominated(gpus: int, offer: Mapping[str, Any], lead: Mapping[str, Any]) -> str | None:
    """Why a candidate of ``gpus`` GPUs cannot be recommended, or ``None`` when it may be:
    a deployment of g GPUs that meets the SLO reports at most ``offer["max_output_tps"]``
    / g output tokens/s per GPU (``core/search/bounds.go`` ``maxOutputTPS``), and when that
    is below ``1 - TIE`` times the throughput of ``lead`` (which met the SLO on fewer
    GPUs), :func:`best` cannot pick it. Such a candidate is pruned (kind ``dominated``,
    its verdict unknown) once it is known to start, instead of replayed."""
    bound = offer.get("max_output_tps")
    x = throughput_per_gpu(lead)
    if not bound or x is None or bound / gpus >= (1 - TIE) * x:
        return None
    return (f"at most {bound / gpus:,.1f} output tok/s per GPU on {gpus} GPUs (the load's output tokens over "
            f"{offer['max_output_tps_span_s']:,.1f} s, the shortest span of the "
            f"{offer['max_output_tps_requests']:,} sends the SLO needs completed), below "
            f"{100 * (1 - TIE):g} % of the {x:,.1f} of {lead['key']} ({lead['gpus']} GPUs), which met it: "
            "it cannot be recommended")


#: The prunes whose verdict the formats decide as much as the layout (what fits in memory).
_BY_FORMAT = ("memory", "kv_cache")


def _pool(p: Mapping[str, Any]) -> str:
    return f"TP{p['tp']}" + (f" DP{p['dp']}" if p.get("dp", 1) > 1 else "") + (" EP" if p.get("ep") else "")


def _family(r: Mapping[str, Any]) -> tuple[str, tuple[int, ...]]:
    """The family a pruned or stopped candidate belongs to and its worker counts: its
    mode and one worker of each pool (the counts apart: memory and the start-up KV check
    are one worker's, and a family's line lists the counts it covers), for a memory or
    KV prune its formats too, for a stopped candidate the metric certain to miss (the
    batch limits left out: a family is what a prune says about a layout); the dominated
    are one family per GPU count."""
    c = r["candidate"]
    kind = r.get("kind")
    if kind == "dominated":
        return f"every candidate of {r['gpus']} GPUs", ()
    name = f"{c['mode']} " + " + ".join(_pool(p) for p in c["pools"])
    if kind in _BY_FORMAT:
        w = c.get("weights") or "checkpoint weights"
        kv = f"{c['kv_cache']} KV" if c.get("kv_cache") else "default KV"
        name = f"{name}, {w}, {kv}"
    elif r.get("fate") == "stopped":
        metric = (r.get("reason") or "").split(" ", 1)[0]
        if metric:
            name = f"{name}, {metric}"
    return name, tuple(p["count"] for p in c["pools"])


def _counts_text(counts: Sequence[tuple[int, ...]]) -> str:
    """The worker counts of a family's candidates: ``1–4, 6 workers`` (one pool) or
    ``1+1, 2+1 workers`` (prefill + decode; past six splits their number, the first and
    the last)."""
    if all(len(c) == 1 for c in counts):
        xs, runs = sorted({c[0] for c in counts}), []
        for x in xs:
            if runs and x == runs[-1][1] + 1:
                runs[-1][1] = x
            else:
                runs.append([x, x])
        text = ", ".join(f"{a}" if a == b else f"{a}\u2013{b}" for a, b in runs)
        return f"{text} worker{'' if xs == [1] else 's'}"
    splits = ["+".join(map(str, c)) for c in sorted(set(counts))]
    if len(splits) > 6:
        return f"{len(splits)} splits, {splits[0]} \u2026 {splits[-1]} workers"
    return ", ".join(splits) + " workers"


def families(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The pruned and stopped candidates grouped by why and by family (mode, one worker
    of each pool; formats for memory; the metric for a stop): ``[{"fate", "kind",
    "family", "workers", "candidates", "reason"}]`` in order of first appearance,
    ``workers`` the text of the worker counts the family's candidates have (empty for
    the dominated, grouped by their GPU count), ``reason``
    the first candidate's (the others differ in their counts, batch limits or formats)."""
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    counts: dict[tuple[str, str, str], list[tuple[int, ...]]] = {}
    for r in results:
        if r.get("fate") not in ("pruned", "stopped"):
            continue
        name, n = _family(r)
        k = (r["fate"], r.get("kind") or "", name)
        if k not in groups:
            groups[k] = {"fate": k[0], "kind": k[1], "family": name, "workers": "", "candidates": 0,
                         "reason": r.get("reason")}
            counts[k] = []
        groups[k]["candidates"] += 1
        counts[k].append(n)
    for k, g in groups.items():
        g["workers"] = _counts_text(counts[k]) if k[1] != "dominated" else ""
    return list(groups.values())
