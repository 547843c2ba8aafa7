"""DeepSeek-V4 end to end: DeepSeek-V4-Flash-NVFP4 on 8 × B200 as InferenceX's vLLM
recipe launches it (TP 8; or data-parallel attention: TP 1 × DP 8 with expert
parallelism), priced by the roofline and from the vLLM 0.24.0 tables."""

from __future__ import annotations

from pathlib import Path

import pytest

import aisimulate

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "aic"
pytestmark = pytest.mark.skipif(not (SHARED / "systems").is_dir(), reason="shared aic data not found")


def _spec(perf: dict, workers: dict) -> dict:
    return {
        "engine": {"model": "nvidia/DeepSeek-V4-Flash-NVFP4", "model_config_dir": str(SHARED / "model_configs"),
                   "system": "b200_sxm", "perf": perf, "workers": {"aggregated": workers},
                   "scheduler": {"max_num_batched_tokens": 2048, "max_model_len": 2248, "block_size": 256,
                                 "enable_prefix_caching": False},
                   "quantization": {"kv_cache": "fp8"}},
        "traffic": {"source": {"type": "synthetic", "num_requests": 64, "isl": 1024, "osl": 64},
                    "load": {"mode": "concurrency", "concurrency": 32}},
        "execution": {"mode": "offline", "seed": 0},
    }


@pytest.mark.parametrize("perf", [{"source": "roofline"},
                                  {"source": "aic", "database": str(SHARED / "systems"), "backend_version": "0.24.0"}])
@pytest.mark.parametrize("workers", [{"count": 1, "tp": 8},
                                     {"count": 1, "tp": 1, "data_parallel_size": 8, "enable_expert_parallel": True}])
def test_flash_nvfp4_on_b200(perf, workers):
    rep = aisimulate.replay(_spec(perf, workers))
    assert all(r["status"] == "completed" for r in rep.requests) and len(rep.requests) == 64
    meta = rep.metadata
    # 21 CSA layers · (584 + 132) / 4 + 20 HCA layers · 584 / 128 = 3,850.25 → 3,851
    assert meta["kv_bytes_per_token"] == 3851
    assert meta["expert_dtype"] == "nvfp4" and meta["weight_dtype"] == "fp8_block"
    if perf["source"] == "aic":
        # the two window-only layers read the HCA module (a stand-in of each)
        fb = meta["perf_metadata"]["fallbacks"]
        assert fb["context_attention"] == 2 and fb["generation_attention"] == 2
