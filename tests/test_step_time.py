"""aisimulate.step_time and memory_plan: a pass priced through the API lasts what the
replay's pass of the same batch lasts (its timeline), by both perf sources; the memory
plan is the replay's KV capacity; bad batches are ConfigErrors naming the field."""

from __future__ import annotations

import pytest

import aisimulate
from conftest import REPO

SHARED = REPO.parent / "shared" / "data" / "aic"
needs_tables = pytest.mark.skipif(not (SHARED / "systems" / "data").is_dir(),
                                  reason="aic needs ../shared/data/aic")

ENGINE = {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm",
          "workers": {"aggregated": {"count": 1, "tp": 2}},
          "scheduler": {"max_num_batched_tokens": 2048, "block_size": 16}}


def spec(perf: dict, **scheduler) -> dict:
    # one client sends the same 3,000-token prompt twice (a dataset of one entry), each
    # with 4 output tokens: the first prompt runs in two chunks (2,048 + 952), the
    # second finds 2,992 tokens cached (187 full blocks) and computes 8
    eng = {**ENGINE, "perf": perf, "scheduler": {**ENGINE["scheduler"], **scheduler}}
    return {"engine": eng,
            "traffic": {"source": {"type": "synthetic", "num_requests": 2, "isl": 3000, "osl": 4,
                                   "dataset": {"entries": 1, "sampling": "sequential"}},
                        "load": {"mode": "concurrency", "concurrency": 1}}}


# the passes the engine forms, in order (vLLM's scheduler: a chunk of at most 2,048
# tokens; the pass completing a prompt samples its first token; a decode's context is
# the tokens in its cache: 3,000 + k − 2 for output token k)
PASSES = [
    {"prefill": [(2048, 0, False)]},
    {"prefill": [(952, 2048)]},
    {"decode": [3000]}, {"decode": [3001]}, {"decode": [3002]},
    {"prefill": [(8, 2992)]},
    {"decode": [3000]}, {"decode": [3001]}, {"decode": [3002]},
]


@pytest.mark.parametrize("perf", [{"source": "roofline"},
                                  pytest.param({"source": "aic"}, marks=needs_tables)],
                         ids=["roofline", "aic"])
@pytest.mark.parametrize("async_scheduling", [False, True])
def test_step_time_is_the_replay_pass_time(perf, async_scheduling):
    s = spec(perf, async_scheduling=async_scheduling)
    report = aisimulate.replay(s, timeline=True, progress=False)
    tl = report.timeline
    assert list(tl["prefill_tokens"]) == [sum(c[0] for c in p.get("prefill", [])) for p in PASSES]
    assert list(tl["decode_requests"]) == [len(p.get("decode", [])) for p in PASSES]
    assert report.requests[1]["cached_tokens"] == 2992
    got = aisimulate.step_times(s, PASSES)
    for i, t in enumerate(got):
        # the timeline's ms are the core's ns / 1e6: the same integer ns
        assert round((tl["end_ms"][i] - tl["start_ms"][i]) * 1e6) == t.time_ns, i
        assert t.overlap_cpu == async_scheduling
    one = aisimulate.step_time(s["engine"], PASSES[1])  # the engine mapping alone: the same
    assert one.time_ns == got[1].time_ns and one.perf_model == got[1].perf_model


def test_breakdown_adds_up_to_the_time():
    t = aisimulate.step_time({**ENGINE, "scheduler": {"async_scheduling": False}},
                             {"prefill": [(512, 1536)], "decode": [1024] * 32})
    parts = t.breakdown_ms
    assert set(parts) >= {"gemm", "context_attention", "generation_attention", "all_reduce", "overhead",
                          "experts", "dispatch"}
    assert parts["all_reduce"] > 0 and parts["experts"] == 0  # TP 2, a dense model
    assert abs(sum(parts.values()) - t.time_ms) < 1e-6
    # the engine step's CPU cost: 1,000 µs + 40 µs × 33 scheduled sequences (the
    # defaults of core/config/defaults.go)
    assert parts["overhead"] == pytest.approx(1.0 + 0.040 * 33)
    # with async scheduling the CPU work runs beside the kernels: max(kernels, cpu)
    a = aisimulate.step_time({**ENGINE, "scheduler": {"async_scheduling": True}},
                             {"prefill": [(512, 1536)], "decode": [1024] * 32})
    kernels = sum(parts.values()) - parts["overhead"]
    assert a.time_ms == pytest.approx(max(kernels, parts["overhead"]), abs=1e-6)


