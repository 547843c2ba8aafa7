"""report.timeline: every engine pass, recorded when asked for."""

from __future__ import annotations

import numpy as np
import pytest

import aisimulate
from aisimulate.report import TIMELINE_FIELDS
from conftest import EXAMPLE1_ROWS, example1_spec, write_mooncake


def test_timeline_of_worked_example_1(tmp_path):
    # The passes of worked example 1 (pass ms = 2 + 0.01 × prefill + 0.1 × decodes;
    # 512-token budget; block size 16):
    #   P1 0 → 7.12       r1 prefill 512          32 blocks (512/16)
    #   P2 7.12 → 14.00   r1 prefill 488          63 blocks (⌈1000/16⌉)
    #   P3 14.00 → 17.10  r1 decode, r2 prefill   63 + 7 (⌈100/16⌉) = 70
    #   P4 17.10 → 19.30  r1 and r2 decode        70
    trace = write_mooncake(tmp_path / "t.jsonl", EXAMPLE1_ROWS)
    rep = aisimulate.replay(example1_spec(trace), timeline=True)
    tl = rep.timeline
    assert tuple(tl) == TIMELINE_FIELDS
    assert list(tl["pool"]) == ["aggregated"] * 4
    assert tl["worker"].tolist() == [0, 0, 0, 0]
    np.testing.assert_allclose(tl["start_ms"], [0, 7.12, 14.0, 17.1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(tl["end_ms"], [7.12, 14.0, 17.1, 19.3], rtol=0, atol=1e-12)
    assert tl["prefill_tokens"].tolist() == [512, 488, 100, 0]
    assert tl["prefill_requests"].tolist() == [1, 1, 1, 0]
    assert tl["decode_requests"].tolist() == [0, 0, 1, 2]
    assert tl["running"].tolist() == [1, 1, 2, 2]
    assert tl["waiting"].tolist() == [0, 0, 0, 0]
    assert tl["kv_blocks_used"].tolist() == [32, 63, 70, 70]
    assert tl["kv_blocks_total"].tolist() == [1000] * 4  # num_gpu_blocks of the spec
    df = rep.timeline_to_pandas()
    assert list(df.columns) == list(TIMELINE_FIELDS) and len(df) == 4

    plain = aisimulate.replay(example1_spec(trace))
    assert plain.timeline is None
    assert plain.to_json() == rep.to_json()  # recording changes nothing else
    with pytest.raises(ValueError, match="timeline=True"):
        plain.timeline_to_pandas()
