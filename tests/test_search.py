"""aisimulate.search: capacity planning by simulation. The recommended deployment's spec
replays to the result the search reports; the same search gives the same answer twice,
at any parallelism, and when resumed after an interruption; the launch commands are the
engines' own flags; bad questions are ConfigErrors naming the field."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import aisimulate
from aisimulate.analysis.search import _front, _run
from aisimulate.analysis.search._front import throughput_per_gpu
from aisimulate.analysis.search.flags import launch_commands
from conftest import REPO

QUESTION = {"engine": {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm"},
            "traffic": {"source": {"type": "synthetic", "num_requests": 200,
                                   "isl": {"kind": "uniform", "min": 400, "max": 1600},
                                   "osl": {"kind": "uniform", "min": 20, "max": 200}},
                        "load": {"mode": "rate", "rate_rps": 25}}}
SLO = {"ttft_ms": 400, "tpot_ms": 25}
SPACE = dict(gpus=2, max_num_seqs=[16, 128], max_num_batched_tokens=[1024], weights=[None], kv_cache=[None])


def _answer(res) -> dict:
    out = json.loads(res.to_json())
    out.pop("elapsed_s")
    return out


@pytest.fixture(scope="module")
def searched():
    return aisimulate.search(QUESTION, slo=SLO, jobs=2, progress=False, **SPACE)


def test_the_best_deployment_replays_to_its_reported_result(searched):
    res = searched
    c = res.counts
    assert c["candidates"] == len(res.candidates) == c["simulated"] + c["stopped"] + c["pruned"]
    b = res.best
    assert b is not None and b.result["meets"] is True
    # every candidate that met the SLO is within 1 % of the best's throughput per GPU or below it
    met = [r for r in res.results if r.get("meets")]
    assert max(r["output_tps_per_gpu"] for r in met) <= b.result["output_tps_per_gpu"] / (1 - _front.TIE)
    # the deployment's spec, replayed on its own, gives the summary the search reported
    report = aisimulate.replay(b.spec, progress=False)
    assert report.summary == b.result["summary"] | {k: report.summary[k] for k in report.summary
                                                    if k not in b.result["summary"]}
    assert report.metadata["gpus"] == b.gpus
    ttft = sorted(r["ttft_ms"] for r in report.requests)
    # numpy's linear p90 of the replay's TTFTs is the search's
    import numpy as np

    assert b.result["percentiles"]["ttft_ms"] == pytest.approx(float(np.percentile(ttft, 90)), rel=1e-12)
    assert b.command.startswith("# aggregated: ") or b.command.startswith("# prefill: ")
    assert "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size" in b.command


def test_the_front_is_not_dominated(searched):
    pts = [(r["output_tps_per_gpu"], r["slo_ratio"]) for r in searched.front]
    assert pts == sorted(pts, key=lambda p: -p[0])
    for r in searched.results:
        if r["fate"] != "simulated":
            continue
        x, y = r["output_tps_per_gpu"], r["slo_ratio"]
        dominated = any(fx >= x and fy <= y and (fx > x or fy < y) for fx, fy in pts)
        assert dominated or (x, y) in pts, r["key"]


def test_the_same_search_twice_gives_the_same_answer(searched):
    again = aisimulate.search(QUESTION, slo=SLO, jobs=1, progress=False, **SPACE)
    assert _answer(again) == _answer(searched)


def test_an_interrupted_search_resumes_to_the_same_answer(searched, tmp_path):
    out = tmp_path / "run"
    # a Ctrl-C where the caller waits on the core (after the third result it read): it
    # reaches the caller, the core is stopped (core/search TestRunStopsAndKeepsWhatItHanded
    # stops one mid-run), and the journal holds only whole results
    original, seen = _run.run_local, []

    def interrupted(request, journal, indices, jobs, progress, on_result=None, bar=None):
        def stop_after_three(r):
            seen.append(r["index"])
            if len(seen) == 3:
                raise KeyboardInterrupt
        return original(request, journal, indices, jobs, progress, on_result=stop_after_three, bar=bar)

    _run_local, aisimulate.analysis.search.run_local = aisimulate.analysis.search.run_local, interrupted
    try:
        with pytest.raises(KeyboardInterrupt):
            aisimulate.search(QUESTION, slo=SLO, jobs=1, progress=False, out=out, **SPACE)
    finally:
        aisimulate.analysis.search.run_local = _run_local
    lines = (out / "search.jsonl").read_text().splitlines()
    assert len(lines) - 1 >= 3 and all(json.loads(line) for line in lines)
    # the journal of a search stopped after three results, the last line cut short as a
    # process killed while writing leaves it
    (out / "search.jsonl").write_text("\n".join(lines[:4]) + '\n{"index": 99, "key": "cut')
    res = aisimulate.search(QUESTION, slo=SLO, jobs=2, progress=False, out=out, **SPACE)
    assert res.resumed == 3
    assert _answer(res) == _answer(searched)
    # once done, the same question runs nothing
    assert aisimulate.search(QUESTION, slo=SLO, progress=False, out=out, **SPACE).resumed == len(searched.results)
    # another question's journal is refused, unless started over
    other = dict(SLO, ttft_ms=500)
    with pytest.raises(aisimulate.ConfigError) as e:
        aisimulate.search(QUESTION, slo=other, progress=False, out=out, **SPACE)
    assert e.value.field == "out"
    assert aisimulate.search(QUESTION, slo=other, progress=False, out=out, resume=False, **SPACE).resumed == 0


def _agree(fast_res, full) -> int:
    """Every verdict of ``fast_res`` (pruned, stopped early, dominated) is the full
    replay's; the number of dominated candidates."""
    assert full.counts["stopped"] == 0
    bound = fast_res.offer.get("max_output_tps")
    dominated = 0
    for fast, slow in zip(fast_res.results, full.results):
        if fast["fate"] == "simulated":
            assert fast == slow
        elif fast.get("kind") == "dominated":
            # not replayed, its verdict unknown: its GPU count's bound is below the best
            # of fewer GPUs by more than the tie (so it cannot be recommended)
            dominated += 1
            g = fast["gpus"]
            lead = max(throughput_per_gpu(r) for r in fast_res.results if r["meets"] and r["gpus"] < g)
            assert fast["meets"] is None and bound / g < (1 - _front.TIE) * lead
        elif fast.get("kind") != "invalid":
            assert slow["meets"] is False, fast["key"]
        if slow["meets"]:
            # the bound holds on every candidate that met the SLO
            assert slow["output_tps_per_gpu"] <= bound / slow["gpus"]
    assert full.best.key == fast_res.best.key
    return dominated


