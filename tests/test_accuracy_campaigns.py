"""Each silicon row simulated with its campaign's procedure (aisimulate.tools.accuracy.campaigns)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from aisimulate.tools import accuracy
from aisimulate.tools.accuracy import campaigns

MOE = accuracy.SHARED_DATA / "silicon" / "vllm_moe_dev.csv"
ALIASES = accuracy.SHARED_DATA / "silicon" / "model_aliases.csv"

UTC = timezone.utc


@pytest.mark.parametrize("source, name, measured", [
    ("source_file=aic-auto-gap-analysis/2026-01/qwen3.csv; row=3", "aiconfigurator", None),
    ("source_file=/home/x/aic-auto-gap-analysis/h100.csv", "aiconfigurator", None),
    # an InferenceX export: its measured time, to the second
    ("source_file=2026-03-25.csv; model=MiniMax-M2.5; silicon_concurrency=32; measured=2026-03-27T07:59:49Z; "
     "wip=False; image=vllm/vllm-openai:v0.18.0", "inferencex", datetime(2026, 3, 27, 7, 59, 49, tzinfo=UTC)),
    # the database dump gives a date: the end of that day
    ("db-dump/2026-04-27; config_id=606; silicon_concurrency=8; measured=2026-03-01T00:00:00.000Z; workflow_run_id=305",
     "inferencex", datetime(2026, 3, 1, 23, 59, 59, 999999, tzinfo=UTC)),
    # no measured time: the export's date bounds it
    ("source_file=2026-04-06.csv; model=x", "inferencex", datetime(2026, 4, 6, 23, 59, 59, 999999, tzinfo=UTC)),
    ("source_file=kimi-k2.5-gap-analysis.csv; model=Kimi-K2.5", "unknown", None),
    ("source_file=", "unknown", None),
    ("", "unknown", None),
])
def test_campaign_of_a_row(source, name, measured):
    c = campaigns.campaign_of({"silicon_data_source": source})
    assert (c.name, c.measured) == (name, measured)


_RUN = {"backend": "vllm", "model_path": "moonshotai/Kimi-K2.5", "system": "h200_sxm", "isl": "1024",
        "osl": "1024", "batch_size": "4", "tp_size": "8"}
_RECORDED = {**_RUN, "id": "ix", "silicon_ttft_ms": "148.60638657119125", "silicon_tpot_ms": "10.4304",
             "silicon_data_source": "source_file=2026-04-06.csv; measured=2026-03-27T00:00:00.000Z"}


@pytest.mark.parametrize("ttft, tpot, tp, repeats", [
    ("148.61", "10.43", "8", True),    # the recorded 148.606… and 10.4304 at two decimals
    ("148.6", "10.4", "8", True),      # at one decimal
    ("148.60", "10.43", "8", False),   # 148.606… rounds to 148.61, not 148.60
    ("148.61", "10.44", "8", False),
    ("148.61", "10.43", "4", False),   # another layout is another run
])
def test_an_unrecorded_row_that_repeats_a_measurement(ttft, tpot, tp, repeats):
    unrec = {**_RUN, "id": "gap", "tp_size": tp, "silicon_ttft_ms": ttft, "silicon_tpot_ms": tpot,
             "silicon_data_source": "source_file=kimi-k2.5-gap-analysis.csv; silicon_concurrency=4"}
    out = campaigns.annotate_repeats([_RECORDED, unrec])
    assert out[0] is _RECORDED and unrec.get(campaigns.REPEAT_KEY) is None  # copies, the input untouched
    c = campaigns.campaign_of(out[1])
    if repeats:
        assert (c.name, c.measured) == ("inferencex", datetime(2026, 3, 27, 23, 59, 59, 999999, tzinfo=UTC))
        assert c.evidence.endswith("the measurement of row ix")
    else:
        assert (c.name, c.measured) == ("unknown", None)


def test_a_repeat_of_two_campaigns_stays_unrecorded():
    other = {**_RECORDED, "id": "aic", "silicon_data_source": "source_file=aic-auto-gap-analysis/x.csv"}
    unrec = {**_RUN, "id": "gap", "silicon_ttft_ms": "148.61", "silicon_tpot_ms": "10.43",
             "silicon_data_source": "source_file=kimi-k2.5-gap-analysis.csv"}
    out = campaigns.annotate_repeats([_RECORDED, other, unrec])
    assert campaigns.campaign_of(out[2]).name == "unknown"


def test_recipe_at_the_rows_time():
    # MiniMax-M2.5 on H200: 0.95 and ISL + OSL + 200 from 2026-03-01, expert parallel from
    # 2026-03-13 (EP_SIZE ≥ 1 is every run), prefix caching off from 2026-03-28T02:17Z
    m, h = "MiniMaxAI/MiniMax-M2.5", "h200_sxm"
    flags, src = campaigns.recipe_at(m, h, datetime(2026, 3, 1, 23, 59, tzinfo=UTC))
    assert flags == {"gpu_memory_utilization": 0.95, "max_model_len": "isl+osl+200"}
    assert src == "benchmarks/single_node/minimaxm2.5_fp8_h200.sh@a36346339"
    flags, _ = campaigns.recipe_at(m, h, datetime(2026, 3, 27, 7, 59, 49, tzinfo=UTC))
    assert flags.get("enable_expert_parallel") is True and "enable_prefix_caching" not in flags
    flags, src = campaigns.recipe_at(m, h, datetime(2026, 3, 28, 23, 59, tzinfo=UTC))
    assert flags["enable_prefix_caching"] is False and src.endswith("@a36346339+5e2c705d3+0f78cf4eb")
    assert campaigns.recipe_at(m, h, datetime(2026, 2, 1, tzinfo=UTC)) == ({}, "")  # before the recipe
    assert campaigns.recipe_at("acme/x", h, datetime(2026, 3, 1, tzinfo=UTC)) == ({}, "")


def test_inferencex_client_by_date():
    # since 2026-01-21: 2·c warm-ups; before: none (the cloned fork's one test request)
    b = campaigns.inferencex_benchmark(1024, 1024, 8, datetime(2026, 3, 27, tzinfo=UTC))
    assert b == {"tool": "vllm_bench_serve", "variant": "inferencex", "date": "2026-03-27", "dataset_name": "random",
                 "random_input_len": 1024, "random_output_len": 1024, "random_range_ratio": 0.8,
                 "num_prompts": 80, "max_concurrency": 8, "num_warmups": 16, "ignore_eos": True}
    b = campaigns.inferencex_benchmark(1024, 1024, 8, datetime(2025, 10, 2, tzinfo=UTC))
    assert "num_warmups" not in b and b["date"] == "2025-10-02"


@pytest.mark.skipif(not MOE.is_file(), reason="shared silicon data not found")
def test_an_inferencex_row_runs_its_client_against_its_recipe():
    rows = accuracy.read_silicon(MOE)
    aliases = accuracy.load_aliases(ALIASES)
    kw = dict(perf="roofline", aliases=aliases, model_configs=accuracy.DEFAULT_MODEL_CONFIGS,
              database=accuracy.DEFAULT_DATABASE)
    tp8 = next(r for r in rows if "measured=2026-03-28" in r["silicon_data_source"] and r["tp_size"] == "8"
               and r["isl"] == "1024" and r["osl"] == "1024" and r["batch_size"] == "8")
    assert accuracy.procedure_of(tp8) == ("inferencex", campaigns.campaign_of(tp8))
    spec, warm, measured = accuracy.row_spec(tp8, **kw)
    assert (warm, measured) == (0, 80)
    assert spec["traffic"]["benchmark"]["num_warmups"] == 16
    assert spec["traffic"]["benchmark"]["response_overhead"] == {"base_ms": 1.40, "per_output_token_us": 3.65}
    e = spec["engine"]
    assert e["backend_version"] == "0.18.0"
    assert e["scheduler"] == {"gpu_memory_utilization": 0.95, "enable_prefix_caching": False,
                              "max_model_len": 1024 + 1024 + 200}
    assert e["workers"]["aggregated"] == {"count": 1, "tp": 8, "enable_expert_parallel": True}
    # the TP 4 rows of 2026-03-01: no expert parallelism yet, prefix caching vLLM's default
    tp4 = next(r for r in rows if "measured=2026-03-01" in r["silicon_data_source"] and r["tp_size"] == "4")
    spec, _, _ = accuracy.row_spec(tp4, **kw)
    assert spec["engine"]["workers"]["aggregated"] == {"count": 1, "tp": 4}
    assert "enable_prefix_caching" not in spec["engine"]["scheduler"]  # 0.16.0's default: on
    # AIConfigurator's rows keep AIPerf; an explicit procedure overrides the rule
    qwen = next(r for r in rows if r["model_path"] == "Qwen/Qwen3-235B-A22B-FP8")
    assert accuracy.procedure_of(qwen)[0] == "aiperf"
    spec, _, _ = accuracy.row_spec(qwen, **kw)
    assert spec["traffic"]["load"]["warmup_requests"] == int(qwen["batch_size"])
    assert accuracy.procedure_of(tp8, "aiperf")[0] == "aiperf"
    spec, _, _ = accuracy.row_spec(qwen, load_generator="inferencex", **kw)
    assert spec["traffic"]["benchmark"]["variant"] == "inferencex"
    with pytest.raises(ValueError, match="steady-state"):
        accuracy.row_spec(tp8, steady_state=True, **kw)
    # a run: rows.csv's columns say which procedure and recipe
    res = accuracy.run_row(tp8, **kw)
    assert res.status == "ok", res.reason
    assert (res.campaign, res.procedure, res.measured[:10]) == ("inferencex", "inferencex", "2026-03-28")
    assert res.recipe.endswith("@a36346339+5e2c705d3+0f78cf4eb") and res.measured_requests == 80
    assert res.layout.startswith("TP8 EP8")
    table = accuracy.mape_table([res, accuracy.run_row(qwen, **kw)])
    assert [t["model"] for t in table if t["model"].startswith("overall (")] == [
        "overall (aiconfigurator: aiperf)", "overall (inferencex: inferencex)"]


def test_a_recipe_becomes_engine_settings():
    # Kimi-K2.5 on H200 at 2026-03-02 23:25 UTC: --max-num-seqs $CONC, prefix caching still on
    flags, src = campaigns.recipe_at("moonshotai/Kimi-K2.5", "h200_sxm", datetime(2026, 3, 2, 23, 25, 25, tzinfo=UTC))
    assert flags == {"gpu_memory_utilization": 0.95, "max_num_seqs": "c", "max_model_len": "isl+osl+200"}
    engine: dict = {}
    campaigns.apply_recipe(engine, flags, 1024, 8192, 16)
    assert engine == {"scheduler": {"gpu_memory_utilization": 0.95, "max_num_seqs": 16, "max_model_len": 1024 + 8192 + 200}}
    # DeepSeek-V4-Pro on H200 (2026-05): dsv4_fp8_h200.sh's fixed --max-num-seqs 512
    flags, src = campaigns.recipe_at("deepseek-ai/DeepSeek-V4-Pro", "h200_sxm", datetime(2026, 5, 1, tzinfo=UTC))
    assert src == "benchmarks/single_node/dsv4_fp8_h200.sh@6f3c1c07e"
    engine = {}
    campaigns.apply_recipe(engine, flags, 1024, 1024, 64)
    assert engine == {"scheduler": {"gpu_memory_utilization": 0.95, "enable_prefix_caching": False,
                                    "max_num_batched_tokens": 512, "max_num_seqs": 512, "max_model_len": 2248},
                      "quantization": {"kv_cache": "fp8"}}
    # Llama-3.1-70B FP8 on H100 (2025): its config.yaml
    flags, _ = campaigns.recipe_at("nvidia/Llama-3.1-70B-Instruct-FP8", "h100_sxm", datetime(2025, 10, 1, tzinfo=UTC))
    engine = {}
    campaigns.apply_recipe(engine, flags, 1024, 1024, 64)
    assert engine == {"scheduler": {"gpu_memory_utilization": 0.9, "enable_prefix_caching": False, "async_scheduling": True,
                                    "max_num_batched_tokens": 8192, "max_num_seqs": 64, "max_model_len": 10240},
                      "quantization": {"kv_cache": "fp8"}}


def test_the_mape_table_keeps_its_columns_beside_a_repeat_campaigns_line():
    # "overall (inferencex (repeat): inferencex)" is 41 characters, past the model
    # column's 36: every line's numbers still end where the header's do
    from aisimulate.tools.accuracy import format_mape

    row = {"system": "", "tp": "", "layout": "", "rows": 1, "ttft_mape_pct": 29.8, "tpot_mape_pct": 13.0}
    table = [{**row, "model": "moonshotai/Kimi-K2.5", "system": "h200_sxm", "layout": "TP8"},
             {**row, "model": "overall"}, {**row, "model": "overall (inferencex (repeat): inferencex)"}]
    lines = format_mape(table, 0, "aic").splitlines()[1:-1]
    assert len(lines) == 4 and len({len(line) for line in lines}) == 1, lines
    assert lines[-1].startswith("overall (inferencex (repeat): inferencex) ")
