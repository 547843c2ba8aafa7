"""Every example config runs as shipped (cut to 60 requests to stay fast)."""

from __future__ import annotations

from pathlib import Path

import pytest

import aisimulate

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.yaml"))
SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path):
    if "shared/data" in path.read_text() and not SHARED.is_dir():
        pytest.skip("example reads ../shared/data")
    spec = aisimulate.load_config(path)
    data = spec.data
    data["traffic"]["stop"]["max_requests"] = 60
    report = aisimulate.replay(data)
    s = report.summary
    assert len(report.requests) == 60
    assert s["completed"] + s["rejected"] + s["failed"] + s["canceled"] == 60
    assert s["completed"] > 0


DEMO = Path(__file__).resolve().parent.parent / "examples" / "mooncake-qwen3-32b-h100.yaml"


def _demo_blocks() -> list[str]:
    """The README's section "What `make demo` prints" cut at its code fences: text,
    block 1, text, block 2, …"""
    if not SHARED.is_dir():
        pytest.skip("the demo reads ../shared/data")
    readme = (DEMO.parent.parent / "README.md").read_text(encoding="utf-8")
    return readme[readme.index("## What `make demo` prints"):].split("```\n")


def test_readme_shows_what_make_demo_prints():
    # README "What `make demo` prints" is the table of the demo config, row for row
    assert aisimulate.replay(DEMO, progress=False).table() + "\n" == _demo_blocks()[1]


def test_readme_shows_the_demo_saturated_on_half_its_gpus():
    # its second block is the saturation line of the demo on two TP2 workers
    # (core/replay/load_test.go checks how the line is worked out)
    spec = aisimulate.load_config(DEMO, overrides={"engine.workers.aggregated.tp": 2})
    assert aisimulate.replay(spec, progress=False).table().splitlines()[2] + "\n" == _demo_blocks()[3]
