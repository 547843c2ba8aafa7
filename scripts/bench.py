#!/usr/bin/env python3
"""Time whole replays through the Python API and print one table.

Usage: PYTHONPATH=python .venv/bin/python scripts/bench.py [--perf roofline|aic|both] [--quick] [--only TEXT]
       [--repeat N]

Each workload runs in a fresh process (spawn), so its peak RSS is its own. Columns:
workload, requests, output tokens, wall s (aisimulate.replay end to end), CPU s of the
process during that call (user + sys, all threads: steadier than wall time on a shared
machine), µs of host time per simulated output token, simulated requests per second of
wall time, peak RSS (MiB), and the Python share: the part of the wall time spent outside the core's
Replay call (config compile, reading the columns).

With ``--repeat N`` each workload runs N times, each in its own fresh process; the row
shows the medians and a line below it the range (lowest–highest) of wall s, CPU s,
sim req/s (and simulated requests per CPU second) and peak MiB.

Then, when every workload ran (neither ``--only`` nor ``--perf`` given: ``make bench``),
the stop latency: a replay of 10^7 requests is interrupted with SIGINT after 1–3 s of
wall time, and the time from the signal to the KeyboardInterrupt reaching the caller is
printed (the target is 0.5 s); and the report.save timings.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TRACE = REPO.parent / "shared" / "data" / "traces" / "mooncake" / "conversation_trace.jsonl"
AIC_DB = REPO.parent / "shared" / "data" / "aic" / "systems"


def engine(model: str, workers: int, tp: int, perf: str, seqs: int = 512) -> dict:
    e = {"model": model, "system": "h100_sxm", "perf": {"source": perf},
         "workers": {"aggregated": {"count": workers, "tp": tp}},
         "scheduler": {"max_num_seqs": seqs, "max_num_batched_tokens": 8192}}
    if perf == "aic":
        e["perf"]["database"] = str(AIC_DB)
    return e


MOE_CONFIG = REPO.parent / "shared" / "data" / "aic" / "model_configs" / "Qwen--Qwen3-30B-A3B_config.json"


def dense_twin(moe_config: Path) -> Path:
    """A dense Qwen3 config.json with the MoE model's attention and a dense FFN of the
    active experts' width (num_experts_per_tok × moe_intermediate_size): the dense
    model of the same active size. Written to a temporary folder."""
    import json
    import tempfile
    cfg = json.loads(moe_config.read_text())
    dense = {k: cfg[k] for k in ("num_hidden_layers", "hidden_size", "num_attention_heads",
                                 "num_key_value_heads", "head_dim", "vocab_size", "max_position_embeddings",
                                 "tie_word_embeddings")}
    dense.update(architectures=["Qwen3ForCausalLM"],
                 intermediate_size=cfg["num_experts_per_tok"] * cfg["moe_intermediate_size"])
    path = Path(tempfile.mkdtemp()) / "config.json"
    path.write_text(json.dumps(dense))
    return path


def closed_loop(clients: int, per_client: int, perf: str) -> dict:
    return {"engine": engine("meta-llama/Llama-3.1-8B-Instruct", 8, 1, perf),
            "traffic": {"source": {"type": "synthetic", "num_requests": clients * per_client,
                                   "isl": 512, "osl": 128},
                        "load": {"mode": "concurrency", "concurrency": clients}}}


def with_dataset(spec: dict, entries: int) -> dict:
    """The spec's synthetic requests drawn from a dataset of ``entries`` prompts (prefix
    caching on, the default): the prefix cache's hashing and lookups on every request."""
    spec["traffic"]["source"]["dataset"] = {"entries": entries}
    return spec


