"""Sweep a replay over a grid of spec values, in parallel.

>>> import aisimulate
>>> df = aisimulate.sweep("examples/quickstart.yaml",
...                       {"engine.workers.aggregated.count": [1, 2, 4],
...                        "traffic.load.concurrency": [16, 64]})
>>> df[["engine.workers.aggregated.count", "traffic.load.concurrency", "ttft_ms.p50", "gpu_hours"]]

Each point is the base spec with the grid's dotted fields set; points run in separate
processes (``spawn``: the Go runtime must not be forked), at most ``jobs`` at a time.
"""

from __future__ import annotations

import copy
import itertools
import multiprocessing as mp
import os
from typing import Any, Mapping, Sequence

from .config import Spec, load_config, set_field
from .errors import ConfigError

__all__ = ["sweep", "SUMMARY_COLUMNS"]

#: Summary values each sweep row carries (latency stats flattened as ``metric.stat``).
SUMMARY_COLUMNS: tuple[str, ...] = (
    "completed", "rejected", "failed", "canceled", "duration_ms", "request_throughput_rps",
    "output_token_throughput_tps", "gpu_hours",
    "ttft_ms.mean", "ttft_ms.p50", "ttft_ms.p90", "ttft_ms.p99",
    "tpot_ms.mean", "tpot_ms.p50", "tpot_ms.p90", "tpot_ms.p99",
    "itl_ms.mean", "itl_ms.p99", "e2e_ms.mean", "e2e_ms.p90", "total_cached_tokens",
)


def _flatten(summary: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for col in SUMMARY_COLUMNS:
        metric, _, stat = col.partition(".")
        v = summary.get(metric)
        out[col] = (v or {}).get(stat) if stat else v
    return out


def _point(spec_data: dict) -> dict[str, Any]:
    from . import replay  # in the worker process

    return _flatten(replay(spec_data).summary)


def sweep(base: str | os.PathLike[str] | Mapping[str, Any] | Spec,
          grid: Mapping[str, Sequence[Any]], *, jobs: int | None = None):  # -> pandas.DataFrame
    """Replay every point of ``grid`` (dotted spec field → values; the cartesian product)
    on top of ``base`` and return one row per point: the grid's values, then
    :data:`SUMMARY_COLUMNS` (ms, requests/s, tokens/s, GPU hours, cached prompt tokens).

    Every point is compiled (validated) before any runs, so a bad value fails fast.

    Raises:
        ConfigError: a grid field or value is invalid (``.field`` names it).
        SimulationError, DataError: from a point's replay.
        ImportError: pandas is not installed.
    """
    import pandas as pd

    base_spec = load_config(base)
    keys = list(grid)
    if not keys:
        raise ConfigError("", "the sweep grid is empty")
    points = []
    for values in itertools.product(*(list(grid[k]) for k in keys)):
        data = copy.deepcopy(base_spec.data)
        for k, v in zip(keys, values):
            set_field(data, k, v)
        points.append((dict(zip(keys, values)), load_config(data).data))
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(points)))
    if jobs == 1:
        results = [_point(d) for _, d in points]
    else:
        with mp.get_context("spawn").Pool(jobs) as pool:
            results = pool.map(_point, [d for _, d in points])
    return pd.DataFrame([{**p, **r} for (p, _), r in zip(points, results)])