def test_memory_plan_is_the_replays_kv_capacity():
    s = spec({"source": "roofline"})
    plan = aisimulate.memory_plan(s)["aggregated"]
    meta = aisimulate.check(s)
    assert plan["num_gpu_blocks"] == meta["num_gpu_blocks"]
    p = plan["plan"]
    assert p["kv_budget_bytes"] == (p["usable_bytes"] - p["weight_bytes"] - p["activation_bytes"]
                                    - p["nccl_bytes"] - p["other_bytes"] - p["sliding_bytes"])
    # Llama-3.1-8B at TP 2: 8 KV heads of 128, 32 layers, bf16: 4 · 128 · 32 · 2 · 2 bytes
    assert p["kv_bytes_per_token"] == 4 * 128 * 32 * 2 * 2
    assert plan["num_gpu_blocks"] == p["kv_budget_bytes"] // (p["kv_bytes_per_token"] * 16)
    # 0.9 of the H100's 80 GiB
    assert p["usable_bytes"] == int(0.9 * 80 * 2**30)


def test_disaggregated_pools_are_priced_by_name():
    eng = {**ENGINE, "workers": {"disaggregated": {
        "prefill": {"count": 1, "tp": 1}, "decode": {"count": 1, "tp": 2},
        "kv_transfer": {"bandwidth_gb_per_s": 50, "latency_ms": 0.2}}}}
    b = {"decode": [1000] * 8}
    with pytest.raises(aisimulate.ConfigError) as e:
        aisimulate.step_time(eng, b)
    assert e.value.field == "pool" and "prefill and decode" in str(e.value)
    pre, dec = aisimulate.step_time(eng, b, pool="prefill"), aisimulate.step_time(eng, b, pool="decode")
    assert pre.pool == "prefill" and dec.pool == "decode"
    assert pre.breakdown_ns["all_reduce"] == 0 < dec.breakdown_ns["all_reduce"]  # TP 1 and TP 2
    plans = aisimulate.memory_plan(eng)
    assert [plans[k]["tp"] for k in ("prefill", "decode")] == [1, 2]


@pytest.mark.parametrize("batch,field", [
    ({"prefill": [(0, 0)]}, "batch.prefill[0].tokens"),
    ({"prefill": [(10, -1)]}, "batch.prefill[0].cached"),
    ({"prefill": [(10, 0, 1)]}, "batch.prefill[0].samples"),
    ({"prefill": [{"tokens": 10, "cache": 3}]}, "batch.prefill[0].cache"),
    ({"decode": [100, 2.5]}, "batch.decode[1]"),
    ({"decode": [-1]}, "batch.decode[0]"),
    ({}, "batch"),
    ({"decodes": [1]}, "batch.decodes"),
    ({"decode": [10], "spec_tokens": -1}, "batch.spec_tokens"),
])
def test_a_bad_batch_names_its_field(batch, field):
    with pytest.raises(aisimulate.ConfigError) as e:
        aisimulate.step_time(ENGINE, batch)
    assert e.value.field == field


def test_a_deployment_that_does_not_fit_is_infeasible():
    with pytest.raises(aisimulate.InfeasibleError):
        aisimulate.memory_plan({"model": "Qwen/Qwen3-32B", "system": "h100_sxm",
                                "workers": {"aggregated": {"count": 1, "tp": 1}},
                                "scheduler": {"gpu_memory_utilization": 0.5}})


LIMITED = {**ENGINE, "scheduler": {"max_num_batched_tokens": 2048, "max_num_seqs": 4, "max_model_len": 4096,
                                   "block_size": 16}}


