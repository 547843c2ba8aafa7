"""Fit the roofline's efficiency factors and per-pass overhead to measured serving rows.

The roofline (``core/perf/roofline.go``) prices every op as
``max(FLOPs / (peak · e_c), bytes / (HBM · e_m))``, adds ``layer_latency_us`` of fixed
kernel time per decoder layer, and ``pass_overhead_us`` per pass plus
``per_sequence_overhead_us`` per decode and per prefill chunk in the pass.
:func:`fit_roofline` chooses some of these five values (by default all but the layer
latency, which the kernel tables give) to minimise

    L = mean over rows of  [ln(pred_TTFT / meas_TTFT)² + ln(pred_TPOT / meas_TPOT)²]

where the predictions are full closed-loop replays of each silicon row, exactly as the
accuracy harness runs them (:mod:`aisimulate.tools.accuracy`). Log errors weigh a row's
relative error, so short and long rows count alike. The search is Nelder–Mead on
``(e_c, e_m, pass overhead / 1000 µs, per-sequence overhead / 100 µs, layer latency /
100 µs)``, clipped to ``e ∈ [0.05, 1]``, pass overhead ∈ [0, 5000] µs, per-sequence
overhead ∈ [0, 500] µs, layer latency ∈ [0, 500] µs.

The values fitted on ``../shared/data/silicon/vllm_dense_dev.csv`` are stored with their
provenance (data, command, date, loss) in ``roofline_fit.json`` beside this module;
:func:`fitted` returns them. Re-fit with::

    python scripts/calibrate_roofline.py --silicon ../shared/data/silicon/vllm_dense_dev.csv
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["DEFAULT_FREE", "FIT_FILE", "RooflineFit", "aic_priced_rows", "fit_roofline",
           "default_start", "fitted", "roofline_loss", "usable_rows"]

#: The stored fit (JSON) with its provenance.
FIT_FILE = Path(__file__).with_name("roofline_fit.json")

# (e_c, e_m, pass overhead in ms, per-sequence overhead in 100 µs, layer latency in
# 100 µs): scaled so the simplex is round
_NAMES = ("compute_efficiency", "memory_efficiency", "pass_overhead_us", "per_sequence_overhead_us",
          "layer_latency_us")
_SCALE = np.array([1.0, 1.0, 1000.0, 100.0, 100.0])
_LO = np.array([0.05, 0.05, 0.0, 0.0, 0.0])
_HI = np.array([1.0, 1.0, 5.0, 5.0, 5.0])


@dataclass(frozen=True)
class RooflineFit:
    """A fitted roofline parameter set.

    Attributes:
        compute_efficiency: e_c, fraction of peak FLOP/s, (0, 1].
        memory_efficiency: e_m, fraction of HBM bandwidth, (0, 1].
        pass_overhead_us: fixed cost per pass, µs.
        per_sequence_overhead_us: cost per decode and per prefill chunk in a pass, µs.
        layer_latency_us: fixed kernel time per decoder layer per pass, µs.
        loss: the fitted L (see module docstring), dimensionless.
        rows: silicon rows used (those the roofline can simulate).
        evaluations: loss evaluations the search made.
        skipped: the rows left out, each as "id: reason".
    """
    compute_efficiency: float
    memory_efficiency: float
    pass_overhead_us: float
    per_sequence_overhead_us: float
    layer_latency_us: float
    loss: float
    rows: int
    evaluations: int
    skipped: tuple[str, ...] = ()

    def perf_spec(self) -> dict[str, float]:
        """The ``engine.perf`` fields of a roofline spec with these values."""
        return {"compute_efficiency": round(self.compute_efficiency, 4),
                "memory_efficiency": round(self.memory_efficiency, 4),
                "pass_overhead_us": round(self.pass_overhead_us, 1),
                "per_sequence_overhead_us": round(self.per_sequence_overhead_us, 1),
                "layer_latency_us": round(self.layer_latency_us, 1)}


def fitted(path: str | os.PathLike[str] = FIT_FILE) -> dict[str, Any]:
    """The stored fit: ``{"params": {...}, "provenance": {...}}``."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _params(x: np.ndarray) -> dict[str, float]:
    x = np.clip(x, _LO, _HI) * _SCALE
    return {name: float(v) for name, v in zip(_NAMES, x)}


