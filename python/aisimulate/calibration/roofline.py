"""Fit the roofline's efficiency factors and per-pass overhead to measured serving rows.

The roofline (``core/perf/roofline.go``) prices every op as
``max(FLOPs / (peak · e_c), bytes / (HBM · e_m))`` and adds ``pass_overhead_us`` per pass.
:func:`fit_roofline` chooses ``(e_c, e_m, pass_overhead_us)`` that minimise

    L = mean over rows of  [ln(pred_TTFT / meas_TTFT)² + ln(pred_TPOT / meas_TPOT)²]

where the predictions are full closed-loop replays of each silicon row, exactly as the
accuracy harness runs them (:mod:`aisimulate.accuracy`). Log errors weigh a row's
relative error, so short and long rows count alike. The search is Nelder–Mead on
``(e_c, e_m, overhead/1000 µs)``, clipped to ``e ∈ [0.05, 1]``, overhead ∈ [0, 5000] µs.

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

__all__ = ["FIT_FILE", "RooflineFit", "fit_roofline", "fitted", "roofline_loss"]

#: The stored fit (JSON) with its provenance.
FIT_FILE = Path(__file__).with_name("roofline_fit.json")

_LO = np.array([0.05, 0.05, 0.0])
_HI = np.array([1.0, 1.0, 5.0])  # overhead in ms (scaled so the simplex is round)


@dataclass(frozen=True)
class RooflineFit:
    """A fitted roofline parameter set.

    Attributes:
        compute_efficiency: e_c, fraction of peak FLOP/s, (0, 1].
        memory_efficiency: e_m, fraction of HBM bandwidth, (0, 1].
        pass_overhead_us: fixed cost per pass, µs.
        loss: the fitted L (see module docstring), dimensionless.
        rows: silicon rows used.
        evaluations: loss evaluations the search made.
    """
    compute_efficiency: float
    memory_efficiency: float
    pass_overhead_us: float
    loss: float
    rows: int
    evaluations: int

    def perf_spec(self) -> dict[str, float]:
        """The ``engine.perf`` fields of a roofline spec with these values."""
        return {"compute_efficiency": round(self.compute_efficiency, 4),
                "memory_efficiency": round(self.memory_efficiency, 4),
                "pass_overhead_us": round(self.pass_overhead_us, 1)}


def fitted(path: str | os.PathLike[str] = FIT_FILE) -> dict[str, Any]:
    """The stored fit: ``{"params": {...}, "provenance": {...}}``."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _params(x: np.ndarray) -> dict[str, float]:
    x = np.clip(x, _LO, _HI)
    return {"compute_efficiency": float(x[0]), "memory_efficiency": float(x[1]),
            "pass_overhead_us": float(x[2] * 1000)}


def roofline_loss(rows: Sequence[dict[str, str]], params: dict[str, float], *,
                  aliases: dict[str, str], jobs: int = 1, **kw: Any) -> float:
    """L of the module docstring for one parameter set (rows that cannot be simulated
    are left out; ValueError when none can)."""
    from .. import accuracy
    res = accuracy.evaluate(rows, perf="roofline", aliases=aliases, jobs=jobs,
                            perf_overrides=params, **kw)
    errs = [math.log(r.predicted_ttft_ms / r.silicon_ttft_ms) ** 2
            + math.log(r.predicted_tpot_ms / r.silicon_tpot_ms) ** 2
            for r in res if r.status == "ok" and r.predicted_tpot_ms > 0 and r.predicted_ttft_ms > 0]
    if not errs:
        raise ValueError("no silicon row could be simulated")
    return sum(errs) / len(errs)


def _nelder_mead(f: Callable[[np.ndarray], float], x0: np.ndarray, step: np.ndarray,
                 max_evals: int, tol: float) -> tuple[np.ndarray, float, int]:
    """Minimise f from x0 (standard reflection/expansion/contraction/shrink
    coefficients 1, 2, 0.5, 0.5); stops when the simplex's loss spread < tol or after
    max_evals evaluations. Deterministic."""
    n = len(x0)
    pts = [x0] + [x0 + np.eye(n)[i] * step[i] for i in range(n)]
    vals = [f(p) for p in pts]
    evals = len(pts)
    while evals < max_evals:
        order = np.argsort(vals, kind="stable")
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        if vals[-1] - vals[0] < tol:
            break
        centroid = np.mean(pts[:-1], axis=0)
        xr = centroid + (centroid - pts[-1])
        fr = f(xr)
        evals += 1
        if fr < vals[0]:
            xe = centroid + 2 * (centroid - pts[-1])
            fe = f(xe)
            evals += 1
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = centroid + 0.5 * (pts[-1] - centroid)
            fc = f(xc)
            evals += 1
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                for i in range(1, n + 1):
                    pts[i] = pts[0] + 0.5 * (pts[i] - pts[0])
                    vals[i] = f(pts[i])
                    evals += 1
    i = int(np.argmin(vals))
    return pts[i], vals[i], evals


def fit_roofline(rows: Sequence[dict[str, str]], *, aliases: dict[str, str],
                 start: dict[str, float] | None = None, max_evals: int = 120,
                 tol: float = 1e-5, jobs: int = 1, **kw: Any) -> RooflineFit:
    """Fit ``(compute_efficiency, memory_efficiency, pass_overhead_us)`` to silicon rows.

    Args:
        rows: silicon rows (:func:`aisimulate.accuracy.read_silicon`).
        aliases: ``model_path`` → config file (:func:`aisimulate.accuracy.load_aliases`).
        start: starting values (default: the roofline defaults 0.7, 0.8, 500 µs).
        max_evals: most loss evaluations (each replays every row).
        tol: stop when the simplex's losses differ by less than this.
        jobs: processes per evaluation.
        **kw: ``model_configs`` / ``database`` for :func:`aisimulate.accuracy.evaluate`.

    Raises:
        ValueError: no row can be simulated.
    """
    s = start or {"compute_efficiency": 0.7, "memory_efficiency": 0.8, "pass_overhead_us": 500.0}
    x0 = np.array([s["compute_efficiency"], s["memory_efficiency"], s["pass_overhead_us"] / 1000])
    cache: dict[tuple[float, ...], float] = {}

    def f(x: np.ndarray) -> float:
        p = _params(x)
        key = tuple(round(v, 9) for v in p.values())
        if key not in cache:
            # outside the box: the clipped loss plus a penalty that points back inside
            cache[key] = roofline_loss(rows, p, aliases=aliases, jobs=jobs, **kw)
        return cache[key] + float(np.sum((x - np.clip(x, _LO, _HI)) ** 2))

    x, loss, evals = _nelder_mead(f, x0, np.array([0.1, 0.1, 0.2]), max_evals, tol)
    p = _params(x)
    n_ok = len(rows)
    return RooflineFit(p["compute_efficiency"], p["memory_efficiency"], p["pass_overhead_us"],
                       float(loss), n_ok, evals)


def write_fit(fit: RooflineFit, path: str | os.PathLike[str], provenance: dict[str, Any]) -> None:
    """Store ``fit`` with its provenance as JSON."""
    data = {"params": fit.perf_spec(), "fit": asdict(fit), "provenance": provenance}
    Path(path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