@pytest.mark.parametrize("batch,message", [
    # 5 decodes: 5 sequences, over 4
    ({"decode": [100] * 5}, "batch: 5 sequences, over max_num_seqs 4"),
    # 2,046 prompt tokens + 3 decodes = 2,049 tokens, over 2,048
    ({"prefill": [(2046, 0)], "decode": [10, 10, 10]},
     "batch: 2049 tokens computed, over the token budget max_num_batched_tokens 2048"),
    # 2 decodes verifying 2,047 draft tokens: 2 + 2,047 = 2,049
    ({"decode": [10, 10], "spec_tokens": 2047}, "batch: 2049 tokens computed, over the token budget"),
    # a decode after 4,095 cached tokens computes token 4,096 and samples a 4,097th
    ({"decode": [10, 4095]}, "batch: decode[1] makes a request of 4097 tokens, over max_model_len 4096"),
    # a chunk of 96 after 4,000 cached: 4,096 computed and a 4,097th sampled
    ({"prefill": [(96, 4000)]}, "batch: prefill[0] makes a request of 4097 tokens, over max_model_len 4096"),
])
def test_a_pass_the_engine_never_runs_warns_and_is_priced(batch, message):
    with pytest.warns(aisimulate.EngineLimitWarning) as caught:
        t = aisimulate.step_time(LIMITED, batch)
    assert len(caught) == 1 and str(caught[0].message).startswith(message), [str(w.message) for w in caught]
    assert "the aggregated pool's engine never runs this pass; it is priced all the same" in str(caught[0].message)
    assert caught[0].filename == __file__  # the caller's line
    assert t.time_ns > 0


def test_passes_at_the_limits_do_not_warn():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", aisimulate.EngineLimitWarning)
        aisimulate.step_times(LIMITED, [{"decode": [100] * 4}, {"prefill": [(2045, 0)], "decode": [10, 10, 10]},
                                        {"decode": [4094]}, {"prefill": [(95, 4000)]}])
    # several limits in one batch, and a batch of a list: one warning each, named batches[i]
    with pytest.warns(aisimulate.EngineLimitWarning) as caught:
        aisimulate.step_times(LIMITED, [{"decode": [10]}, {"decode": [4095] * 5}])
    assert [str(w.message).split(":")[:2] for w in caught] == [
        ["batches[1]", " 5 sequences, over max_num_seqs 4 (engine.scheduler.max_num_seqs)"],
        ["batches[1]", " decode[0] makes a request of 4097 tokens, over max_model_len 4096 "
                       "(engine.scheduler.max_model_len)"]]


@pytest.mark.parametrize("batch,message", [
    ({"decode": [100] * 9}, "batch: 9 sequences, over max_num_seqs 8 (engine.trtllm.max_batch_size)"),
    ({"prefill": [(1000, 0)], "decode": [10]},
     "batch: 1001 tokens computed, over the token budget max_num_batched_tokens 1000 (engine.trtllm.max_num_tokens)"),
    ({"decode": [3000]}, "batch: decode[0] makes a request of 3002 tokens, over max_model_len 3000 "
                         "(engine.trtllm.max_seq_len)"),
])
def test_a_limit_is_named_by_the_field_of_the_engine_that_sets_it(batch, message):
    # a TensorRT-LLM worker's limits are its own options: the warning names them, not
    # vLLM's engine.scheduler fields
    eng = {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm", "backend": "trtllm",
           "workers": {"aggregated": {"count": 1, "tp": 1}},
           "trtllm": {"max_batch_size": 8, "max_num_tokens": 1000, "max_seq_len": 3000}}
    with pytest.warns(aisimulate.EngineLimitWarning) as caught:
        aisimulate.step_time(eng, batch)
    assert [str(w.message).split(": the ")[0] for w in caught] == [message]


def test_the_max_model_len_rule_is_the_replays():
    # prompt + output ≤ max_model_len: 4,000 + 96 runs, and its last decode (output token
    # 96, context 4,000 + 96 − 2 = 4,094) is within the limit; 4,000 + 97 is rejected,
    # and the decode it would need (context 4,095) warns
    def run(osl):
        s = {"engine": LIMITED, "traffic": {"source": {"type": "synthetic", "num_requests": 1, "isl": 4000,
                                                       "osl": osl},
                                            "load": {"mode": "concurrency", "concurrency": 1}}}
        return aisimulate.replay(s, progress=False).requests[0]["status"]

    assert (run(96), run(97)) == ("completed", "rejected")
    with pytest.warns(aisimulate.EngineLimitWarning):
        aisimulate.step_time(LIMITED, {"decode": [4000 + 97 - 2]})


