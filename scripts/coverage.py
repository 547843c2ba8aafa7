#!/usr/bin/env python3
"""Coverage sweep: which deployments a held-back measurement could ask for are refused, and why.

Usage:
    nice -n 10 python scripts/coverage.py [--out DIR] [--jobs N] [--requests N]
        [--perf aic,roofline] [--backend vllm,sglang,trtllm] [--system S,...] [--model SUBSTR]

Builds one silicon row (the schema of ``../shared/data/silicon/*.csv``) for every model
config below × every system with kernel tables × the layouts public deployments run ×
the precisions the checkpoint implies × the engines, and sends each through the path a
held-back row takes in ``scripts/accuracy.py`` (``tools.accuracy.row_spec``, then the
replay as launched), with its traffic cut to ``--requests`` requests (40) at
concurrency 8, ISL 1,024, OSL 64 so the sweep stays short. Each case ends ``ok`` or
``refused`` with the first line of the error; a refusal is classed ``memory`` (the
weights or one request's KV cache do not fit: a correct refusal, the engine would not
start either), ``engine`` (a layout the engine itself refuses, :data:`ENGINE`) or
``other`` (a defect: a missing table, format or feature, or a check stricter than the
engine's).

Writes DIR/cases.csv (every case) and DIR/refusals.csv (refused cases grouped by reason),
prints the counts by class and the reasons. Exit 0; 2 on bad options.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from aisimulate.tools import accuracy  # noqa: E402

#: (model_path, precisions served): every MoE, MLA and hybrid family the shared configs
#: have in the releases public deployments run (InferenceX's benchmarks/: DeepSeek-R1,
#: Kimi-K2.5, GLM-5, gpt-oss, Qwen3.5, MiniMax-M2.5 on B200/B300/GB200 and H100/H200), and
#: the dense Llama and Nemotron ones. A bf16 checkpoint is also served fp8 (vLLM's
#: --quantization fp8); a quantized checkpoint as it is.
MODELS = (
    ("deepseek-ai/DeepSeek-R1", ("fp8",)),
    ("deepseek-ai/DeepSeek-V3", ("fp8",)),
    ("deepseek-ai/DeepSeek-V3.2", ("fp8",)),
    ("nvidia/DeepSeek-R1-NVFP4", ("nvfp4",)),
    ("nvidia/DeepSeek-V3.2-NVFP4", ("nvfp4",)),
    ("moonshotai/Kimi-K2.5", ("int4",)),
    ("nvidia/Kimi-K2.5-NVFP4", ("nvfp4",)),
    ("zai-org/GLM-5-FP8", ("fp8",)),
    ("nvidia/GLM-5-NVFP4", ("nvfp4",)),
    ("openai/gpt-oss-120b", ("mxfp4",)),
    ("openai/gpt-oss-20b", ("mxfp4",)),
    ("Qwen/Qwen3-235B-A22B", ("bf16", "fp8")),
    ("Qwen/Qwen3-235B-A22B-FP8", ("fp8",)),
    ("nvidia/Qwen3-235B-A22B-NVFP4", ("nvfp4",)),
    ("Qwen/Qwen3-30B-A3B", ("bf16", "fp8")),
    ("Qwen/Qwen3.5-397B-A17B", ("bf16", "fp8")),
    ("nvidia/Qwen3.5-397B-A17B-NVFP4", ("nvfp4",)),
    ("Qwen/Qwen3.5-35B-A3B", ("bf16",)),
    ("MiniMaxAI/MiniMax-M2.5", ("fp8",)),
    ("nvidia/MiniMax-M2.5-NVFP4", ("nvfp4",)),
    ("meta-llama/Meta-Llama-3.1-8B", ("bf16", "fp8")),
    ("meta-llama/Meta-Llama-3.1-70B", ("bf16", "fp8")),
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", ("bf16",)),
    ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", ("bf16",)),
    ("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8", ("fp8",)),
    ("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4", ("nvfp4",)),
)
#: Systems with kernel tables for the three engines (``aisimulate systems``).
SYSTEMS = ("h100_sxm", "h200_sxm", "b200_sxm", "b300_sxm", "gb200")
#: Releases a held-back row carries (InferenceX's images of 2026: vLLM 0.15–0.19,
#: SGLang 0.5.9, TensorRT-LLM 1.2.0rc6 / 1.3.0rc).
VERSIONS = {"vllm": "0.16.0", "sglang": "0.5.9", "trtllm": "1.2.0rc6"}
#: Aggregated layouts as silicon columns (tp_size, attention_dp_size, moe_tp_size,
#: moe_ep_size): tp_size × attention_dp_size GPUs, named as InferenceX's configs
#: (configs/nvidia-master.yaml: ``tp`` GPUs, ``ep``, ``dp-attn``): TP 1–8 (experts
#: tensor-parallel), TEP (experts expert-parallel over the TP GPUs), DEP (attention DP
#: with EP: vLLM's DP + EP, SGLang's --enable-dp-attention, TensorRT-LLM's
#: enable_attention_dp) over 2–8 GPUs and over 2 and 4 nodes, TP × DP with and without
#: EP, and TensorRT-LLM's experts split both ways (TP8 with EP2).
AGG_LAYOUTS = (
    ("TP1", (1, 1, 1, 1)), ("TP2", (2, 1, 2, 1)), ("TP4", (4, 1, 4, 1)), ("TP8", (8, 1, 8, 1)),
    ("TEP4", (4, 1, 1, 4)), ("TEP8", (8, 1, 1, 8)), ("TP8 EP2", (8, 1, 4, 2)),
    ("DEP2", (1, 2, 1, 2)), ("DEP4", (1, 4, 1, 4)), ("DEP8", (1, 8, 1, 8)),
    ("TP4 DP2", (4, 2, 8, 1)), ("TP4 DP2 EP8", (4, 2, 1, 8)),
    ("DEP16", (1, 16, 1, 16)), ("DEP32", (1, 32, 1, 32)),
)
#: P/D layouts, InferenceX's most run (workers × layout per side): (name, prefill
#: (workers, tp, adp, moe_tp, moe_ep), decode (…)).
PD_LAYOUTS = (
    ("1P TP8 + 1D TP8", (1, 8, 1, 8, 1), (1, 8, 1, 8, 1)),
    ("1P TP4 + 1D TP4", (1, 4, 1, 4, 1), (1, 4, 1, 4, 1)),
    ("1P TP1 + 1D TEP4", (1, 1, 1, 1, 1), (1, 4, 1, 1, 4)),
    ("1P DEP4 + 4D TEP8", (1, 1, 4, 1, 4), (4, 8, 1, 1, 8)),
    ("1P DEP8 + 1D DEP8", (1, 1, 8, 1, 8), (1, 1, 8, 1, 8)),
    ("2P DEP4 + 1D DEP16", (2, 1, 4, 1, 4), (1, 1, 16, 1, 16)),
    ("1P DEP4 + 1D DEP32", (1, 1, 4, 1, 4), (1, 1, 32, 1, 32)),
)
CONCURRENCY, ISL, OSL = 8, 1024, 64
#: A refusal that says the deployment does not fit its GPUs' memory (SGLang's token
#: pool too small for the prompt: it rejects each request, ``max_req_input_len``).
MEMORY = re.compile(r"do(es)? not fit|refuses prompts of max_req_input_len|exceeds? .*memory|out of memory|no room|KV cache (cannot|can't) hold|"
                    r"not enough (GPU )?memory|max_model_len|num_gpu_blocks|needs? .* GiB|GiB .*more than",
                    re.IGNORECASE)
#: Refusals the engine itself makes (correct, as ``memory``): vLLM splits the experts
#: one way, expert parallel over TP × DP or tensor parallel over them
#: (``FusedMoEParallelConfig.make``), never both; every engine's fp8 block MoE kernels
#: want a per-GPU expert width that is a multiple of the 128-wide block
#: (``model.Arch.ValidateParallel`` cites each).
ENGINE = {"vllm": re.compile(r"vLLM splits experts one way|fp8 block MoE kernels require"),
          "sglang": re.compile(r"fp8 block MoE kernels require"),
          "trtllm": re.compile(r"fp8 block MoE kernels require")}
COLUMNS = ("id", "backend", "system", "model", "precision", "layout", "perf", "status", "class", "reason",
           "fallbacks")


def _row(backend: str, system: str, model: str, precision: str, layout: str, lay) -> dict[str, str]:
    row = {"id": f"{backend}|{system}|{model}|{precision}|{layout}", "backend": backend,
           "backend_version": VERSIONS[backend], "model_path": model, "system": system, "precision": precision,
           "isl": str(ISL), "osl": str(OSL), "silicon_ttft_ms": "1", "silicon_tpot_ms": "1", "pp_size": "1",
           "silicon_data_source": ""}
    if len(lay) == 4:
        row.update(mode="agg", batch_size=str(CONCURRENCY),
                   **dict(zip(("tp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size"), map(str, lay))))
        return row
    row.update(mode="disagg", batch_size=str(CONCURRENCY))
    for side, cols in zip(("prefill", "decode"), lay):
        for k, v in zip(("num_workers", "tp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size"), cols):
            row[f"{side}_{k}"] = str(v)
        row[f"{side}_pp_size"] = "1"
    # P/D rows are InferenceX's (its multi-node srt-slurm recipes; TensorRT-LLM's must be):
    # a database-dump source with the layout columns, on a day after the tabulated recipes
    row["silicon_data_source"] = (f"db-dump/2026-04-27; silicon_concurrency={CONCURRENCY}; "
                                  "measured=2026-03-01T00:00:00.000Z")
    return row


def cases(backends, systems, perfs, model_filter: str, full: bool):
    """(row, layout name, perf) of every case: with ``full`` every system × perf of each
    (model, precision, engine, layout); else one (system, perf) pair per such case, the
    pairs taken in turn, so each pair sees every model and layout kind."""
    pairs = [(s, p) for s in systems for p in perfs]
    layouts = list(AGG_LAYOUTS) + [(n, (p, d)) for n, p, d in PD_LAYOUTS]
    i = 0
    for model, precisions in MODELS:
        if model_filter and model_filter.lower() not in model.lower():
            continue
        for backend in backends:
            for precision in precisions:
                for name, lay in layouts:
                    for system, perf in (pairs if full else [pairs[i % len(pairs)]]):
                        yield _row(backend, system, model, precision, name, lay), name, perf
                    i += 1


def _shorten(spec: dict, requests: int) -> None:
    """Cut a row's traffic to ``requests`` requests, none of them warm-up."""
    traffic = spec["traffic"]
    if "benchmark" in traffic:
        traffic["benchmark"]["num_prompts"] = requests
        traffic["benchmark"].pop("num_warmups", None)
        return
    traffic["source"]["num_requests"] = requests
    traffic["load"].pop("warmup_requests", None)
    traffic["source"].pop("dataset", None)