def test_no_early_stop_and_no_prune_agree_on_every_verdict(searched):
    full = aisimulate.search(QUESTION, slo=SLO, jobs=2, progress=False, early_stop=False, prune=False, **SPACE)
    _agree(searched, full)


def test_a_gpu_count_that_cannot_be_recommended_is_not_replayed():
    # at 8 req/s one GPU meets the SLO with about the load's output tokens/s; two GPUs
    # can report at most half that per GPU (the load's tokens over its sends' span):
    # dominated, whatever their verdict
    q = json.loads(json.dumps(QUESTION))
    q["traffic"]["load"]["rate_rps"] = 8
    fast = aisimulate.search(q, slo=SLO, jobs=2, progress=False, **SPACE)
    full = aisimulate.search(q, slo=SLO, jobs=2, progress=False, early_stop=False, prune=False, **SPACE)
    assert _agree(fast, full) == sum(r["gpus"] == 2 for r in fast.results) > 0
    assert fast.best.gpus == 1
    fam = [g for g in fast.families() if g["kind"] == "dominated"]
    assert [g["family"] for g in fam] == ["every candidate of 2 GPUs"]


@pytest.mark.parametrize("kwargs,field", [
    (dict(gpus=0), "gpus"), (dict(gpus="8"), "gpus"), (dict(gpus=[0, 2]), "gpus"),
    (dict(slo={}), "slo"), (dict(slo={"ttft_ms": -1}), "slo.ttft_ms"), (dict(percentile=0), "percentile"),
    (dict(modes=["pd"]), "modes"), (dict(tp=[0]), "space"), (dict(backend="slurm"), "backend"),
    (dict(jobs=0), "jobs"),
])
def test_a_bad_question_names_its_field(kwargs, field):
    args = dict(gpus=2, slo=SLO) | kwargs
    with pytest.raises(aisimulate.ConfigError) as e:
        aisimulate.search(QUESTION, progress=False, **args)
    assert e.value.field == field


