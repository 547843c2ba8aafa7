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


def test_readme_shows_what_make_demo_prints():
    # README "What `make demo` prints" is the table of the demo config, row for row
    demo = Path(__file__).resolve().parent.parent / "examples" / "mooncake-qwen3-32b-h100.yaml"
    if not SHARED.is_dir():
        pytest.skip("the demo reads ../shared/data")
    readme = (demo.parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## What `make demo` prints"):]
    shown = section[section.index("```\n") + 4:]
    shown = shown[:shown.index("```")]
    assert aisimulate.replay(demo, progress=False).table() + "\n" == shown
