"""A search whose every layout is invalid has no candidate at all, and says so: it
said "no candidate met the SLO." over "candidates 0", as if deployments had been
replayed and had missed it (``--tp 3`` for Llama-3.1-8B's 32 attention heads)."""

from __future__ import annotations

import aisimulate

QUESTION = {"engine": {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm"},
            "traffic": {"source": {"type": "synthetic", "num_requests": 20, "isl": 128, "osl": 8},
                        "load": {"mode": "concurrency", "concurrency": 2}}}


def test_a_space_of_invalid_layouts_says_there_was_nothing_to_search():
    res = aisimulate.search(QUESTION, gpus=4, tp=[3], slo={"ttft_ms": 500}, progress=False)
    assert res.best is None and res.counts["candidates"] == 0
    text = res.table()
    assert "no candidate to search: every layout asked for is invalid (below)." in text
    assert "no candidate met the SLO." not in text
    assert "invalid TP3: model meta-llama/Llama-3.1-8B-Instruct: tensor parallel size 3 does not divide" in text


def test_a_missed_slo_still_says_so():
    res = aisimulate.search(QUESTION, gpus=1, slo={"ttft_ms": 0.001}, max_num_seqs=[16],
                            max_num_batched_tokens=[1024], weights=[None], kv_cache=[None], progress=False)
    assert res.best is None and res.counts["candidates"] > 0
    assert "no candidate met the SLO." in res.table()