def test_launch_commands_in_each_engines_words():
    vllm = {"engine": {"model": "m/M", "backend": "vllm",
                       "scheduler": {"max_num_seqs": 256, "max_num_batched_tokens": 8192, "block_size": 16,
                                     "gpu_memory_utilization": 0.9, "max_model_len": 0},
                       "quantization": {"weights": "fp8", "kv_cache": "fp8"},
                       "workers": {"disaggregated": {"prefill": {"count": 1, "tp": 2},
                                                     "decode": {"count": 3, "tp": 4, "data_parallel_size": 2,
                                                                "enable_expert_parallel": True}}}}}
    pre, dec = launch_commands(vllm)
    assert (pre["pool"], pre["workers"], pre["gpus_per_worker"]) == ("prefill", 1, 2)
    assert (dec["workers"], dec["gpus_per_worker"]) == (3, 8)
    assert pre["argv"][:5] == ["vllm", "serve", "m/M", "--tensor-parallel-size", "2"]
    assert dec["command"] == ("vllm serve m/M --tensor-parallel-size 4 --data-parallel-size 2 --enable-expert-parallel "
                              "--max-num-seqs 256 --max-num-batched-tokens 8192 --quantization fp8 --kv-cache-dtype fp8 "
                              "--kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'")
    # a pool's own batch limits (engine.workers.*.scheduler) in its servers' flags, the
    # engine's for the limit it leaves out
    vllm["engine"]["workers"]["disaggregated"]["prefill"]["scheduler"] = {"max_num_batched_tokens": 16384}
    vllm["engine"]["workers"]["disaggregated"]["decode"]["scheduler"] = {"max_num_seqs": 64, "max_num_batched_tokens": 2048}
    pre, dec = launch_commands(vllm)
    assert "--max-num-seqs 256 --max-num-batched-tokens 16384 " in pre["command"]
    assert "--max-num-seqs 64 --max-num-batched-tokens 2048 " in dec["command"]
    trt = {"engine": {"model": "m/M", "backend": "trtllm",
                      "trtllm": {"max_batch_size": 64, "max_num_tokens": 4096, "enable_attention_dp": True,
                                 "kv_cache_config": {"free_gpu_memory_fraction": 0.85}},
                      "quantization": {"kv_cache": "fp8"},
                      "workers": {"aggregated": {"count": 2, "tp": 8, "enable_expert_parallel": True}}}}
    (agg,) = launch_commands(trt)
    assert agg["command"] == ("trtllm-serve m/M --backend pytorch --tp_size 8 --ep_size 8 --max_batch_size 64 "
                              "--max_num_tokens 4096 --kv_cache_free_gpu_memory_fraction 0.85 "
                              "--extra_llm_api_options aggregated.yaml")
    assert agg["options"] == {"enable_attention_dp": True, "kv_cache_config": {"dtype": "fp8"}}
    sgl = {"engine": {"model": "m/M", "backend": "sglang",
                      "sglang": {"max_running_requests": 128, "chunked_prefill_size": 8192},
                      "workers": {"aggregated": {"count": 1, "tp": 4}}}}
    assert launch_commands(sgl)[0]["command"] == ("python -m sglang.launch_server --model-path m/M --tp 4 "
                                                  "--max-running-requests 128 --chunked-prefill-size 8192")


