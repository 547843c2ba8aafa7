"""The accuracy harness's P/D reader (aisimulate.tools.accuracy.disagg), shared by every
backend: AIConfigurator's vLLM P/D rows through it."""

from __future__ import annotations

import pytest

from aisimulate.tools import accuracy
from aisimulate.tools.accuracy import disagg, spec

SILICON = accuracy.SHARED_DATA / "silicon" / "vllm_disagg_dev.csv"
ALIASES = accuracy.SHARED_DATA / "silicon" / "model_aliases.csv"

pytestmark = pytest.mark.skipif(not SILICON.is_file(), reason="shared silicon data not found")


def _row(suffix: str) -> dict[str, str]:
    return next(r for r in accuracy.read_silicon(SILICON) if r["id"].endswith(suffix))


def test_sides_of_a_vllm_pd_row():
    """Qwen3-235B-A22B-FP8: 1 prefill server of 4 DP ranks of TP1 (MoE columns 0: not
    recorded, so its experts split by TP), 3 decode servers of TP4 with batch 24; AIPerf's
    concurrency is 3 × 24."""
    row = _row("qwen3_235b_a22b_h100_sxm_vllm_disagg_4000x1000_c_tpnone_epnone_1")
    config = str(spec.model_config(row, accuracy.load_aliases(ALIASES), accuracy.DEFAULT_MODEL_CONFIGS))
    p, d = disagg.sides_of(row, config)
    assert (p.workers, p.tp, p.attention_dp, p.ep, p.gpus) == (1, 1, 4, False, 4)
    assert "records no MoE layout" in p.note
    assert (d.workers, d.tp, d.attention_dp, d.batch_size) == (3, 4, 1, 24)
    assert disagg.concurrency_of(row) == 72
    assert p.pool() == {"count": 1, "tp": 1, "placement": "least_outstanding", "data_parallel_size": 4}


def test_vllm_pd_row_is_simulated():
    """The AIPerf procedure on the two pools: one engine.scheduler holds the prefill
    server's token budget (ISL + 1500) and the decode server's batch (224); the KV over
    the system's network."""
    row = _row("qwen3_32b_qwen3_32b_h100_sxm_vllm_disagg_4000x1000_c_tp_epnone_2")
    aliases = accuracy.load_aliases(ALIASES)
    sp, _, measured = accuracy.row_spec(row, perf="aic", aliases=aliases, model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
                                          database=accuracy.DEFAULT_DATABASE)
    d = sp["engine"]["workers"]["disaggregated"]
    assert (d["prefill"]["count"], d["prefill"]["tp"], d["decode"]["count"], d["decode"]["tp"]) == (8, 1, 2, 4)
    assert d["kv_transfer"] == {}
    sched = sp["engine"]["scheduler"]
    assert (sched["max_num_seqs"], sched["max_num_batched_tokens"]) == (224, 5500)
    assert measured == 20 * 448
    res = accuracy.run_row(row, "aic", aliases, str(accuracy.DEFAULT_MODEL_CONFIGS), str(accuracy.DEFAULT_DATABASE))
    assert res.status == "ok", res.reason
    assert res.layout == "P/D 8×TP1 + 2×TP4" and res.tp == 4 and res.concurrency == 448


def test_a_pd_row_without_worker_counts_is_skipped_with_the_column():
    row = dict(_row("qwen3_32b_qwen3_32b_h100_sxm_vllm_disagg_4000x1000_c_tp_epnone_2"), prefill_num_workers="")
    with pytest.raises(ValueError, match="prefill_num_workers is empty"):
        disagg.sides_of(row, "unused")
