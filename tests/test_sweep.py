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


def test_sweep_over_dataset_entries_shows_cached_tokens(base_spec):
    # One client, 12 requests of one fixed prompt length: with E dataset entries the
    # first E requests compute their prompts and the other 12 − E find them cached.
    src = base_spec["traffic"]["source"]
    src.update(num_requests=12, isl=1000, osl=4)
    base_spec["traffic"]["load"] = {"mode": "concurrency", "concurrency": 1}
    df = aisimulate.sweep(base_spec, {"traffic.source.dataset.entries": [1, 3, 12]}, jobs=1)
    per_hit = 62 * 16  # 1000 tokens: 62 full blocks of 16
    assert list(df["total_cached_tokens"]) == [11 * per_hit, 9 * per_hit, 0]


@pytest.mark.parametrize("source, field, message", [
    ({"dataset": {"entries": 0}}, "traffic.source.dataset.entries", "must be ≥ 1"),
    ({"dataset": {"entries": 4, "sampling": "zipf"}}, "traffic.source.dataset.sampling", "not supported"),
    ({"dataset": [4]}, "traffic.source.dataset", "expected a mapping"),
])
def test_dataset_errors_name_the_field(base_spec, source, field, message):
    base_spec["traffic"]["source"].update(source)
    with pytest.raises(ConfigError) as e:
        aisimulate.replay(base_spec)
    assert e.value.field == field and message in str(e.value)