def test_the_search_command(tmp_path):
    cfg = tmp_path / "q.json"
    cfg.write_text(json.dumps(QUESTION))
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "aisimulate", "search", str(cfg), "--gpus", "2", "--slo", "ttft_ms=400,tpot_ms=25",
           "--max-num-seqs", "16,128", "--max-num-batched-tokens", "1024", "--weights", "checkpoint",
           "--kv-cache", "default", "--out", str(out), "--plot", str(tmp_path / "p.png"), "--format", "json", "-q"]
    env = {"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer["best"]["launch"][0]["argv"][:2] == ["vllm", "serve"]
    assert json.loads((out / "search.json").read_text())["best"]["key"] == answer["best"]["key"]
    assert (tmp_path / "p.png").stat().st_size > 1000
    # the plot is a single file: replaced only with --force, refused before any search
    again = subprocess.run(cmd[:-3] + ["-q"], capture_output=True, text=True, timeout=600, env=env)
    assert again.returncode == 2 and f"--plot {tmp_path / 'p.png'}: {tmp_path / 'p.png'} exists" in again.stderr
    table = subprocess.run(cmd[:-3] + ["-q", "--force"], capture_output=True, text=True, timeout=600, env=env)
    assert table.returncode == 0 and f"best: {answer['best']['key']}" in table.stdout
    assert "resumed from the journal" in table.stdout
    for plot, why in ((tmp_path / "p.txt", "the file name must end in one of"), (tmp_path, "is a folder")):
        bad = subprocess.run(cmd[:13] + ["--plot", str(plot)], capture_output=True, text=True, timeout=120, env=env)
        assert bad.returncode == 2 and f"--plot {plot}: {why}" in bad.stderr and not bad.stdout
    bad = subprocess.run(cmd[:7] + ["--slo", "ttft_ms=400", "--restart"], capture_output=True, text=True,
                         timeout=120, env=env)
    assert bad.returncode == 2 and "--restart applies to --out" in bad.stderr


def _result(index, mode, counts, tp, fate, kind=None, reason="", kv=""):
    pools = [{"count": n, "tp": tp} for n in counts]
    return {"index": index, "candidate": {"mode": mode, "pools": pools, "weights": "", "kv_cache": kv},
            "fate": fate, "kind": kind, "reason": reason}


def test_a_family_is_one_worker_of_each_pool_with_the_counts_it_covers():
    ttft = "ttft_ms p90 is certain to exceed 400 ms"
    tpot = "tpot_ms p90 is certain to exceed 25 ms"
    results = [_result(0, "aggregated", [1], 1, "pruned", "memory", "does not fit a"),
               _result(1, "aggregated", [2], 1, "pruned", "memory", "does not fit b"),
               _result(2, "aggregated", [4], 1, "pruned", "memory", "does not fit c"),
               _result(3, "aggregated", [3], 1, "pruned", "memory", "fp8 KV", kv="fp8"),
               _result(4, "aggregated", [1], 2, "stopped", "slo", ttft),
               _result(5, "aggregated", [2], 2, "stopped", "slo", tpot),
               _result(6, "aggregated", [3], 2, "stopped", "slo", tpot),
               _result(7, "aggregated", [4], 2, "simulated")]
    results += [_result(8 + i, "disaggregated", [p, d], 2, "stopped", "slo", ttft)
                for i, (p, d) in enumerate([(1, 1), (2, 1), (1, 2)])]
    results += [_result(11 + p, "disaggregated", [p, 1], 1, "pruned", "memory", "m") for p in range(1, 8)]
    fam = [(g["fate"], g["kind"], g["family"], g["workers"], g["candidates"], g["reason"])
           for g in _front.families(results)]
    assert fam == [
        ("pruned", "memory", "aggregated TP1, checkpoint weights, default KV", "1\u20132, 4 workers", 3,
         "does not fit a"),
        ("pruned", "memory", "aggregated TP1, checkpoint weights, fp8 KV", "3 workers", 1, "fp8 KV"),
        ("stopped", "slo", "aggregated TP2, ttft_ms", "1 worker", 1, ttft),
        ("stopped", "slo", "aggregated TP2, tpot_ms", "2\u20133 workers", 2, tpot),
        ("stopped", "slo", "disaggregated TP2 + TP2, ttft_ms", "1+1, 1+2, 2+1 workers", 3, ttft),
        ("pruned", "memory", "disaggregated TP1 + TP1, checkpoint weights, default KV",
         "7 splits, 1+1 \u2026 7+1 workers", 7, "m"),
    ]


@pytest.mark.parametrize("name", ["llama-70b-h100.yaml", "qwen3-235b-h200.yaml"])
def test_the_benchmark_questions_enumerate(name):
    # make bench's searches (scripts/bench_search.py): the questions load and their
    # candidates are enumerated (nothing simulated here)
    from aisimulate.binding import native as _native
    from aisimulate.config import load_config

    path = REPO / "examples" / "search" / name
    if not (REPO.parent / "shared" / "data").is_dir():
        pytest.skip("the question reads ../shared/data")
    gpus = list(range(1, 9)) if name.startswith("llama") else [8, 16]
    rq = {"spec": load_config(path).data, "space": {"gpus": gpus},
          "slo": {"ttft_ms": 1000.0, "tpot_ms": 40.0, "percentile": 90.0}}
    plan = _native.call("SearchPlan", json.dumps(rq), "plan")
    assert plan["offer"]["requests"] == 2000 and plan["offer"]["fixed_sends"]
    assert {c["gpus"] for c in plan["candidates"]} <= set(gpus)
    assert len(plan["candidates"]) > 1000


def _cli(tmp_path, *args, child: str = ""):
    """``aisimulate search`` on QUESTION in a subprocess (``child``: Python run first)."""
    cfg = tmp_path / "q.json"
    cfg.write_text(json.dumps(QUESTION))
    argv = ["aisimulate", "search", str(cfg), *args, "-q"]
    code = child + f"import sys\nsys.argv = {argv!r}\nimport aisimulate.cli as cli\ncli.console_main()\n"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"})


def test_a_space_past_the_limit_is_refused_before_it_is_made(tmp_path):
    # 512 GPUs of Llama-3.1-8B: 27.5 million candidates (core/search Count, checked
    # against the enumeration there), refused by the plan without making one; the
    # command's message names --gpus and how to narrow the space
    with pytest.raises(aisimulate.ConfigError) as e:
        aisimulate.search(QUESTION, gpus=512, slo=SLO, progress=False)
    assert e.value.field == "gpus" and "more than the search's limit of 50000" in e.value.reason
    proc = _cli(tmp_path, "--gpus", "512", "--slo", "ttft_ms=500")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("aisimulate: error: --gpus: the space holds ") and "--tp, --modes" in proc.stderr
    # a budget past the largest count names it, never its 100,000 counts
    proc = _cli(tmp_path, "--gpus", "100000", "--slo", "ttft_ms=500")
    assert (proc.returncode, proc.stderr) == (2, "aisimulate: error: --gpus: 100000 GPUs: at most 65536\n")


def test_the_price_option_is_replays(tmp_path):
    from aisimulate.cli import parser

    base = ["search", "q.yaml", "--gpus", "2", "--slo", "ttft_ms=500"]
    assert parser().parse_args(base + ["--gpu-hour-price", "2.5"]).gpu_hour_price == 2.5
    assert parser().parse_args(base + ["--price-per-gpu-hour", "3"]).gpu_hour_price == 3.0  # the old name
    for bad in ("inf", "nan", "0", "2e6"):  # replay's bounds: (0, 1e6] (aisimulate.report.MAX_PRICE_PER_GPU_HOUR)
        proc = _cli(tmp_path, "--gpus", "2", "--slo", "ttft_ms=500", "--gpu-hour-price", bad)
        assert proc.returncode == 2 and "--gpu-hour-price must be a number in (0, 1000000]" in proc.stderr
    with pytest.raises(aisimulate.ConfigError) as e:
        aisimulate.search(QUESTION, gpus=2, slo=SLO, progress=False, price_per_gpu_hour=float("inf"))
    assert e.value.field == "price_per_gpu_hour"


def test_sigterm_stops_the_search_and_keeps_its_journal(tmp_path):
    # SIGTERM raised in the command's own process once the first result is read (the
    # handler runs before raise_signal returns: no timing): the core is stopped, the
    # command says "terminated" and exits 143, and the journal holds whole results that
    # the same command resumes from
    out = tmp_path / "run"
    args = ["--gpus", "2", "--slo", "ttft_ms=400,tpot_ms=25", "--max-num-seqs", "16,128",
            "--max-num-batched-tokens", "1024", "--weights", "checkpoint", "--kv-cache", "default",
            "--out", str(out), "--jobs", "1"]
    child = ("import signal\n"
             "import aisimulate.analysis.search as s\n"
             "real = s.run_local\n"
             "def run_local(request, journal, indices, jobs, progress, on_result=None, bar=None):\n"
             "    return real(request, journal, indices, jobs, progress, bar=bar,\n"
             "                on_result=lambda r: signal.raise_signal(signal.SIGTERM))\n"
             "s.run_local = run_local\n")
    proc = _cli(tmp_path, *args, child=child)
    assert (proc.returncode, proc.stderr, proc.stdout) == (143, "aisimulate: error: terminated\n", "")
    lines = (out / "search.jsonl").read_text().splitlines()
    assert len(lines) >= 2 and all(json.loads(line) for line in lines)
    assert not (out / "search.json").exists()
    again = _cli(tmp_path, *args)
    assert again.returncode == 0 and "resumed from the journal" in again.stdout, again.stderr
    # another question's journal: the command says its own option to start over
    other = _cli(tmp_path, *args[:2], "--slo", "ttft_ms=500", *args[4:])
    assert other.returncode == 2 and "or --restart to start over there" in other.stderr


def test_an_out_that_cannot_be_a_folder_is_named(tmp_path, capsys):
    # the journal's folder: a file in its place, or a path that cannot be made, is the
    # ConfigError of field out (search()) and exit 2 naming --out (the command), not an OSError
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out, why in ((afile, f"{afile}: is a file, not a folder"),
                     (afile / "sub", f"{afile / 'sub'}: cannot write the search journal there: Not a directory")):
        with pytest.raises(aisimulate.ConfigError) as info:
            aisimulate.search(QUESTION, out=out, progress=False, **SPACE, slo=SLO)
        assert info.value.field == "out" and info.value.reason == why
        from aisimulate import cli
        cfg = tmp_path / "q.json"
        cfg.write_text(json.dumps(QUESTION))
        assert cli.main(["search", str(cfg), "--gpus", "2", "--slo", "ttft_ms=400", "--out", str(out), "-q"]) == 2
        assert capsys.readouterr().err == f"aisimulate: error: --out: {why}\n"
