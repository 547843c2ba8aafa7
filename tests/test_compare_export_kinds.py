"""What ``compare`` reads is AIPerf's per-request ``profile_export.jsonl``, each record
one AIPerf could have written:

- a record whose ``request_latency`` is below its ``time_to_first_token`` is refused,
  naming its line and ``metrics.request_latency``: AIPerf times both from the request's
  send, to its last response and to its first (``request_latency_metric.py``,
  ``ttft_metric.py``), so such a record is damaged. Taken as it was, one such record of
  50 (1 ms against a TTFT of 186 ms) made the E2E MAPE 4,232 %;
- AIPerf's aggregate exports, ``profile_export_aiperf.json`` (one JSON document of
  statistics) and ``profile_export_aiperf.csv`` (their table), given in its place are
  named as what they are, with the records file beside them, where "not valid JSON"
  was said of a valid JSON document; a gzipped export is named as compressed, where it
  was "not UTF-8 text (byte 2 of the line)"."""

from __future__ import annotations

import json

import pytest

from aisimulate import DataError
from aisimulate.compare import read_profile_export

T0_NS = 1_733_300_000_000_000_000


def _record(start_ns: int, ttft_ms: float, e2e_ms: float, unit: str = "ms") -> str:
    scale = {"ms": 1.0, "ns": 1e6}[unit]
    metrics = {"input_sequence_length": {"value": 10, "unit": "tokens"},
               "output_sequence_length": {"value": 3, "unit": "tokens"},
               "time_to_first_token": {"value": ttft_ms * scale, "unit": unit},
               "request_latency": {"value": e2e_ms * scale, "unit": unit}}
    return json.dumps({"metadata": {"request_start_ns": start_ns, "request_end_ns": start_ns + int(e2e_ms * 1e6)},
                       "metrics": metrics, "error": None}) + "\n"


def test_a_request_latency_below_the_ttft_is_refused(tmp_path):
    p = tmp_path / "profile_export.jsonl"
    p.write_text(_record(T0_NS, 186.0, 2111.0) + _record(T0_NS + 10**8, 186.0, 1.0))
    with pytest.raises(DataError) as e:
        read_profile_export(p)
    assert (e.value.file, e.value.line, e.value.field) == (str(p), 2, "metrics.request_latency")
    assert str(e.value) == (f"{p}:2: field 'metrics.request_latency.value' (1 ms) is below "
                            "'metrics.time_to_first_token' (186 ms): AIPerf measures both from the send, "
                            "to the last response and to the first")


def test_a_one_token_response_whose_latency_is_its_ttft_is_read(tmp_path):
    # one response: the first is the last, so TTFT = request latency, in any unit
    p = tmp_path / "profile_export.jsonl"
    p.write_text(_record(T0_NS, 186.25, 186.25) + _record(T0_NS, 0.3, 0.3, unit="ns"))
    assert [(r["ttft_ms"], r["e2e_ms"]) for r in read_profile_export(p)] == [(186.25, 186.25), (0.3, 0.3)]


AGGREGATE = {"schema_version": "1.1", "was_cancelled": False,
             "time_to_first_token": {"unit": "ms", "avg": 182.9, "min": 30.1, "max": 760.2, "p50": 166.2},
             "request_count": {"unit": "requests", "avg": 500}}


@pytest.mark.parametrize("name, text, kind", [
    ("profile_export_aiperf.json", json.dumps(AGGREGATE, indent=2),
     "AIPerf's aggregate statistics (profile_export_aiperf.json)"),
    ("run.json", json.dumps(AGGREGATE), "AIPerf's aggregate statistics (profile_export_aiperf.json)"),
    ("profile_export_aiperf.csv", "Metric,avg,min,max,p50\nTime to First Token (ms),182.9,30.1,760.2,166.2\n",
     "AIPerf's aggregate statistics table (profile_export_aiperf.csv)"),
])
def test_an_aggregate_export_is_named_with_the_records_beside_it(tmp_path, name, text, kind):
    (tmp_path / name).write_text(text)
    records = tmp_path / "profile_export.jsonl"
    records.write_text(_record(T0_NS, 186.0, 2111.0))
    with pytest.raises(DataError) as e:
        read_profile_export(tmp_path / name)
    assert e.value.line == 1
    assert str(e.value).endswith(f": the file is {kind}, not its per-request records; give the "
                                 f"profile_export.jsonl AIPerf wrote beside it ({records} is there), "
                                 "or the artifact folder")
    assert len(read_profile_export(tmp_path)) == 1  # the folder reads the records


def test_a_line_that_is_no_json_in_a_records_file_says_only_that(tmp_path):
    p = tmp_path / "profile_export.jsonl"
    p.write_text(_record(T0_NS, 186.0, 2111.0) + "{oops\n")
    with pytest.raises(DataError) as e:
        read_profile_export(p)
    assert e.value.line == 2 and "aggregate" not in str(e.value)


def test_a_compressed_export_is_named(tmp_path):
    import gzip

    p = tmp_path / "profile_export.jsonl.gz"
    p.write_bytes(gzip.compress(_record(T0_NS, 186.0, 2111.0).encode()))
    with pytest.raises(DataError) as e:
        read_profile_export(p)
    assert e.value.line == 1
    assert str(e.value).endswith(": the file is gzip-compressed: AIPerf's profile_export.jsonl is read as text; "
                                 "decompress or convert it first")