def workloads(perf: str, quick: bool) -> list[tuple[str, dict]]:
    scale = 4 if quick else 1
    out = [
        (f"closed 1024 × 20", closed_loop(1024, 20, perf)),
        (f"closed 4096 × 20", closed_loop(4096, 20, perf)),
        (f"closed 4096 × 40", closed_loop(4096, 40, perf)),
        (f"closed 16384 × 20", closed_loop(16384, 20 // scale or 1, perf)),
        ("closed 4096 × 20, 100 prompts", with_dataset(closed_loop(4096, 20, perf), 100)),
        ("poisson 400/s × 120 s", {  # 2 workers serve ~100/s: the queue grows
            "engine": engine("meta-llama/Llama-3.1-8B-Instruct", 2, 1, perf),
            "traffic": {"source": {"type": "synthetic", "num_requests": 1_000_000, "isl": 512, "osl": 128},
                        "load": {"mode": "rate", "rate_rps": 400, "arrival": "poisson"},
                        "stop": {"max_duration_s": 120}}}),
    ]
    if TRACE.exists():
        # the whole Mooncake trace on 4 × Llama-3.1-8B TP1 (scheduler defaults)
        out.append(("mooncake 12,031 (4×Llama-8B TP1)", {
            "engine": {k: v for k, v in engine("meta-llama/Llama-3.1-8B-Instruct", 4, 1, perf).items()
                       if k != "scheduler"},
            "traffic": {"source": {"type": "mooncake", "path": str(TRACE)}, "load": {"mode": "trace"}}}))
        out.append(("mooncake 12,031 (4×TP2)", {
            "engine": engine("Qwen/Qwen3-32B", 4, 2, perf, seqs=256),
            "traffic": {"source": {"type": "mooncake", "path": str(TRACE)}, "load": {"mode": "trace"}}}))
        if MOE_CONFIG.exists():
            # a mixture-of-experts replay against its dense twin: the same model with
            # one dense FFN of the active experts' width (top-k × expert size), so the
            # two differ only in how the FFN is priced; then the MoE model with its
            # data-parallel ranks in lockstep and expert parallelism
            for name, model, pool in (
                    ("mooncake MoE Qwen3-30B-A3B 4×TP2", str(MOE_CONFIG), {}),
                    ("mooncake dense twin 4×TP2", str(dense_twin(MOE_CONFIG)), {}),
                    ("mooncake MoE 2×TP2 DP2 EP", str(MOE_CONFIG),
                     {"count": 2, "data_parallel_size": 2, "enable_expert_parallel": True})):
                e = engine(model, 4, 2, perf, seqs=256)
                e["workers"]["aggregated"].update(pool)
                out.append((name, {"engine": e, "traffic": {"source": {"type": "mooncake", "path": str(TRACE)},
                                                            "load": {"mode": "trace"}}}))
    n = 1_000_000 // scale
    out.append((f"synthetic {n:,} (500/s)", {
        "engine": engine("meta-llama/Llama-3.1-8B-Instruct", 8, 1, perf),
        "traffic": {"source": {"type": "synthetic", "num_requests": n, "isl": 512, "osl": 128},
                    "load": {"mode": "rate", "rate_rps": 500, "arrival": "poisson"}}}))
    out.append((f"synthetic {n // 2:,} (500/s)", {
        "engine": engine("meta-llama/Llama-3.1-8B-Instruct", 8, 1, perf),
        "traffic": {"source": {"type": "synthetic", "num_requests": n // 2, "isl": 512, "osl": 128},
                    "load": {"mode": "rate", "rate_rps": 500, "arrival": "poisson"}}}))
    return out


def _run(spec: dict) -> dict:
    """One replay in this (fresh) process: timings and peak RSS."""
    sys.path.insert(0, str(REPO / "python"))
    import aisimulate
    from aisimulate.binding import native as _native

    core = [0.0]
    real_call = _native.call

    def timed(name, *args):
        t = time.perf_counter()
        try:
            return real_call(name, *args)
        finally:
            if name == "Replay":
                core[0] += time.perf_counter() - t

    _native.call = timed
    _native.pybind()  # load the extension and numpy before timing: one-off costs per process
    import numpy  # noqa: F401
    t0, c0 = time.perf_counter(), time.process_time()
    report = aisimulate.replay(spec)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    s = report.summary
    return {"requests": s["completed"] + s["rejected"] + s["failed"] + s["canceled"],
            "tokens": s["total_output_tokens"], "wall": wall, "cpu": cpu, "core": core[0],
            "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


ENDLESS = {
    "engine": engine("meta-llama/Llama-3.1-8B-Instruct", 8, 1, "roofline"),
    "traffic": {"source": {"type": "synthetic", "num_requests": 10_000_000, "isl": 512, "osl": 128},
                "load": {"mode": "rate", "rate_rps": 500, "arrival": "poisson"}},
}


def _stop_latency(after_s: float) -> float:
    """Seconds from a SIGINT sent ``after_s`` into a long replay to its KeyboardInterrupt."""
    import os
    import signal
    import threading

    sys.path.insert(0, str(REPO / "python"))
    import aisimulate

    sent = [0.0]

    def interrupt() -> None:
        sent[0] = time.perf_counter()
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(after_s, interrupt)
    timer.start()
    try:
        aisimulate.replay(ENDLESS, progress=False)
    except KeyboardInterrupt:
        return time.perf_counter() - sent[0]
    finally:
        timer.join()
    raise RuntimeError("the replay ended before the interrupt")


def _save_stop_latency(after_s: list[float]) -> list[tuple[float, float, bool]]:
    """For each of ``after_s``: seconds from a SIGINT sent that long into
    ``report.save(dir, formats=[parquet, csv, jsonl], exports=[aiperf])`` of a
    1,000,000-record report to its KeyboardInterrupt, the load average, and whether
    the folder was left without a result (no prediction.json, no temporary file)."""
    import os
    import signal
    import tempfile
    import threading

    sys.path.insert(0, str(REPO / "python"))
    import aisimulate

    spec = {"engine": engine("meta-llama/Llama-3.1-8B-Instruct", 8, 1, "roofline"),
            "traffic": {"source": {"type": "synthetic", "num_requests": 1_000_000, "isl": 512, "osl": 128},
                        "load": {"mode": "rate", "rate_rps": 500, "arrival": "poisson"}}}
    report = aisimulate.replay(spec, progress=False)
    out = []
    for after in after_s:
        folder = tempfile.mkdtemp(prefix="aisimulate-bench-")
        sent = [0.0]

        def interrupt() -> None:
            sent[0] = time.perf_counter()
            os.kill(os.getpid(), signal.SIGINT)

        timer = threading.Timer(after, interrupt)
        timer.start()
        try:
            report.save(folder, formats=["parquet", "csv", "jsonl"], exports=["aiperf"], progress=False)
            raise RuntimeError(f"the save ended before the interrupt at {after} s")
        except KeyboardInterrupt:
            dt = time.perf_counter() - sent[0]
        finally:
            timer.join()
        clean = os.listdir(folder) == []
        out.append((dt, os.getloadavg()[0], clean))
        os.rmdir(folder) if clean else None
    return out


def stop_latencies(ctx) -> None:
    print("\nCtrl-C while replaying 10,000,000 requests (s from SIGINT to KeyboardInterrupt):")
    for after in (1.0, 2.0, 3.0):
        with ctx.Pool(1, maxtasksperchild=1) as pool:
            dt = pool.apply(_stop_latency, (after,))
        print(f"  interrupted after {after:.0f} s: {dt * 1000:6.1f} ms", flush=True)
    after_s = [0.2, 0.7, 1.5, 2.5, 3.5, 5.0]
    print("Ctrl-C while saving 1,000,000 records as parquet, csv, jsonl and the AIPerf export "
          "(ms from SIGINT to KeyboardInterrupt; the folder is left empty):")
    with ctx.Pool(1, maxtasksperchild=1) as pool:
        results = pool.apply(_save_stop_latency, (after_s,))
    for after, (dt, load, clean) in zip(after_s, results):
        print(f"  interrupted after {after:.1f} s: {dt * 1000:6.1f} ms (load {load:.1f})"
              f"{'' if clean else '  FILES LEFT'}", flush=True)


SAVE_FORMATS = ("parquet", "csv", "jsonl")


def _save_times(n: int, repeats: int) -> dict:
    """CPU and wall seconds of ``report.save(dir, formats=[fmt])`` for a report of
    ``n`` records (a synthetic replay of ``n`` requests), best of ``repeats`` each,
    with the 1-minute load average at each best run. pyarrow is imported first (its
    import, once per process, is timed apart)."""
    import os
    import shutil
    import tempfile

    sys.path.insert(0, str(REPO / "python"))
    import aisimulate

    spec = {"engine": engine("meta-llama/Llama-3.1-8B-Instruct", 8, 1, "roofline"),
            "traffic": {"source": {"type": "synthetic", "num_requests": n, "isl": 512, "osl": 128},
                        "load": {"mode": "rate", "rate_rps": 500, "arrival": "poisson"}}}
    report = aisimulate.replay(spec, progress=False)
    t = time.process_time()
    import pyarrow.parquet  # noqa: F401
    out = {"records": report._count(), "pyarrow import": time.process_time() - t}
    folder = tempfile.mkdtemp(prefix="aisimulate-bench-")
    try:
        for fmt in SAVE_FORMATS:
            best = None
            for _ in range(repeats):
                c, w = time.process_time(), time.perf_counter()
                report.save(folder, formats=[fmt], progress=False)
                run = (time.process_time() - c, time.perf_counter() - w, os.getloadavg()[0])
                best = run if best is None or run[0] < best[0] else best
            size = os.path.getsize(os.path.join(folder, f"requests.{fmt}"))
            out[fmt] = (*best, size)
    finally:
        shutil.rmtree(folder)
    return out


def save_times(ctx, n: int = 1_000_000, repeats: int = 3) -> None:
    with ctx.Pool(1, maxtasksperchild=1) as pool:
        r = pool.apply(_save_times, (n, repeats))
    print(f"\nreport.save of {r['records']:,} records (best of {repeats}; CPU s is the process's, "
          f"all threads; target < 3 s; pyarrow import once per process "
          f"{r['pyarrow import']:.2f} s CPU, not included):")
    print(f"  {'format':<8} {'CPU s':>6} {'wall s':>7} {'load 1m':>8} {'MB':>7}")
    for fmt in SAVE_FORMATS:
        cpu, wall, load, size = r[fmt]
        print(f"  {fmt:<8} {cpu:>6.2f} {wall:>7.2f} {load:>8.2f} {size / 1e6:>7.1f}", flush=True)


def _median_run(runs: list[dict]) -> dict:
    """The median of each timing and of the peak RSS over ``runs`` (one workload's fresh
    processes); requests and tokens are the same in every run (the replay is
    deterministic) and are taken from the first."""
    out = dict(runs[0])
    for key in ("wall", "cpu", "core", "rss_mib"):
        out[key] = statistics.median(r[key] for r in runs)
    return out


def _range_line(runs: list[dict]) -> str:
    """Lowest–highest of wall s, CPU s, sim req/s, simulated requests per CPU second
    (steadier than per wall second on a shared machine) and peak MiB over ``runs``."""
    def span(values, fmt):
        return f"{fmt.format(min(values))}–{fmt.format(max(values))}"
    return (f"{'':<8} {'  range of ' + str(len(runs)) + ' runs':<32} "
            f"wall {span([r['wall'] for r in runs], '{:.2f}')} s, "
            f"CPU {span([r['cpu'] for r in runs], '{:.2f}')} s, "
            f"sim req/s {span([r['requests'] / r['wall'] for r in runs], '{:,.0f}')} "
            f"(per CPU s {span([r['requests'] / r['cpu'] for r in runs], '{:,.0f}')}), "
            f"peak {span([r['rss_mib'] for r in runs], '{:.0f}')} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--perf", choices=["roofline", "aic", "both"], default=None,
                    help="the perf backends to run (default both); with it, the stop-latency "
                         "and save benches are skipped")
    ap.add_argument("--quick", action="store_true", help="smaller 16k-client and 1M runs")
    ap.add_argument("--only", default=None,
                    help="run only the workloads whose name contains this text (and skip the "
                         "stop-latency and save benches)")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="run each workload N times, each in a fresh process; print the "
                         "medians and the range (default 1)")
    ap.add_argument("--save-only", action="store_true",
                    help="only the report.save timings at 1,000,000 records")
    ap.add_argument("--stop-only", action="store_true",
                    help="only the Ctrl-C latencies (a long replay, a long save)")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error(f"--repeat must be at least 1, got {args.repeat}")
    if args.save_only:
        save_times(mp.get_context("spawn"))
        return
    if args.stop_only:
        stop_latencies(mp.get_context("spawn"))
        return
    selected = args.only is not None or args.perf is not None
    perf_arg = args.perf or "both"
    perfs = ["roofline", "aic"] if perf_arg == "both" else [perf_arg]
    ctx = mp.get_context("spawn")  # fork is unsafe once the Go runtime has started
    print(f"{'perf':<8} {'workload':<32} {'requests':>9} {'out tokens':>12} {'wall s':>7} {'CPU s':>6} "
          f"{'µs/token':>8} {'sim req/s':>10} {'peak MiB':>8} {'python':>7}"
          + (f"   (medians of {args.repeat} runs)" if args.repeat > 1 else ""))
    for perf in perfs:
        if perf == "aic" and not AIC_DB.exists():
            print(f"{perf:<8} (skipped: {AIC_DB} not found)")
            continue
        for name, spec in workloads(perf, args.quick):
            if args.only is not None and args.only not in name:
                continue
            runs = []
            for _ in range(args.repeat):
                with ctx.Pool(1, maxtasksperchild=1) as pool:
                    runs.append(pool.apply(_run, (spec,)))
            r = _median_run(runs)
            print(f"{perf:<8} {name:<32} {r['requests']:>9,} {r['tokens']:>12,} {r['wall']:>7.2f} {r['cpu']:>6.2f} "
                  f"{r['wall'] * 1e6 / max(r['tokens'], 1):>8.3f} {r['requests'] / r['wall']:>10,.0f} "
                  f"{r['rss_mib']:>8.0f} {1 - r['core'] / r['wall']:>7.1%}", flush=True)
            if args.repeat > 1:
                print(_range_line(runs), flush=True)
    if selected:
        return
    stop_latencies(ctx)
    save_times(ctx)


if __name__ == "__main__":
    main()