def roofline_loss(rows: Sequence[dict[str, str]], params: dict[str, float], *,
                  aliases: dict[str, str], jobs: int = 1, **kw: Any) -> float:
    """L of the module docstring for one parameter set (rows that cannot be simulated
    are left out; ValueError when none can)."""
    from . import accuracy
    res = accuracy.evaluate(rows, perf="roofline", aliases=aliases, jobs=jobs,
                            perf_overrides=params, **kw)
    errs = [math.log(r.predicted_ttft_ms / r.silicon_ttft_ms) ** 2
            + math.log(r.predicted_tpot_ms / r.silicon_tpot_ms) ** 2
            for r in res if r.status == "ok" and r.predicted_tpot_ms > 0 and r.predicted_ttft_ms > 0]
    if not errs:
        raise ValueError("no silicon row could be simulated")
    return sum(errs) / len(errs)


def usable_rows(rows: Sequence[dict[str, str]], *, aliases: dict[str, str], jobs: int = 1,
                params: dict[str, float] | None = None, **kw: Any) -> tuple[list[dict[str, str]], list[Any]]:
    """Split ``rows`` into those the roofline (with ``params``) can simulate and the
    results of the others (:class:`aisimulate.tools.accuracy.RowResult`, ``skipped`` with the
    reason), in input order.

    Raises:
        ValueError: no row can be simulated (the message gives the first reasons)."""
    from . import accuracy
    res = accuracy.evaluate(rows, perf="roofline", aliases=aliases, jobs=jobs, perf_overrides=params, **kw)
    return _split(rows, res, "no silicon row could be simulated")


def aic_priced_rows(rows: Sequence[dict[str, str]], *, aliases: dict[str, str], jobs: int = 1,
                    **kw: Any) -> tuple[list[dict[str, str]], list[Any]]:
    """The rows with ``silicon_ttft_ms`` / ``silicon_tpot_ms`` replaced by the ``aic``
    perf source's predictions for the same closed loops, and the results of the rows
    ``aic`` cannot price (``skipped``, with the reason). Fitting the roofline to these
    fits it to the measured kernel tables over the rows' batch shapes, without the
    serving measurements' own errors.

    Raises:
        ValueError: ``aic`` can price none of the rows."""
    from . import accuracy
    res = accuracy.evaluate(rows, perf="aic", aliases=aliases, jobs=jobs, **kw)
    priced = [dict(row, silicon_ttft_ms=repr(r.predicted_ttft_ms), silicon_tpot_ms=repr(r.predicted_tpot_ms))
              for row, r in zip(rows, res)]
    return _split(priced, res, "the aic perf source could price none of the rows")


def _split(rows: Sequence[dict[str, str]], results: Sequence[Any],
           none_ok: str) -> tuple[list[dict[str, str]], list[Any]]:
    """The rows whose result is ok and the results that are not; ValueError with
    ``none_ok`` and the first three reasons when no row is ok."""
    ok = [row for row, r in zip(rows, results) if r.status == "ok"]
    skipped = [r for r in results if r.status != "ok"]
    if not ok:
        raise ValueError(f"{none_ok} ({'; '.join(r.skip_line() for r in skipped[:3])})")
    return ok, skipped


class _OutOfBudget(Exception):
    """The search has made its allowed number of evaluations."""


def _nelder_mead(f: Callable[[np.ndarray], float], x0: np.ndarray, step: np.ndarray,
                 max_evals: int, tol: float) -> tuple[np.ndarray, float, int]:
    """Minimise f from x0 (standard reflection/expansion/contraction/shrink
    coefficients 1, 2, 0.5, 0.5); stops when the simplex's loss spread < tol or once
    max_evals evaluations are made (never more). Returns the best point seen, its
    value and the evaluations made. Deterministic."""
    best: list[Any] = [x0, math.inf]
    count = 0

    def g(x: np.ndarray) -> float:
        nonlocal count
        if count >= max_evals:
            raise _OutOfBudget
        count += 1
        v = f(x)
        if v < best[1]:
            best[0], best[1] = x, v
        return v

    n = len(x0)
    try:
        pts = [x0] + [x0 + np.eye(n)[i] * step[i] for i in range(n)]
        vals = [g(p) for p in pts]
        while True:
            order = np.argsort(vals, kind="stable")
            pts, vals = [pts[i] for i in order], [vals[i] for i in order]
            if vals[-1] - vals[0] < tol:
                break
            centroid = np.mean(pts[:-1], axis=0)
            xr = centroid + (centroid - pts[-1])
            fr = g(xr)
            if fr < vals[0]:
                xe = centroid + 2 * (centroid - pts[-1])
                fe = g(xe)
                pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
            elif fr < vals[-2]:
                pts[-1], vals[-1] = xr, fr
            else:
                xc = centroid + 0.5 * (pts[-1] - centroid)
                fc = g(xc)
                if fc < vals[-1]:
                    pts[-1], vals[-1] = xc, fc
                else:
                    for i in range(1, n + 1):
                        pts[i] = pts[0] + 0.5 * (pts[i] - pts[0])
                        vals[i] = g(pts[i])
    except _OutOfBudget:
        pass
    return best[0], best[1], count


