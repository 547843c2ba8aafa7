"""The research tooling (aisimulate.tools) stays out of what ``import aisimulate`` loads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PYTHON_DIR = Path(__file__).resolve().parent.parent / "python"


def _loaded_after(code: str) -> list[str]:
    """The aisimulate.tools modules in sys.modules after running ``code`` in a fresh
    interpreter (a fresh one: this test session may have imported the tools already)."""
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    probe = code + "; import sys; print(' '.join(sorted(m for m in sys.modules if m.startswith('aisimulate.tools'))))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env)
    return out.stdout.split()


def test_import_aisimulate_loads_no_tools():
    assert _loaded_after("import aisimulate, aisimulate.calibration") == []


def test_the_tools_import_on_their_own():
    # the probe itself works: importing a tool shows up in sys.modules
    loaded = _loaded_after("import aisimulate.tools.accuracy, aisimulate.tools.roofline_calibration")
    assert "aisimulate.tools.accuracy" in loaded and "aisimulate.tools.roofline_calibration" in loaded


def test_one_version_string():
    # core/version/VERSION is read by the Go core (pybind.Version, the report's
    # metadata) and by the package's metadata (pyproject.toml): all agree with it.
    import aisimulate
    from aisimulate.binding import native as _native

    version = (PYTHON_DIR.parent / "core" / "version" / "VERSION").read_text().strip()
    assert aisimulate.__version__ == version
    assert _native.pybind().Version() == version
    spec = {"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm"},
            "traffic": {"source": {"type": "synthetic", "num_requests": 1, "isl": 8, "osl": 1},
                        "load": {"mode": "concurrency", "concurrency": 1}}}
    assert aisimulate.check(spec)["aisimulate_version"] == version
