"""aisimulate.sweep: the grid's cartesian product, summaries flattened, bad values caught early."""

from __future__ import annotations

import pytest

import aisimulate
from aisimulate import ConfigError


def test_sweep_grid_and_monotone_ttft(base_spec):
    base_spec["traffic"]["source"]["num_requests"] = 40
    base_spec["traffic"]["load"] = {"mode": "concurrency", "concurrency": 4}
    df = aisimulate.sweep(base_spec, {"engine.workers.aggregated.count": [1, 2],
                                      "traffic.load.concurrency": [1, 4]}, jobs=2)
    assert len(df) == 4
    assert list(df.columns[:2]) == ["engine.workers.aggregated.count", "traffic.load.concurrency"]
    assert (df["completed"] == 40).all()
    # each point equals its own replay run directly
    spec = dict(base_spec)
    spec["engine"] = dict(base_spec["engine"], workers={"aggregated": {"count": 2}})
    spec["traffic"] = dict(base_spec["traffic"], load={"mode": "concurrency", "concurrency": 4})
    direct = aisimulate.replay(spec).summary
    row = df[(df["engine.workers.aggregated.count"] == 2) & (df["traffic.load.concurrency"] == 4)].iloc[0]
    assert row["ttft_ms.p50"] == direct["ttft_ms"]["p50"]
    assert row["gpu_hours"] == direct["gpu_hours"]


def test_sweep_rejects_a_bad_value_before_running(base_spec):
    with pytest.raises(ConfigError) as e:
        aisimulate.sweep(base_spec, {"engine.scheduler.max_num_seqs": [4, 0]})
    assert e.value.field == "engine.scheduler.max_num_seqs"