def run_case(row: dict[str, str], layout: str, perf: str, requests: int, aliases: dict[str, str]) -> dict[str, str]:
    import warnings

    import aisimulate
    from aisimulate.tools.accuracy.run import _replay_as_launched

    warnings.simplefilter("ignore", aisimulate.BackendVersionWarning)  # the nearest release's tables: served

    out = {"id": row["id"], "backend": row["backend"], "system": row["system"], "model": row["model_path"],
           "precision": row["precision"], "layout": layout, "perf": perf, "status": "ok", "class": "",
           "reason": "", "fallbacks": ""}
    try:
        spec, _, _ = accuracy.row_spec(row, perf=perf, aliases=aliases, model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
                                       database=accuracy.DEFAULT_DATABASE)
        _shorten(spec, requests)
        report = _replay_as_launched(spec, ISL + OSL + accuracy.AIC_GENERATOR_TOKEN_SLACK)
    except (ValueError, KeyError, aisimulate.ConfigError, aisimulate.SimulationError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        stage = "harness" if isinstance(exc, (ValueError, KeyError)) and not isinstance(
            exc, (aisimulate.ConfigError, aisimulate.SimulationError)) else "core"
        engine = ENGINE.get(row["backend"])
        cls = "memory" if MEMORY.search(first) else "engine" if engine and engine.search(first) else "other"
        out.update(status="refused", reason=f"{stage}: {first}", **{"class": cls})
        return out
    done = report.summary.get("completed", 0)
    if done < requests:
        why = next((r.get("reason") or "" for r in report.requests if r["status"] != "completed"), "")
        first = f"only {done} of {requests} requests completed ({why})"
        out.update(status="refused", reason=f"core: {first}", **{"class": "memory" if MEMORY.search(why) else "other"})
    fb = (report.metadata.get("perf_metadata") or {}).get("fallbacks") or {}
    out["fallbacks"] = ";".join(f"{op}:{fb[op]}" for op in sorted(fb))
    return out


def _star(args):
    return run_case(*args)


def _generic(reason: str) -> str:
    """A reason with its model path, system and numbers blanked, to group like refusals."""
    reason = re.sub(r"\S+_config\.json", "MODEL", reason)
    reason = re.sub("|".join(SYSTEMS), "SYSTEM", reason)
    return re.sub(r"\d+(\.\d+)?", "N", reason)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="out/coverage", help="output folder (default out/coverage)")
    ap.add_argument("--jobs", type=accuracy.args.positive_int, default=os.cpu_count() or 1)
    ap.add_argument("--requests", type=accuracy.args.positive_int, default=40, help="requests per case (40)")
    ap.add_argument("--perf", default="aic,roofline")
    ap.add_argument("--backend", default="vllm,sglang,trtllm")
    ap.add_argument("--system", default=",".join(SYSTEMS))
    ap.add_argument("--model", default="", help="only models whose path contains this")
    ap.add_argument("--full", action="store_true",
                    help="every system × perf of each case (about 20,000 cases, 7 min on 2 cores) "
                         "instead of one pair per case in turn")
    args = ap.parse_args(argv)
    perfs, backends, systems = (s.split(",") for s in (args.perf, args.backend, args.system))
    if not set(perfs) <= {"aic", "roofline"} or not set(backends) <= set(VERSIONS):
        ap.error("--perf takes aic,roofline and --backend vllm,sglang,trtllm")
    aliases = accuracy.load_aliases(accuracy.resolve_aliases(accuracy.SHARED_DATA / "silicon" / "x.csv"))
    t0 = time.perf_counter()
    work = [(row, name, perf, args.requests, aliases) for row, name, perf in cases(backends, systems, perfs, args.model, args.full)]
    if args.jobs == 1:
        results = [_star(w) for w in work]
    else:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(_star, work, chunksize=8))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "cases.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        w.writerows(results)
    refused = [r for r in results if r["status"] != "ok"]
    groups = Counter((r["class"], r["backend"], _generic(r["reason"])) for r in refused)
    with open(out / "refusals.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(("class", "backend", "cases", "reason", "example"))
        for (cls, be, reason), n in sorted(groups.items(), key=lambda kv: (kv[0][0], -kv[1])):
            ex = next(r["id"] + " " + r["perf"] for r in refused
                      if (r["class"], r["backend"], _generic(r["reason"])) == (cls, be, reason))
            w.writerow((cls, be, n, reason, ex))
    by = Counter((r["backend"], r["status"] if r["status"] == "ok" else r["class"]) for r in results)
    print(f"{len(results)} cases in {time.perf_counter() - t0:.1f} s")
    for be in backends:
        n = sum(v for (b, _), v in by.items() if b == be)
        print(f"  {be:7s} {n:5d} cases: ok {by[(be, 'ok')]}, refused (memory) {by[(be, 'memory')]}, "
              f"(the engine's rule) {by[(be, 'engine')]}, (other) {by[(be, 'other')]}")
    for (cls, be, reason), n in sorted(groups.items(), key=lambda kv: (kv[0][0] != "other", -kv[1])):
        print(f"  {n:5d} {cls:6s} {be:7s} {reason[:150]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
