"""Why a search recommends nothing (:meth:`SearchResult.unmet`): the SLO bounds no
candidate met, from the candidates' results (``core/search/run.go`` ``Result``)."""

from __future__ import annotations

import math

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping, Sequence

#: The bounded metrics, in the order the SLO lists them.
METRICS = ("ttft_ms", "tpot_ms", "e2e_ms")


def _value(r: Mapping[str, Any], m: str) -> float | None:
    v = (r.get("percentiles") or {}).get(m)
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def unmet(results: Sequence[Mapping[str, Any]], slo: Mapping[str, Any], invalid: int = 0) -> str:
    """One sentence on why no candidate met the SLO, or ``""`` when one did.

    Each bound no candidate replayed to its end met is named with the lowest value a
    replay reached and the early stops certain to miss it (a stopped candidate's reason
    starts with its metric); when every bound was met by some candidate, none met all of
    them at once; with no candidate replayed to its end, the prunes and stops are
    counted by kind (``core/search/bounds.go``)."""
    if any(r.get("meets") for r in results):
        return ""
    if not results:
        return "no candidate to search: " + ("every layout asked for is invalid" if invalid
                                             else "the space asked for is empty")
    p = f"p{slo['percentile']:g}"
    bounds = {m: float(slo[m]) for m in METRICS if slo.get(m)}

    def bound(m: str) -> str:
        return f"{m} {p} \u2264 {bounds[m]:g} ms"

    def stopped_on(r: Mapping[str, Any]) -> str | None:
        m = (r.get("reason") or "").split(" ", 1)[0]
        return m if r.get("fate") == "stopped" and m in bounds else None

    simulated = [r for r in results if r.get("fate") == "simulated"]
    if not simulated:
        kinds: dict[str, int] = {}
        for r in results:
            m = stopped_on(r)
            k = f"stopped early, certain to miss {bound(m)}" if m else f"{r.get('fate')} ({r.get('kind') or '?'})"
            kinds[k] = kinds.get(k, 0) + 1
        return "no candidate was replayed to its end: " + ", ".join(f"{n} {k}" for k, n in kinds.items())
    parts = []
    for m in bounds:
        values = [v for r in simulated if (v := _value(r, m)) is not None]
        if any(v <= bounds[m] for v in values):
            continue
        seen = [f"the lowest of {len(simulated)} replayed {min(values):,.2f} ms" if values
                else f"each of {len(simulated)} replayed reached it with requests that did not complete"]
        if stops := sum(1 for r in results if stopped_on(r) == m):
            seen.append(f"{stops} stopped early certain to miss it")
        parts.append(f"{bound(m)} ({'; '.join(seen)})")
    if parts:
        return "no candidate met " + ", nor ".join(parts)
    return f"each bound was met by some candidate, none met {' and '.join(map(bound, bounds))} at once"