def test_an_sglang_eager_pass_is_priced_as_the_replay_prices_it():
    # SGLang runs a prefill pass, and a decode pass above cuda_graph_max_bs, eagerly: the
    # host launches each of Llama-3.1-8B's 32 layers, 1,000 µs each here, so the pass
    # lasts at least 32 ms. With the overlap scheduler (SGLang's default) the CPU step
    # runs beside the kernels: max(kernels, overhead + 32 ms).
    eng = {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm", "backend": "sglang",
           "workers": {"aggregated": {"count": 1, "tp": 1}},
           "sglang": {"eager_launch_us_per_layer": 1000, "cuda_graph_max_bs": 16}}
    launch_ns = 32 * 1000 * 1000
    one = aisimulate.step_time(eng, {"prefill": [(16, 0)]})
    assert one.overlap_cpu and one.breakdown_ns["host_launch"] == launch_ns
    kernels = sum(v for k, v in one.breakdown_ns.items() if k not in ("overhead", "host_launch"))
    assert kernels < launch_ns  # a 16-token prefill of an 8B model is far shorter
    assert one.time_ns == round(one.breakdown_ns["overhead"] + launch_ns)
    # a decode pass of at most cuda_graph_max_bs is a CUDA graph's: no launch
    graph = aisimulate.step_time(eng, {"decode": [1024] * 16})
    assert "host_launch" not in graph.breakdown_ns
    assert graph.time_ns == aisimulate.step_time({**eng, "sglang": {"cuda_graph_max_bs": 16}},
                                                 {"decode": [1024] * 16}).time_ns
    eager = aisimulate.step_time(eng, {"decode": [1024] * 17})
    assert eager.time_ns == round(eager.breakdown_ns["overhead"] + launch_ns)
    # the replay's first pass is that 16-token prefill: the same integer ns
    report = aisimulate.replay({"engine": eng, "traffic": {
        "source": {"type": "synthetic", "num_requests": 1, "isl": 16, "osl": 2},
        "load": {"mode": "concurrency", "concurrency": 1}}}, timeline=True, progress=False)
    tl = report.timeline
    assert tl["prefill_tokens"][0] == 16
    assert round((tl["end_ms"][0] - tl["start_ms"][0]) * 1e6) == one.time_ns


def test_a_llama_one_token_extend_pays_the_measured_eager_launch():
    # Left out, engine.sglang.eager_launch_us_per_layer is the architecture's measured
    # value: Llama's layer (LlamaForCausalLM) 8,230 / 32 = 257.1875 µs, sgl-project/sglang
    # pull request 1401's eager forward of Meta-Llama-3-8B (8.23 ms, 32 layers). A
    # one-token prefill of Llama-3.1-8B (32 layers) on one H200: the host launches
    # 32 × 257.1875 µs = 8.23 ms, far above the kernels' time, so with the overlap
    # scheduler the pass is overhead + 8.23 ms. Qwen3-32B has no measured value: no launch.
    eng = {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h200_sxm", "backend": "sglang",
           "workers": {"aggregated": {"count": 1, "tp": 1}}}
    one = aisimulate.step_time(eng, {"prefill": [(1, 0)]})
    assert one.breakdown_ns["host_launch"] == 8_230_000
    kernels = sum(v for k, v in one.breakdown_ns.items() if k not in ("overhead", "host_launch"))
    assert kernels < 8_230_000
    assert one.overlap_cpu and one.time_ns == round(one.breakdown_ns["overhead"] + 8_230_000)
    qwen = aisimulate.step_time({**eng, "model": "Qwen/Qwen3-32B"}, {"prefill": [(1, 0)]})
    assert "host_launch" not in qwen.breakdown_ns
    # from 0.5.10 piecewise CUDA graphs replay the extend pass (on by default): no launch,
    # the kernels' time as before
    pcg = aisimulate.step_time({**eng, "backend_version": "0.5.10"}, {"prefill": [(1, 0)]})
    assert "host_launch" not in pcg.breakdown_ns
