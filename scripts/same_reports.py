#!/usr/bin/env python3
"""Check that two builds of aisimulate give byte-identical reports (a change that must
not alter results proves it here).

Usage: .venv/bin/python scripts/same_reports.py --baseline DIR [--quick] [--properties N]
       [--new-summary-keys K1,K2]

DIR is another checkout with a built extension (for example ``git worktree add`` of
main, then ``make build`` there). Each case is replayed by both builds, each in its own
process, through the Python API with ``timeline=True`` where the baseline supports it;
the digests of ``report.to_json()`` (metadata and summary), of every request record
(``json.dumps`` of ``report.requests``, in order) and of the pass timeline's columns are
compared. Cases: the Mooncake conversation trace at block sizes 16 and 64 (aggregated,
with the client path, and P/D), closed loops (512/128, a dataset, KV-starved with
preemption), sessions with the client path and timeouts, async scheduling, a Poisson
overload, the aic tables, SGLang and TensorRT-LLM (aggregated, P/D, attention
(data) parallelism), and the random replays of tests/test_properties.py (seeds
0..N−1). Prints one line per case and exits 1 if any differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
TRACE = DATA / "traces" / "mooncake" / "conversation_trace.jsonl"
AIC = DATA / "aic" / "systems"


def _engine(model: str, workers: dict, **sched) -> dict:
    return {"model": model, "system": "h100_sxm", "workers": workers,
            "scheduler": {"max_num_seqs": 256, "max_num_batched_tokens": 8192, **sched}}


def _mooncake(bs: int, **extra) -> dict:
    eng = _engine("Qwen/Qwen3-32B", {"aggregated": {"count": 4, "tp": 2}}, block_size=bs)
    spec = {"engine": eng, "traffic": {"source": {"type": "mooncake", "path": str(TRACE)},
                                       "load": {"mode": "trace"}}}
    for k, v in extra.items():
        (spec["engine"] if k in ("tokenization", "detokenization") else spec["traffic"]["load"])[k] = v
    return spec


def cases(quick: bool, properties: int, tmp: Path) -> list[tuple[str, dict]]:
    out: list[tuple[str, dict]] = []
    closed = lambda n, c, **s: {  # noqa: E731
        "engine": _engine("meta-llama/Llama-3.1-8B-Instruct", {"aggregated": {"count": 8, "tp": 1}}, **s),
        "traffic": {"source": {"type": "synthetic", "num_requests": n, "isl": 512, "osl": 128},
                    "load": {"mode": "concurrency", "concurrency": c}}}
    client = {"tokenization": {"send_ms": 0.255}, "detokenization": {"base_us": 150, "per_token_us": 2.0},
              "response_overhead": {"base_ms": 1.40, "per_output_token_us": 3.65}}
    if TRACE.exists():
        for bs in (16, 64):
            out.append((f"mooncake bs{bs}", _mooncake(bs)))
            out.append((f"mooncake bs{bs} client path", _mooncake(bs, **client)))
            pd = _mooncake(bs)
            pd["engine"]["workers"] = {"disaggregated": {
                "prefill": {"count": 2, "tp": 2, "placement": "least_outstanding"},
                "decode": {"count": 2, "tp": 2, "placement": "least_outstanding"},
                "kv_transfer": {"bandwidth_gb_per_s": 50, "latency_ms": 0.2}}}
            if quick:
                pd["traffic"]["stop"] = {"max_requests": 3000}
            out.append((f"mooncake bs{bs} P/D", pd))
        llama = _mooncake(16)
        llama["engine"] = _engine("meta-llama/Llama-3.1-8B-Instruct", {"aggregated": {"count": 4, "tp": 1}})
        out.append(("mooncake llama-8b 4xTP1", llama))
        asyn = _mooncake(16)
        asyn["engine"]["scheduler"]["async_scheduling"] = True
        asyn["traffic"]["stop"] = {"max_requests": 4000}
        out.append(("mooncake async scheduling", asyn))
        if AIC.exists():
            aic = _mooncake(16)
            aic["engine"]["perf"] = {"source": "aic", "database": str(AIC)}
            aic["traffic"]["stop"] = {"max_requests": 3000}
            out.append(("mooncake aic", aic))
    out.append(("closed 1024 x 20", closed(20480, 1024)))
    ds = closed(20480, 1024)
    ds["traffic"]["source"]["dataset"] = {"entries": 100}
    out.append(("closed 1024 x 20, 100 prompts", ds))
    cl = closed(8192, 512)
    cl["engine"].update({k: v for k, v in client.items() if k != "response_overhead"})
    cl["traffic"]["load"]["response_overhead"] = dict(client["response_overhead"], jitter_ms=0.3)
    out.append(("closed 512 x 16, client path + jitter", cl))
    # KV-starved: 512/128 requests on 700 blocks of 16 (11,200 tokens) per worker
    starved = closed(4000, 256, num_gpu_blocks=700, max_model_len=11200)
    out.append(("closed KV-starved (preemption)", starved))
    starved_pc = closed(4000, 256, num_gpu_blocks=700, max_model_len=11200, enable_prefix_caching=False)
    out.append(("closed KV-starved, no prefix caching", starved_pc))
    out.append(("poisson 400/s x 60 s (overload)", {
        "engine": _engine("meta-llama/Llama-3.1-8B-Instruct", {"aggregated": {"count": 2, "tp": 1}}),
        "traffic": {"source": {"type": "synthetic", "num_requests": 1_000_000, "isl": 512, "osl": 128},
                    "load": {"mode": "rate", "rate_rps": 400, "arrival": "poisson"},
                    "stop": {"max_duration_s": 60}}}))
    sessions = {
        "engine": dict(_engine("Qwen/Qwen3-8B", {"aggregated": {"count": 2, "tp": 1, "placement": "least_outstanding"}}),
                       tokenization={"send_ms": 0.255}, detokenization={"base_us": 150, "per_token_us": 2.0}),
        "traffic": {"source": {"type": "sessions", "num_sessions": 300, "turns": {"kind": "uniform", "min": 2, "max": 8},
                               "isl": {"kind": "lognormal", "mean": 300, "std": 200, "min": 20, "max": 2000},
                               "osl": {"kind": "lognormal", "mean": 250, "std": 150, "min": 10, "max": 1000}},
                    "load": {"mode": "concurrency", "concurrency": 32, "inter_turn_delay_ms": 2000,
                             "response_overhead": {"base_ms": 1.40, "per_output_token_us": 3.65}}}}
    out.append(("sessions, client path", sessions))
    timeouts = json.loads(json.dumps(sessions))
    timeouts["traffic"]["load"]["request_timeout_ms"] = 3000
    out.append(("sessions, client path, timeouts", timeouts))
    out.extend(_other_engines())
    sys.path.insert(0, str(REPO / "tests"))
    from test_properties import _config  # the property suite's random replays

    for seed in range(properties):
        out.append((f"property seed {seed}", _config(seed, tmp)))
    # the model folder explicit, so that a baseline checked out elsewhere (whose
    # default is the folder beside it) reports the same canonical spec
    if (DATA / "aic" / "model_configs").exists():
        for _, spec in out:
            spec["engine"].setdefault("model_config_dir", str(DATA / "aic" / "model_configs"))
    return out


def _other_engines() -> list[tuple[str, dict]]:
    """SGLang and TensorRT-LLM: aggregated, P/D and attention data parallelism."""
    syn = lambda n, isl, osl, c: {"source": {"type": "synthetic", "num_requests": n, "isl": isl, "osl": osl},  # noqa: E731
                                  "load": {"mode": "concurrency", "concurrency": c}}
    eng = lambda backend, model, workers, **o: {  # noqa: E731
        "model": model, "system": "h100_sxm", "backend": backend, "workers": workers, **o}
    pd = {"disaggregated": {"prefill": {"count": 1, "tp": 2}, "decode": {"count": 1, "tp": 2},
                            "kv_transfer": {"bandwidth_gb_per_s": 50, "latency_ms": 0.2}}}
    dp = {"aggregated": {"count": 1, "tp": 1, "data_parallel_size": 4}}
    moe = "Qwen/Qwen3-30B-A3B"
    out = [
        ("sglang closed 256 x 8", {"engine": eng("sglang", "Qwen/Qwen3-32B", {"aggregated": {"count": 2, "tp": 2}}),
                                   "traffic": syn(2048, 1024, 256, 256)}),
        ("sglang P/D", {"engine": eng("sglang", "Qwen/Qwen3-32B", pd), "traffic": syn(1024, 2048, 128, 128)}),
        ("sglang DP attention", {"engine": eng("sglang", moe, dp), "traffic": syn(1024, 1024, 128, 128)}),
        ("trtllm closed 64 x 8", {"engine": eng("trtllm", "Qwen/Qwen3-32B", {"aggregated": {"count": 2, "tp": 2}}),
                                  "traffic": syn(1024, 1024, 256, 128)}),
        ("trtllm P/D", {"engine": eng("trtllm", "Qwen/Qwen3-32B", pd), "traffic": syn(1024, 2048, 128, 128)}),
        ("trtllm attention DP", {"engine": eng("trtllm", moe, {"aggregated": {"count": 1, "tp": 4}},
                                               trtllm={"enable_attention_dp": True}),
                                 "traffic": syn(1024, 1024, 128, 128)}),
    ]
    if AIC.exists():
        for name, spec in (out[0], out[3]):  # the closed loops
            spec = json.loads(json.dumps(spec))
            spec["engine"]["perf"] = {"source": "aic", "database": str(AIC)}
            out.append((name + ", aic", spec))
    return out


def _child(tree: str, cases_file: str, out_file: str) -> None:
    sys.path.insert(0, str(Path(tree) / "python"))
    import inspect

    import numpy as np

    import aisimulate

    timeline = "timeline" in inspect.signature(aisimulate.replay).parameters
    results = {}
    for name, spec in json.loads(Path(cases_file).read_text()):
        t0 = time.process_time()
        try:
            rep = aisimulate.replay(spec, timeline=True) if timeline else aisimulate.replay(spec)
        except Exception as exc:  # an error is a result too: both builds must raise it
            results[name] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        cpu = time.process_time() - t0
        h = hashlib.sha256()
        for r in rep.requests:
            h.update(json.dumps(r, allow_nan=False).encode())
            h.update(b"\n")
        tl = hashlib.sha256()
        if getattr(rep, "timeline", None) is not None:
            for k in sorted(rep.timeline):
                tl.update(k.encode())
                tl.update(np.ascontiguousarray(rep.timeline[k]).tobytes() if rep.timeline[k].dtype != object
                          else "\x00".join(map(str, rep.timeline[k])).encode())
        drop = [k for k in os.environ.get("SAME_REPORTS_NEW_SUMMARY_KEYS", "").split(",") if k]
        doc = rep.to_json()
        if drop:  # keys this change adds to every summary on purpose: compared without them
            parsed = json.loads(doc)
            new = {k: parsed["summary"].pop(k) for k in drop if k in parsed["summary"]}
            doc = json.dumps(parsed, sort_keys=True, indent=2) + "\n"
            results.setdefault("_new", {})[name] = sorted(new)
        results[name] = {"report": hashlib.sha256(doc.encode()).hexdigest(), "requests": h.hexdigest(),
                         "timeline": tl.hexdigest() if timeline else None, "n": len(rep.requests), "cpu_s": cpu,
                         "preemptions": rep.summary.get("preemptions")}
    Path(out_file).write_text(json.dumps(results))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", help="the other checkout (with a built extension)")
    ap.add_argument("--quick", action="store_true", help="shorter P/D and aic cases")
    ap.add_argument("--properties", type=int, default=150, help="property-suite seeds (default 150)")
    ap.add_argument("--new-summary-keys", default="",
                    help="summary keys a change adds on purpose (comma-separated): the reports are "
                         "compared without them, and each case lists those it has")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(*args.child)
        return 0
    if not args.baseline:
        ap.error("--baseline is required")
    with tempfile.TemporaryDirectory() as tmp:
        cs = cases(args.quick, args.properties, Path(tmp))
        cases_file = Path(tmp) / "cases.json"
        cases_file.write_text(json.dumps(cs))
        runs = {}
        for label, tree in (("baseline", args.baseline), ("this", str(REPO))):
            out = Path(tmp) / f"{label}.json"
            env = dict(os.environ, PYTHONPATH=str(Path(tree) / "python"),
                       SAME_REPORTS_NEW_SUMMARY_KEYS=args.new_summary_keys)
            subprocess.run([sys.executable, __file__, "--child", tree, str(cases_file), str(out)], check=True, env=env)
            runs[label] = json.loads(out.read_text())
    bad = 0
    for name, _ in cs:
        a, b = runs["baseline"][name], runs["this"][name]
        keys = [k for k in ("error", "report", "requests", "timeline") if a.get(k) is not None and b.get(k) is not None]
        same = all(a[k] == b[k] for k in keys) and ("error" in a) == ("error" in b)
        bad += not same
        cpu = f"cpu {a['cpu_s']:.2f} s → {b['cpu_s']:.2f} s" if "cpu_s" in a and "cpu_s" in b else a.get("error", "")
        added = runs["this"].get("_new", {}).get(name)
        print(f"{'same' if same else 'DIFFERENT':<9} {name:<40} {b.get('n', '')!s:>7} requests "
              f"{b.get('preemptions', '')!s:>6} preemptions  {'+'.join(keys)}  {cpu}"
              + (f"  (+ {', '.join(added)})" if added else ""))
    print(f"{len(cs) - bad} of {len(cs)} cases byte-identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