def default_start() -> dict[str, float]:
    """The roofline's defaults, where a fit starts: the ``engine.perf`` of a spec that
    gives only ``source: roofline``, as the core fills it (core/config/defaults.go)."""
    import aisimulate
    spec = aisimulate.load_config({
        "engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm", "perf": {"source": "roofline"}},
        "traffic": {"source": {"type": "synthetic", "num_requests": 1, "isl": 1, "osl": 1},
                    "load": {"mode": "concurrency", "concurrency": 1}}})
    return {name: float(spec.data["engine"]["perf"][name]) for name in _NAMES}


#: The parameters :func:`fit_roofline` fits unless told otherwise. ``layer_latency_us``
#: is read off the kernel tables and held: with one model it is indistinguishable from
#: ``pass_overhead_us`` (both are per-pass constants).
DEFAULT_FREE = ("compute_efficiency", "memory_efficiency", "pass_overhead_us",
                "per_sequence_overhead_us")


def fit_roofline(rows: Sequence[dict[str, str]], *, aliases: dict[str, str],
                 start: dict[str, float] | None = None, free: Sequence[str] = DEFAULT_FREE,
                 max_evals: int = 120, tol: float = 1e-5, jobs: int = 1, **kw: Any) -> RooflineFit:
    """Fit the roofline parameters named in ``free`` to silicon rows; the others stay
    at their ``start`` values.

    Args:
        rows: silicon rows (:func:`aisimulate.tools.accuracy.read_silicon`).
        aliases: ``model_path`` → config file (:func:`aisimulate.tools.accuracy.load_aliases`).
        start: starting values by name (missing names: :func:`default_start`).
        free: names of the parameters to fit, a non-empty subset of
            ``compute_efficiency, memory_efficiency, pass_overhead_us,
            per_sequence_overhead_us, layer_latency_us``.
        max_evals: most loss evaluations (each replays every row).
        tol: stop when the simplex's losses differ by less than this.
        jobs: processes per evaluation.
        **kw: ``model_configs`` / ``database`` for :func:`aisimulate.tools.accuracy.evaluate`.

    Raises:
        ValueError: an unknown, repeated or empty ``free``, ``max_evals`` < 1, or no
            row can be simulated.
    """
    bad = [n for n in free if n not in _NAMES]
    if bad or not free or len(set(free)) != len(free):
        raise ValueError(f"free must name some of {', '.join(_NAMES)}, each once; got {list(free)}")
    if max_evals < 1:
        raise ValueError(f"max_evals must be ≥ 1, got {max_evals}")
    s = dict(default_start(), **(start or {}))
    rows, skipped = usable_rows(rows, aliases=aliases, jobs=jobs, params=s, **kw)
    base = np.array([s[n] for n in _NAMES]) / _SCALE
    idx = [_NAMES.index(n) for n in free]
    cache: dict[tuple[float, ...], float] = {}

    def full(y: np.ndarray) -> np.ndarray:
        x = base.copy()
        x[idx] = y
        return x

    def f(y: np.ndarray) -> float:
        x = full(y)
        p = _params(x)
        key = tuple(round(v, 9) for v in p.values())
        if key not in cache:
            # outside the box: the clipped loss plus a penalty that points back inside
            cache[key] = roofline_loss(rows, p, aliases=aliases, jobs=jobs, **kw)
        return cache[key] + float(np.sum((x - np.clip(x, _LO, _HI)) ** 2))

    steps = np.array([0.1, 0.1, 0.2, 0.2, 0.2])[idx]
    y, loss, evals = _nelder_mead(f, base[idx], steps, max_evals, tol)
    p = _params(full(y))
    return RooflineFit(**p, loss=float(loss), rows=len(rows), evaluations=evals,
                       skipped=tuple(r.skip_line() for r in skipped))


def write_fit(fit: RooflineFit, path: str | os.PathLike[str], provenance: dict[str, Any]) -> None:
    """Store ``fit`` with its provenance as JSON."""
    data = {"params": fit.perf_spec(), "fit": asdict(fit), "provenance": provenance}
    Path(path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
