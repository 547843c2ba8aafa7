"""Summary metrics users read every day: time to second token, tokens/s per user, ISL and
OSL, goodput under an SLO (from Python and from --slo)."""

from __future__ import annotations

import csv
import io
import json

import pytest

import aisimulate
from aisimulate import ConfigError
from conftest import EXAMPLE1_ROWS, example1_spec, write_mooncake
from test_cli import run_cli, write_config


@pytest.fixture
def example1(tmp_path):
    return example1_spec(write_mooncake(tmp_path / "t.jsonl", EXAMPLE1_ROWS))


def test_worked_example_1_metrics(example1):
    # Worked example 1: r1 receives tokens at 14.00, 17.10, 19.30 ms (sent at 0); r2 at
    # 17.10, 19.30 (sent at 10). TTST = second − first: r1 3.10, r2 2.20.
    # TPOT: r1 (19.30 − 14.00) / 2 = 2.65, r2 2.20 → per user 1000/2.65 = 377.36 and
    # 1000/2.2 = 454.55 tokens/s. ISL 1000 and 100; OSL 3 and 2.
    # SLO tpot ≤ 2.5 ms: only r2 is good → 1 / 0.0193 s = 51.81 req/s, attainment 0.5.
    rep = aisimulate.replay(example1, slo={"tpot_ms": 2.5})
    assert [r["ttst_ms"] for r in rep.requests] == pytest.approx([3.10, 2.20], abs=1e-12)
    s = rep.summary
    assert s["ttst_ms"]["mean"] == pytest.approx((3.10 + 2.20) / 2, abs=1e-12)
    assert s["output_token_throughput_per_user"]["mean"] == pytest.approx(
        (1000 / 2.65 + 1000 / 2.2) / 2, rel=1e-12)
    assert s["input_sequence_length"]["mean"] == 550.0
    assert s["output_sequence_length"]["max"] == 3.0
    assert s["goodput"] == {"slo": {"tpot_ms": 2.5}, "good_requests": 1,
                            "goodput_rps": pytest.approx(1 / 0.0193, rel=1e-12),
                            "slo_attainment": 0.5}
    text = rep.table()
    goodput = next(line for line in text.splitlines() if line.startswith("Request goodput"))
    assert goodput.split()[-1] == "51.813"
    good = next(line for line in text.splitlines() if line.startswith("Good requests"))
    assert good.endswith("1 (50.0 %)")
    assert next(line for line in text.splitlines() if line.startswith("SLO (ms)")).endswith("tpot_ms \u2264 2.5")
    assert next(line for line in text.splitlines() if line.startswith("ttst_ms")).split()[1] == "2.65"
    assert "goodput" not in aisimulate.replay(example1).summary  # only with an SLO


def test_a_one_token_response_misses_a_tpot_slo(tmp_path):
    # Goodput as AIPerf counts it: a record without the SLO's metric is not good. Worked
    # example 1's r1 (1000/3) and a 100/1 request at 10 ms (one token: no TPOT): under
    # tpot ≤ 5 ms only r1 is good. r1 ends at 19.30 ms (r2's prefill shares its pass 3).
    trace = write_mooncake(tmp_path / "t.jsonl", [
        EXAMPLE1_ROWS[0], {"timestamp": 10, "input_length": 100, "output_length": 1, "hash_ids": [3]}])
    spec = example1_spec(trace)
    s = aisimulate.replay(spec, slo={"tpot_ms": 5.0}).summary
    assert s["goodput"]["good_requests"] == 1 and s["goodput"]["slo_attainment"] == 0.5
    row = aisimulate.sweep(spec, [{}], slo={"tpot_ms": 5.0}, jobs=1).iloc[0]
    assert row["slo_attainment"] == 0.5  # the sweep's columns count alike
    assert row["goodput_rps"] == pytest.approx(s["goodput"]["goodput_rps"], rel=1e-12)


@pytest.mark.parametrize("slo,field", [({"ttft": 1}, "slo.ttft"), ({"ttft_ms": 0}, "slo.ttft_ms"),
                                       ({"e2e_ms": float("nan")}, "slo.e2e_ms"), ({}, "slo")])
def test_bad_slo_names_the_entry(example1, slo, field):
    with pytest.raises(ConfigError) as err:
        aisimulate.replay(example1, slo=slo)
    assert err.value.field == field


@pytest.mark.parametrize("slo", [[1, 2], "ttft_ms=200", 200])
def test_an_slo_not_a_mapping_names_its_form(example1, slo):
    with pytest.raises(TypeError, match=r"^slo must be a mapping such as \{'ttft_ms': 200, 'tpot_ms': 20\} "
                                        r"\(bounds in ms, any of ttft_ms, tpot_ms, e2e_ms\), got "):
        aisimulate.replay(example1, slo=slo)


def test_cli_slo(tmp_path, example1):
    cfg = write_config(tmp_path / "r.yaml", example1)
    proc = run_cli("replay", str(cfg), "--slo", "tpot_ms=2.5,ttft_ms=100", "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    row = next(csv.DictReader(io.StringIO(proc.stdout)))
    assert int(row["goodput.good_requests"]) == 1
    assert float(row["goodput.slo.ttft_ms"]) == 100.0
    proc = run_cli("replay", str(cfg), "--slo", "tpot_ms=fast")
    assert proc.returncode == 2 and "--slo" in proc.stderr
    proc = run_cli("replay", str(cfg), "--slo", "itl_ms=3")
    assert proc.returncode == 2 and "--slo itl_ms: is not an SLO bound" in proc.stderr
    doc = json.loads(run_cli("replay", str(cfg), "--format", "json").stdout)
    assert "goodput" not in doc["summary"]
