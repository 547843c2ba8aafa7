"""Input the tester found accepted and must not be: each is an error naming
the field, or the file and line, before anything runs."""

from __future__ import annotations

import json

import pytest

import aisimulate
from aisimulate.cli import main
from conftest import REPO, write_mooncake

VLLM = "(vLLM refuses max_tokens < 1: a request generates at least one token)"


# C2: a request of zero output tokens is refused as vLLM refuses max_tokens < 1, in
# the config and in every trace format, naming the field or file:line.
def test_cli_refuses_osl_0(capsys):
    assert main(["replay", str(REPO / "examples" / "quickstart.yaml"), "--set", "traffic.source.osl=0", "-q"]) == 2
    # the plain integer is named by its own field (was traffic.source.osl.value)
    assert "aisimulate: error: traffic.source.osl: must be ≥ 1, got 0" in capsys.readouterr().err


@pytest.mark.parametrize("osl", [{"kind": "uniform", "min": 0, "max": 5}, {"kind": "fixed", "value": 0}])
def test_sessions_refuse_osl_0(base_spec, osl):
    base_spec["traffic"]["source"] = {"type": "sessions", "num_sessions": 2, "turns": 2, "isl": 10, "osl": osl}
    with pytest.raises(aisimulate.ConfigError, match=r"traffic\.source\.osl\.(min|value): must be ≥ 1, got 0"):
        aisimulate.replay(base_spec)


def _trace_spec(base_spec, source):
    base_spec["traffic"] = {"source": source, "load": {"mode": "trace"}}
    return base_spec


def test_mooncake_output_length_0(base_spec, tmp_path):
    path = write_mooncake(tmp_path / "tb.jsonl", [{"timestamp": 0, "input_length": 5, "output_length": 2},
                                                 {"timestamp": 1, "input_length": 5, "output_length": 0}])
    with pytest.raises(aisimulate.DataError) as e:
        aisimulate.replay(_trace_spec(base_spec, {"type": "mooncake", "path": str(path)}))
    assert str(e.value) == f"{path}:2: output_length: must be ≥ 1, got 0 {VLLM}"


def test_azure_generated_tokens_0(base_spec, tmp_path):
    path = tmp_path / "az.csv"
    path.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,0\n")
    with pytest.raises(aisimulate.DataError) as e:
        aisimulate.replay(_trace_spec(base_spec, {"type": "azure", "path": str(path)}))
    assert str(e.value) == f"{path}:2: GeneratedTokens: must be ≥ 1, got 0 {VLLM}"


def test_llmservingsim_output_toks_0(base_spec, tmp_path):
    path = tmp_path / "w.jsonl"
    path.write_text(json.dumps({"input_toks": 2, "output_toks": 0, "arrival_time_ns": 0, "input_tok_ids": [1, 2]}) + "\n")
    with pytest.raises(aisimulate.DataError) as e:
        aisimulate.replay(_trace_spec(base_spec, {"type": "llmservingsim", "path": str(path)}))
    assert str(e.value) == f"{path}:1: output_toks: must be ≥ 1, got 0 {VLLM}"


# C3: an Azure row with more fields than the header is an error naming file:line, as a
# short row is.
def test_azure_row_with_extra_fields(base_spec, tmp_path):
    path = tmp_path / "az.csv"
    path.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,44\n"
                    "2023-11-16 18:15:47.68,374,44,1,2,3\n")
    with pytest.raises(aisimulate.DataError) as e:
        aisimulate.replay(_trace_spec(base_spec, {"type": "azure", "path": str(path)}))
    assert str(e.value) == f"{path}:3: row has 6 fields, but the header (line 1) has 3"


# C4: a delay on a session's first turn is refused (AIPerf never waits before a first
# turn); 0 is accepted.
def test_delay_on_a_first_turn(base_spec, tmp_path):
    rows = [{"timestamp": 0, "input_length": 5, "output_length": 2, "session_id": "s", "delay": 0},
            {"input_length": 5, "output_length": 2, "session_id": "s", "delay": 3},
            {"timestamp": 1, "input_length": 5, "output_length": 2, "session_id": "t", "delay": 40}]
    path = write_mooncake(tmp_path / "d.jsonl", rows)
    with pytest.raises(aisimulate.DataError) as e:
        aisimulate.replay(_trace_spec(base_spec, {"type": "mooncake", "path": str(path)}))
    assert str(e.value).startswith(f'{path}:3: delay: on the first turn of session "t": AIPerf sends')
    path = write_mooncake(tmp_path / "ok.jsonl", rows[:2])
    # the second turn waits 3 ms after the first's end (no client path: its release)
    recs = aisimulate.replay(_trace_spec(base_spec, {"type": "mooncake", "path": str(path)})).requests
    assert recs[1]["send_ms"] == pytest.approx(recs[0]["release_ms"] + 3, abs=1e-9)


# C5: validate reads the trace through the replay's reader and reports its first bad row.
def test_validate_reports_the_first_bad_row(base_spec, tmp_path, capsys):
    path = write_mooncake(tmp_path / "tb.jsonl", [{"timestamp": 0, "input_length": 5, "output_length": 2},
                                                 {"timestamp": 1, "input_length": -5, "output_length": 2}])
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(_trace_spec(base_spec, {"type": "mooncake", "path": str(path)})))
    assert main(["validate", str(cfg)]) == 2
    assert f"{path}:2: input_length: must be ≥ 1, got -5" in capsys.readouterr().err
    with pytest.raises(aisimulate.DataError):
        aisimulate.check(str(cfg))
    path.write_text(path.read_text().replace("-5", "5"))
    assert main(["validate", str(cfg)]) == 0
