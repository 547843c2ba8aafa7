"""A search's answer as text (:meth:`SearchResult.table`)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from . import SearchResult

_DASH = "\u2014"


def _f(v, digits: int = 1) -> str:
    return _DASH if v is None else f"{v:,.{digits}f}"


def render(res: SearchResult, front_rows: int = 10) -> str:
    c, slo, off = res.counts, res.slo, res.offer
    p = f"p{slo['percentile']:g}"
    bounds = ", ".join(f"{k} {p} \u2264 {slo[k]:g}" for k in ("ttft_ms", "tpot_ms", "e2e_ms") if slo.get(k))
    gpus = res.space["gpus"]
    lines = [" aisimulate search ".center(88, "="),
             f"GPUs {gpus[0]}\u2013{gpus[-1]} (counts {', '.join(map(str, gpus)) if len(gpus) <= 8 else 'all'}), "
             f"modes {', '.join(res.space['modes'])}; SLO {bounds}",
             f"load: {off['requests']:,} requests, mean {off['mean_isl']:,.0f} in / {off['mean_osl']:,.0f} out tokens"
             + (f" over {off['span_s']:,.1f} s" if off.get("span_s") else ""),
             f"candidates {c['candidates']:,}: simulated {c['simulated']:,} (met the SLO {c['met']:,}), "
             f"stopped early {c['stopped']:,}, pruned {c['pruned']:,}; {len(res.invalid)} invalid layout(s) "
             f"not enumerated; {res.elapsed_s:.1f} s"
             + (f", {res.resumed:,} resumed from the journal" if res.resumed else "")]
    b = res.best
    if b is None and not c["candidates"]:  # nothing to simulate: the space was empty, not the SLO missed
        why = "every layout asked for is invalid (below)" if res.invalid else "the space asked for is empty"
        lines += ["", f"no candidate to search: {why}."]
    elif b is None:
        lines += ["", "no candidate met the SLO."]
    else:
        r = b.result
        s = r.get("summary") or {}
        pct = ", ".join(f"{k} {p} {_f(v, 2)}" for k, v in (r.get("percentiles") or {}).items())
        cost = ""
        if res.price_per_gpu_hour is not None:
            from ._front import cost_per_million

            cost = f", {_f(cost_per_million(r, res.price_per_gpu_hour), 3)} per million output tokens"
        lines += ["", f"best: {b.key} ({b.gpus} GPU{'' if b.gpus == 1 else 's'})",
                  f"  {_f(r.get('output_tps_per_gpu'))} output tok/s per GPU "
                  f"({_f(s.get('output_token_throughput_tps'))} in all), {pct}; SLO ratio {_f(r.get('slo_ratio'), 3)}{cost}"]
        lines += ["  " + line for line in b.command.splitlines()]
    if res.front:
        lines += ["", f"Pareto front (output tok/s per GPU against the SLO ratio; \u2264 1 meets), "
                      f"{len(res.front)} point(s):"]
        for r in res.front[:front_rows]:
            mark = "meets" if r.get("meets") else "misses"
            lines.append(f"  {_f(r.get('output_tps_per_gpu')):>10}  ratio {_f(r.get('slo_ratio'), 3):>7}  {mark:6}  {r['key']}")
        if len(res.front) > front_rows:
            lines.append(f"  \u2026 {len(res.front) - front_rows} more")
    fam = res.families()
    if fam:
        lines += ["", "pruned and stopped, by family:"]
        for g in fam:
            workers = f" ({g['workers']})" if g["workers"] else ""
            lines.append(f"  {g['fate']} ({g['kind']}) {g['candidates']:>4} \u00d7 {g['family']}{workers}: {g['reason']}")
    for inv in res.invalid:
        lo = inv["layout"]
        lines.append(f"  invalid TP{lo['tp']}" + (f" DP{lo['dp']}" if lo.get("dp", 1) > 1 else "")
                     + (" EP" if lo.get("ep") else "") + f": {inv['reason']}")
    return "\n".join(lines)
