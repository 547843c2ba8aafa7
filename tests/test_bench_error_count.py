"""``aisimulate bench … -- aiperf profile …`` prints AIPerf's "Error Request Count" when
a request did not complete, as AIPerf's console shows its error-only metric
(``ErrorRequestCountMetric``, ``MetricFlags.ERROR_ONLY``: no row without errors). The
table showed only "Request Count" of the completed ones, so with ``-q`` (which hides the
note on stderr) a run that lost requests looked whole."""

from __future__ import annotations

import json

from aisimulate import cli

ENGINE = "engine: {model: Qwen/Qwen3-8B, system: h100_sxm, backend_version: 0.15.1}\n"


def _bench(capsys, tmp_path, rows):
    cfg = tmp_path / "engine.yaml"
    cfg.write_text(ENGINE)
    trace = tmp_path / "t.jsonl"
    trace.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code = cli.main(["bench", str(cfg), "-q", "--", "aiperf", "profile", "-m", "Qwen/Qwen3-8B", "--streaming",
                     "--input-file", str(trace), "--custom-dataset-type", "mooncake_trace", "--fixed-schedule"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return [ln.split() for ln in out.out.splitlines()]


def test_a_rejected_request_is_counted_as_aiperf_counts_it(capsys, tmp_path):
    # 3 rows; the second asks 40,000 + 2,000 tokens, past Qwen3-8B's max_model_len of 40,960
    rows = [{"timestamp": 0, "input_length": 100, "output_length": 10},
            {"timestamp": 10, "input_length": 40000, "output_length": 2000},
            {"timestamp": 20, "input_length": 100, "output_length": 10}]
    lines = _bench(capsys, tmp_path, rows)
    assert ["Request", "Count", "2.00", "completed"] in lines
    assert ["Error", "Request", "Count", "1.00", "rejected", "+", "failed", "+", "canceled"] in lines


def test_no_error_row_when_every_request_completed(capsys, tmp_path):
    lines = _bench(capsys, tmp_path, [{"timestamp": 0, "input_length": 100, "output_length": 10}])
    assert ["Request", "Count", "1.00", "completed"] in lines
    assert not any(ln[:2] == ["Error", "Request"] for ln in lines)
