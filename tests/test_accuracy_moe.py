"""The accuracy harness on mixture-of-experts rows: the parallel layout a row states
becomes vLLM's data_parallel_size and enable_expert_parallel, layouts vLLM cannot run
are skipped with the reason."""

from __future__ import annotations

import pytest

from aisimulate.tools import accuracy

CONFIGS = accuracy.DEFAULT_MODEL_CONFIGS
QWEN = CONFIGS / "Qwen--Qwen3-235B-A22B-FP8_config.json"
MINIMAX = CONFIGS / "MiniMaxAI--MiniMax-M2.5_config.json"
DENSE = CONFIGS / "Qwen--Qwen3-32B_config.json"

pytestmark = pytest.mark.skipif(not QWEN.is_file(), reason="shared model configs not found")


def _row(tp: int, moe_tp: str, moe_ep: str, adp: str = "") -> dict[str, str]:
    return {"tp_size": str(tp), "moe_tp_size": moe_tp, "moe_ep_size": moe_ep, "attention_dp_size": adp}


@pytest.mark.parametrize("row, want", [
    # tp 1 × dp 2 = moe_tp 2: DP attention, tensor-parallel experts over both GPUs
    (_row(1, "2", "1"), (2, False, "")),
    (_row(1, "4", "1"), (4, False, "")),
    # tp 2, moe_ep 2: expert parallel, no DP
    (_row(2, "1", "2"), (1, True, "")),
    (_row(4, "1", "4"), (1, True, "")),
    (_row(2, "4", "1"), (2, False, "")),
    (_row(4, "4", "1", "1"), (1, False, "")),
])
def test_row_layout(row, want):
    assert accuracy.row_layout(row, str(QWEN)) == want


def test_row_layout_block_fp8_refused_by_vllm_runs_expert_parallel():
    # MiniMax-M2.5: 1536 expert columns / 8 = 192, not a multiple of the 128-wide block
    dp, ep, note = accuracy.row_layout(_row(8, "8", "1"), str(MINIMAX))
    assert (dp, ep) == (1, True)
    assert "1536/8" in note and "expert parallel" in note
    # at moe_tp 4 (384 = 3 × 128) the row runs as stated
    assert accuracy.row_layout(_row(4, "4", "1"), str(MINIMAX)) == (1, False, "")
    assert accuracy.layout_text(8, 1, True) == "TP8 EP8"
    assert accuracy.layout_text(1, 2, False) == "TP1 DP2"


@pytest.mark.parametrize("row, match", [
    (_row(4, "2", "2"), "not both"),
    (_row(4, "2", "1"), "not a multiple of tp_size 4"),
    (_row(2, "4", "1", "1"), r"tp_size 2 × attention_dp_size 1 ≠ moe_tp_size 4 × moe_ep_size 1"),
])
def test_row_layout_vllm_cannot_run(row, match):
    with pytest.raises(ValueError, match=match):
        accuracy.row_layout(row, str(QWEN))


def test_dense_rows_ignore_moe_columns():
    # the dense CSVs carry moe_tp 1 / moe_ep 1 (or 0) at any tp
    assert accuracy.row_layout(_row(4, "1", "1"), str(DENSE)) == (1, False, "")
    assert accuracy.row_layout(_row(2, "0", "0", "2"), str(DENSE)) == (2, False, "")


def test_moe_row_spec_and_skip_reason():
    base = {"id": "r", "model_path": "Qwen/Qwen3-235B-A22B-FP8", "system": "h200_sxm", "isl": "1000",
            "osl": "100", "batch_size": "8", "precision": "fp8", "backend_version": "0.12.0",
            "silicon_ttft_ms": "300", "silicon_tpot_ms": "50"}
    spec, _, _ = accuracy.row_spec(dict(base, **_row(1, "2", "1")), perf="roofline", aliases={},
                                   model_configs=CONFIGS, database=accuracy.DEFAULT_DATABASE)
    # vLLM 0.12.0's one API server (--api-server-count defaulted to 1 before 0.15.0)
    assert spec["engine"]["workers"]["aggregated"] == {"count": 1, "tp": 1, "data_parallel_size": 2,
                                                       "api_server_count": 1}
    spec, _, _ = accuracy.row_spec(dict(base, backend_version="0.15.0", **_row(1, "2", "1")), perf="roofline",
                                   aliases={}, model_configs=CONFIGS, database=accuracy.DEFAULT_DATABASE)
    assert spec["engine"]["workers"]["aggregated"]["api_server_count"] == 2  # one per rank from 0.15.0
    spec, _, _ = accuracy.row_spec(dict(base, **_row(2, "2", "1")), perf="roofline", aliases={},
                                   model_configs=CONFIGS, database=accuracy.DEFAULT_DATABASE)
    assert "api_server_count" not in spec["engine"]["workers"]["aggregated"]  # no data parallelism
    res = accuracy.run_row(dict(base, **_row(4, "2", "2")), "roofline", {}, str(CONFIGS), str(accuracy.DEFAULT_DATABASE))
    assert res.status == "skipped" and "not both" in res.reason


@pytest.mark.parametrize("name, want", [
    ("Qwen--Qwen3-235B-A22B-FP8_config.json", True),        # num_experts
    ("MiniMaxAI--MiniMax-M2.5_config.json", True),          # num_local_experts
    ("deepseek-ai--DeepSeek-V4-Pro_config.json", True),     # n_routed_experts
    ("nvidia--GLM-5-NVFP4_config.json", True),              # n_routed_experts
    ("Qwen--Qwen3-32B_config.json", False),
])
def test_is_moe_reads_every_familys_expert_count(name: str, want: bool) -> None:
    """A recipe's --enable-expert-parallel applies to a mixture of experts whatever its
    family calls the expert count (DeepSeek's was missed: the flag was dropped)."""
    from aisimulate.tools.accuracy.spec import _is_moe
    path = CONFIGS / name
    if not path.is_file():
        pytest.skip(f"{name} not in the shared model configs")
    assert _is_moe(path) is want
