"""The LLMServingSim runs (``real/llmservingsim``): vLLM 0.19.0, open loop, per request."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .runs import RealRun, async_default

#: (GPU folder, model folder) → (model config name, system, TP, note). The RTX PRO
#: 6000 Blackwell Server Edition has its own tables (rtx_pro_6000_server, vLLM 0.19.0);
#: the RTX 4090 has none, and l40s (the same AD102 die, 48 GB / 864 GB/s against
#: 24 GB / 1,008 GB/s) stands in, with vLLM's own KV block count of the run.
DEPLOYMENTS: dict[tuple[str, str], tuple[str, str, int, str]] = {
    ("RTX4090", "Llama-3.1-8B"): ("meta-llama/Meta-Llama-3.1-8B", "l40s", 1,
                                  "RTX 4090 priced with l40s tables (no 4090 system); KV blocks from the run"),
    ("RTXPRO6000", "Llama-3.1-8B"): ("meta-llama/Meta-Llama-3.1-8B", "rtx_pro_6000_server", 1, ""),
    ("RTXPRO6000", "Qwen3-32B"): ("Qwen/Qwen3-32B", "rtx_pro_6000_server", 2, ""),
    ("RTXPRO6000", "Qwen3-30B-A3B-Instruct-2507"): ("Qwen/Qwen3-30B-A3B-Instruct-2507", "rtx_pro_6000_server", 1, ""),
}
#: Engine arguments every run shares (bench/README.md: "All runs use bf16 weights,
#: max_num_batched_tokens=2048 and block_size=16"); prefix caching is vLLM's default.
BLOCK_SIZE = 16
MAX_NUM_BATCHED_TOKENS = 2048


def _percentile(xs: list[float], q: float) -> float:
    import numpy as np
    return float(np.percentile(xs, q))


def measured_metrics(requests: list[dict[str, Any]]) -> dict[str, float]:
    """The run's metrics from its ``requests.jsonl`` rows (README, "Headline numbers"):

    - TTFT (anchor B) = first_token_ts − A_r, E2E = last_token_ts − A_r, with
      A_r = queued_ts[0] + (arrival_time_r − arrival_time_0): the frontend's wall-clock
      arrival mapped onto the engine's monotonic clock (request 0 admitted at once);
    - TPOT = (last_token_ts − first_token_ts) / (output_toks − 1) per request with at
      least 2 output tokens, mean over requests;
    - throughput = requests / (max last_token_ts − min queued_ts).

    Times in ms. Raises ValueError on a row without timestamps.
    """
    for r in requests:
        if any(r.get(k) is None for k in ("arrival_time", "queued_ts", "first_token_ts", "last_token_ts")):
            raise ValueError(f"{r.get('request_id')}: missing timestamps")
    a0, q0 = requests[0]["arrival_time"], requests[0]["queued_ts"]
    ttft, e2e, tpot = [], [], []
    for r in requests:
        arrival = q0 + (r["arrival_time"] - a0)
        ttft.append((r["first_token_ts"] - arrival) * 1e3)
        e2e.append((r["last_token_ts"] - arrival) * 1e3)
        if r["output_toks"] >= 2:
            tpot.append((r["last_token_ts"] - r["first_token_ts"]) * 1e3 / (r["output_toks"] - 1))
    span = max(r["last_token_ts"] for r in requests) - min(r["queued_ts"] for r in requests)
    return {
        "ttft_mean": sum(ttft) / len(ttft), "ttft_p50": _percentile(ttft, 50), "ttft_p90": _percentile(ttft, 90),
        "tpot_mean": sum(tpot) / len(tpot), "e2e_mean": sum(e2e) / len(e2e),
        "throughput_rps": len(requests) / span,
    }


def llmservingsim_runs(root: str | os.PathLike[str], model_configs: str | os.PathLike[str]) -> list[RealRun]:
    """Every run under ``root`` (``real/llmservingsim``), in folder order.

    Raises:
        FileNotFoundError: ``root`` has no ``bench/examples`` folder.
    """
    root = Path(root)
    examples = root / "bench" / "examples"
    if not examples.is_dir():
        raise FileNotFoundError(f"{examples}: no LLMServingSim bench examples")
    runs = []
    for run_dir in sorted(p for p in examples.glob("*/*") if (p / "vllm" / "meta.json").is_file()):
        gpu, model_dir = run_dir.parent.name, run_dir.name
        meta = json.loads((run_dir / "vllm" / "meta.json").read_text())
        with open(run_dir / "vllm" / "requests.jsonl", encoding="utf-8") as f:
            requests = [json.loads(line) for line in f if line.strip()]
        name = f"{gpu}/{model_dir}"
        if (gpu, model_dir) not in DEPLOYMENTS:
            runs.append(RealRun("llmservingsim", name, meta.get("model", ""), gpu, 0, meta.get("vllm_version", ""),
                                measured_metrics(requests), skip=f"no deployment known for {name}"))
            continue
        model, system, tp, note = DEPLOYMENTS[(gpu, model_dir)]
        kw = meta["engine_kwargs"]
        version = meta["vllm_version"]
        sched: dict[str, Any] = {
            "max_num_seqs": kw["max_num_seqs"], "max_num_batched_tokens": kw["max_num_batched_tokens"],
            "block_size": BLOCK_SIZE, "enable_prefix_caching": True,
        }
        if kw.get("max_model_len"):
            sched["max_model_len"] = kw["max_model_len"]
        if (meta.get("kv_cache") or {}).get("num_gpu_blocks"):
            sched["num_gpu_blocks"] = meta["kv_cache"]["num_gpu_blocks"]
        if async_default(version):
            sched["async_scheduling"] = True
        # vLLM's parallel layout as launched: data-parallel ranks and expert
        # parallelism (the Qwen3-30B-A3B run: DP 2 with EP)
        pool: dict[str, Any] = {"count": 1, "tp": tp}
        if (dp := kw.get("data_parallel_size") or 1) > 1:
            pool["data_parallel_size"] = dp
        if kw.get("enable_expert_parallel"):
            pool["enable_expert_parallel"] = True

        spec = {
            "engine": {"model": model, "model_config_dir": str(model_configs), "system": system,
                       "backend": "vllm", "workers": {"aggregated": pool}, "scheduler": sched},
            "traffic": {"source": {"type": "llmservingsim", "path": str(root / meta["dataset_path"])},
                        "load": {"mode": "trace"}},
            "execution": {"mode": "offline", "seed": 0},
        }
        run = RealRun("llmservingsim", name, model, system, tp, version, measured_metrics(requests), spec,
                      exact_tables=system != "l40s", notes=[note] if note else [])
        runs.append(run)
    return runs
