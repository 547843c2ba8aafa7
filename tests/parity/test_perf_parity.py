"""The perf parity goldens (tests/goldens/perf_parity.json) checked through the Python
API: each pinned pass time is the time :func:`aisimulate.step_times` gives for the same
deployment and batch, as ``TestParityGoldens`` (core/perf/parity) checks it in Go.

A shape to copy for your own goldens: a deployment as a replay spec's ``engine`` (its
``perf`` block says which source prices it), batches of prefill chunks and decode
contexts, and the times pinned in ns. The Go grid (``core/perf/parity/grid.go``) builds
each point's perf model with the spec's default parameters, except that the aic goldens
price the kernels alone (no engine-step overhead), neither overlaps the CPU work with the
kernels (``async_scheduling: false``) and the KV cache is bf16; the engines below say so
in the spec's own words. ``num_gpu_blocks`` and ``max_model_len`` only let every point
start (a deployment whose KV cache could not hold a request is refused, as vLLM refuses to
start); they do not change a pass's price.
"""

from __future__ import annotations

import json
import re

import pytest

import aisimulate
from conftest import REPO

GOLDEN = REPO / "tests" / "goldens" / "perf_parity.json"
SHARED = REPO.parent / "shared" / "data" / "aic"

pytestmark = pytest.mark.skipif(not (SHARED / "systems" / "data").is_dir(),
                                reason="the goldens need ../shared/data/aic (model configs, kernel tables)")

#: The aic goldens' table version (core/perf/parity/grid.go, AICVersion).
AIC_VERSION = "0.24.0"


def batch(shape: str) -> dict:
    """The batch a golden's shape name describes (the names of core/perf/parity/grid.go:
    prefill_N, prefill_N_after_P, prefill_KxN, decode_D_kvL, mixed_N_plus_D_kvL, where
    the mixed pass's chunk does not complete its prompt: its D decodes alone sample)."""
    if m := re.fullmatch(r"prefill_(\d+)", shape):
        return {"prefill": [(int(m[1]), 0)]}
    if m := re.fullmatch(r"prefill_(\d+)_after_(\d+)", shape):
        return {"prefill": [(int(m[1]), int(m[2]))]}
    if m := re.fullmatch(r"prefill_(\d+)x(\d+)", shape):
        return {"prefill": [(int(m[2]), 0)] * int(m[1])}
    if m := re.fullmatch(r"decode_(\d+)_kv(\d+)", shape):
        return {"decode": [int(m[2])] * int(m[1])}
    if m := re.fullmatch(r"mixed_(\d+)_plus_(\d+)_kv(\d+)", shape):
        return {"prefill": [(int(m[1]), 0, False)], "decode": [int(m[3])] * int(m[2])}
    raise AssertionError(f"golden shape {shape!r} has no batch here: add its rule")


def engine(key: str) -> dict:
    """The engine of a golden's point key, ``source|model|weights|system|tpN[|dpN][|ep]``."""
    source, model, weights, system, tp, *rest = key.split("|")
    pool = {"count": 1, "tp": int(tp[2:])}
    for part in rest:
        if part.startswith("dp"):
            pool["data_parallel_size"] = int(part[2:])
        elif part == "ep":
            pool["enable_expert_parallel"] = True
    perf = {"source": "roofline"}
    if source.startswith("aic"):
        perf = {"source": "aic", "backend_version": AIC_VERSION, "pass_overhead_us": 0,
                "per_sequence_overhead_us": 0}
    e = {"model": model, "system": system, "workers": {"aggregated": pool}, "perf": perf,
         "quantization": {"kv_cache": "bf16"},
         "scheduler": {"async_scheduling": False, "max_num_batched_tokens": 8192,
                       "max_model_len": 4096, "num_gpu_blocks": 4096}}
    # the point's weight format: the checkpoint's own (gpt-oss-120b's bf16 layers keep
    # their MXFP4 experts), or vLLM's --quantization when it differs (Llama-3.1-8B fp8)
    if aisimulate.memory_plan(e)["aggregated"]["weight_dtype"] != weights:
        e["quantization"]["weights"] = weights
    return e


GOLDENS = json.loads(GOLDEN.read_text())["pass_time_ns"] if GOLDEN.is_file() else {}


@pytest.mark.parametrize("key", sorted(GOLDENS))
def test_pinned_pass_times_through_the_api(key):
    shapes = sorted(GOLDENS[key])
    got = aisimulate.step_times(engine(key), [batch(s) for s in shapes])
    assert got[0].perf_model == key.split("|")[0]
    for shape, t in zip(shapes, got):
        # ±1 ns, as the Go test allows for floating-point rounding across platforms
        assert abs(t.time_ns - GOLDENS[key][shape]) <= 1, f"{key} {shape}: {GOLDENS[key][shape]} → {t.time_ns} ns"
        if t.breakdown_ns is not None and not t.overlap_cpu:  # the parts add up to the time
            assert abs(sum(t.breakdown_ns.values()) - t.time_ns) <= 0.5 + 1e-9 * t.time_ns


def test_every_point_and_shape_is_checked():
    assert len(GOLDENS) == 60 and all(len(v) == 7 for v in GOLDENS.values())
