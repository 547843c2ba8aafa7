"""The apex_plus runs (``real/apex_plus``): vLLM 0.6.0 (V0) on 8× H100-SXM, open loop, means."""

from __future__ import annotations

import csv
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from .runs import RealRun, async_default

#: vLLM of every apex_plus run (docker vllm/vllm-openai:v0.6.0).
VLLM_VERSION = "0.6.0"
SYSTEM = "h100_sxm"
#: model_dir → (model config name, fp8 weights and KV cache).
MODELS = {"llama": ("meta-llama/Meta-Llama-3.1-70B", False),
          "mistral": ("mistralai/Mistral-Large-Instruct-2407", True)}
#: vLLM 0.6.0 defaults the runs kept (README "Deployments"): 256 sequences, 16-token
#: blocks, prefix caching off. Chunked prefill switches itself on with a 512-token
#: budget when max_model_len > 32768 (arg_utils / SchedulerConfig); otherwise the
#: budget is max(max_model_len, 2048) and prompts are never split.
MAX_NUM_SEQS = 256
CHUNKED_BUDGET = 512
_DEPLOYMENT = re.compile(r"^(?:(\d+)DP)?(\d+)TP(_fp8)?(?:_(\d+))?$")


def deployment_args(model_dir: str, deployment: str) -> dict[str, Any]:
    """Engine arguments of one apex_plus server (README "Deployments" table): TP,
    max_model_len, max_num_batched_tokens, gpu_memory_utilization, and whether the
    custom all-reduce was disabled (``--disable-custom-all-reduce``: NCCL instead).

    Raises:
        ValueError: an unknown deployment or model folder.
    """
    m = _DEPLOYMENT.match(deployment)
    if not m or model_dir not in MODELS:
        raise ValueError(f"unknown apex_plus deployment {model_dir}/{deployment}")
    dp, tp = int(m.group(1) or 1), int(m.group(2))
    # The 4DP×2TP and 2TP servers were launched with a short max_model_len and no custom
    # all-reduce; the others with the model's 131,072 tokens (chunked prefill).
    short = (dp, tp) in ((4, 2), (1, 2))
    if short:
        max_len = 24272 if model_dir == "llama" else 20560
        util = 0.97 if model_dir == "llama" else 0.85
        return {"tp": tp, "max_model_len": max_len, "max_num_batched_tokens": max(max_len, 2048),
                "gpu_memory_utilization": util, "custom_all_reduce": False}
    return {"tp": tp, "max_model_len": 131072, "max_num_batched_tokens": CHUNKED_BUDGET,
            "gpu_memory_utilization": 0.97, "custom_all_reduce": True}


def write_trace(requests_csv: str | os.PathLike[str], out: str | os.PathLike[str]) -> int:
    """Convert a ``derived/requests/*.csv`` file to a Mooncake JSONL trace (timestamp ms
    from StartTimeOffset_ns; input and output lengths as vLLM processed them) and
    return its number of requests.

    Raises:
        ValueError: a row without the columns or with a non-integer value (file, line).
    """
    n = 0
    with open(requests_csv, newline="", encoding="utf-8") as f, open(out, "w", encoding="utf-8") as g:
        for line, row in enumerate(csv.DictReader(f), start=2):
            try:
                ts = int(row["StartTimeOffset_ns"])
                pin, pout = int(row["prompt_tokens_vllm"]), int(row["completion_tokens_vllm"])
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"{requests_csv}:{line}: {exc}") from None
            g.write(f'{{"timestamp": {ts / 1e6!r}, "input_length": {pin}, "output_length": {pout}}}\n')
            n += 1
    return n


def apex_runs(root: str | os.PathLike[str], model_configs: str | os.PathLike[str],
              trace_dir: str | os.PathLike[str] | None = None) -> list[RealRun]:
    """Every run of ``root/derived/runs.csv`` (``real/apex_plus``): the ok ones with
    their measured means and replay spec, the failed ones skipped with their status.
    Traces are written to ``trace_dir`` (a new temporary folder when None).

    Raises:
        FileNotFoundError: no ``derived/runs.csv`` under ``root``.
    """
    root = Path(root)
    runs_csv = root / "derived" / "runs.csv"
    if not runs_csv.is_file():
        raise FileNotFoundError(f"{runs_csv}: no apex_plus runs")
    trace_dir = Path(trace_dir or tempfile.mkdtemp(prefix="apex_traces_"))
    trace_dir.mkdir(parents=True, exist_ok=True)
    runs = []
    with open(runs_csv, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        name = Path(row["result_file"]).stem
        model_dir = row["model_dir"]
        if row["status"] != "ok":
            runs.append(RealRun("apex_plus", name, model_dir, SYSTEM, 0, VLLM_VERSION, {}, skip=row["status"]))
            continue
        measured = {"ttft_mean": float(row["ttft_mean_ms"]), "tpot_mean": float(row["decode_time_per_output_token_ms"]),
                    "e2e_mean": float(row["e2e_mean_s"]) * 1e3}
        args = deployment_args(model_dir, row["deployment"])
        model, fp8 = MODELS[model_dir]
        trace = trace_dir / f"{name}.jsonl"
        write_trace(root / row["requests_csv"], trace)
        sched = {"max_num_seqs": MAX_NUM_SEQS, "max_num_batched_tokens": args["max_num_batched_tokens"],
                 "block_size": 16, "enable_prefix_caching": False, "max_model_len": args["max_model_len"],
                 "gpu_memory_utilization": args["gpu_memory_utilization"]}
        if async_default(VLLM_VERSION):
            sched["async_scheduling"] = True
        notes = ["vLLM 0.6.0 (V0 engine) priced with the nearest perf tables"]
        if not args["custom_all_reduce"]:
            notes.append("--disable-custom-all-reduce (NCCL) priced with the custom all-reduce table")
        if args["max_num_batched_tokens"] > CHUNKED_BUDGET:
            notes.append("V0 without chunked prefill runs prefills in passes of their own; the replay mixes them with decodes")

        engine: dict[str, Any] = {
            "model": model, "model_config_dir": str(model_configs), "system": SYSTEM, "backend": "vllm",
            "workers": {"aggregated": {"count": 1, "tp": args["tp"]}}, "scheduler": sched}
        if fp8:  # --quantization fp8 (or an fp8 checkpoint) with an fp8 KV cache
            engine["quantization"] = {"weights": "fp8", "kv_cache": "fp8"}
        spec = {"engine": engine,
                "traffic": {"source": {"type": "mooncake", "path": str(trace)}, "load": {"mode": "trace"}},
                "execution": {"mode": "offline", "seed": 0}}
        runs.append(RealRun("apex_plus", name, model, SYSTEM, args["tp"], VLLM_VERSION, measured, spec,
                            exact_tables=False, notes=notes))
    return runs
