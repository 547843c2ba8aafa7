"""A search that recommends nothing says which SLO bounds no candidate met, and the
command exits 3 (docs/search.md, "Exit codes"): it exited 0, so a script took the
answer for a recommendation."""

from __future__ import annotations

import json

from conftest import run_cli

from aisimulate.analysis.search._unmet import unmet

SLO = {"ttft_ms": 5.0, "tpot_ms": 2.0, "percentile": 90.0}


def _sim(ttft, tpot, meets=False):
    return {"fate": "simulated", "meets": meets, "percentiles": {"ttft_ms": ttft, "tpot_ms": tpot}}


def _stop(metric):
    return {"fate": "stopped", "kind": "slo", "meets": False, "reason": f"{metric} p90 is certain to exceed …"}


def test_a_bound_no_replay_met_is_named_with_the_lowest_value_and_the_stops():
    res = [_sim(12.0, 1.0), _sim(9.5, 1.5), _stop("ttft_ms"), _stop("tpot_ms")]
    assert unmet(res, SLO) == ("no candidate met ttft_ms p90 \u2264 5 ms (the lowest of 2 replayed 9.50 ms; "
                               "1 stopped early certain to miss it)")


def test_two_bounds_missed_by_every_replay_are_both_named():
    res = [_sim(12.0, 3.0), _sim(None, 2.5)]  # None: requests that did not complete reach the p90
    assert unmet(res, SLO) == ("no candidate met ttft_ms p90 \u2264 5 ms (the lowest of 2 replayed 12.00 ms), "
                               "nor tpot_ms p90 \u2264 2 ms (the lowest of 2 replayed 2.50 ms)")
    assert unmet([_sim(None, 1.0)], SLO) == ("no candidate met ttft_ms p90 \u2264 5 ms (each of 1 replayed "
                                             "reached it with requests that did not complete)")


def test_bounds_met_one_by_one_but_never_together_say_so():
    res = [_sim(4.0, 3.0), _sim(6.0, 1.0)]
    assert unmet(res, SLO) == ("each bound was met by some candidate, none met ttft_ms p90 \u2264 5 ms and "
                               "tpot_ms p90 \u2264 2 ms at once")


def test_with_no_replay_to_its_end_the_stops_and_prunes_are_counted():
    res = [_stop("ttft_ms"), _stop("ttft_ms"), {"fate": "pruned", "kind": "memory", "meets": None}]
    assert unmet(res, SLO) == ("no candidate was replayed to its end: 2 stopped early, certain to miss "
                               "ttft_ms p90 \u2264 5 ms, 1 pruned (memory)")
    assert unmet([], SLO) == "no candidate to search: the space asked for is empty"
    assert unmet([], SLO, invalid=2) == "no candidate to search: every layout asked for is invalid"
    assert unmet([_sim(4.0, 3.0), _sim(1.0, 1.0, meets=True)], SLO) == ""


QUESTION = """\
engine: {model: meta-llama/Llama-3.1-8B-Instruct, system: h100_sxm}
traffic:
  source: {type: synthetic, num_requests: 20, isl: 128, osl: 8}
  load: {mode: concurrency, concurrency: 2}
"""
SPACE = ("--gpus", "1", "--max-num-seqs", "16", "--max-num-batched-tokens", "1024", "--weights", "checkpoint",
         "--kv-cache", "default", "--no-early-stop", "-q", "--format", "json")


def test_search_with_no_candidate_meeting_the_slo_exits_3_naming_the_bound(tmp_path):
    (tmp_path / "q.yaml").write_text(QUESTION)
    proc = run_cli("search", "q.yaml", "--slo", "ttft_ms=0.001,tpot_ms=1000", *SPACE, cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    answer = json.loads(proc.stdout)  # the answer is still written
    assert answer["best"] is None
    ttft = [r["percentiles"]["ttft_ms"] for r in answer["results"] if r["fate"] == "simulated"]
    assert len(ttft) == 1 and ttft[0] > 0.001
    assert proc.stderr == ("aisimulate: error: no deployment to recommend: no candidate met ttft_ms p90 \u2264 "
                           f"0.001 ms (the lowest of 1 replayed {ttft[0]:,.2f} ms)\n")
    # the same question with a bound its candidate meets recommends it: exit 0, nothing on stderr
    ok = run_cli("search", "q.yaml", "--slo", f"ttft_ms={2 * ttft[0]:.3f}", *SPACE, cwd=tmp_path)
    assert ok.returncode == 0 and ok.stderr == "", ok.stderr
    assert json.loads(ok.stdout)["best"] is not None
