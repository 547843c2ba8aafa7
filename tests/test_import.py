"""``import aisimulate`` stays light: numpy, pandas, PyYAML, the
plotting and pool libraries and the native core load on first use, not at import.
Measured by ``scripts/bench_startup.py`` (``make bench``); this checks what loads."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO

# Loaded on first use only: each costs tens of milliseconds to import (numpy alone
# ~100 ms of CPU on this machine), the native core far more (the Go runtime starts).
_HEAVY = ("numpy", "pandas", "yaml", "matplotlib", "joblib", "tqdm", "aisimulate._core",
          "concurrent.futures.process", "tempfile", "subprocess", "importlib.metadata", "typing",
          "inspect", "dataclasses")


def _loaded(code: str) -> set[str]:
    """The heavy modules in ``sys.modules`` after running ``code`` in a fresh
    interpreter."""
    probe = f"import sys\n{code}\nimport json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"})
    mods = set(json.loads(out.stdout.splitlines()[-1]))
    return {m for m in _HEAVY if m in mods}


def test_import_loads_no_heavy_module():
    assert _loaded("import aisimulate") == set()


def test_each_loads_on_first_use(tmp_path):
    # reading YAML loads PyYAML (and nothing else heavy: the native core is not needed
    # to parse); reading JSON does not
    cfg = tmp_path / "c.yaml"
    cfg.write_text("engine: {model: Qwen/Qwen3-8B}\n")
    parse = "import aisimulate.config as c\nc._read({!r})"
    assert _loaded(parse.format(str(cfg))) == {"yaml"}
    cfg_json = tmp_path / "c.json"
    cfg_json.write_text('{"engine": {"model": "Qwen/Qwen3-8B"}}')
    assert _loaded(parse.format(str(cfg_json))) == set()
    # a replay loads the core, and nothing else heavy until its records are read: the
    # columns cross in an unnamed file (O_TMPFILE, not the tempfile module) and become
    # numpy arrays on first use
    spec = {"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm"},
            "traffic": {"source": {"type": "synthetic", "num_requests": 2, "isl": 16, "osl": 2},
                        "load": {"mode": "concurrency", "concurrency": 1}}}
    replay = f"import aisimulate\nr = aisimulate.replay({spec!r})\nassert r.summary['completed'] == 2"
    assert _loaded(replay) == {"aisimulate._core"}
    assert {"aisimulate._core", "numpy"} <= _loaded(replay + "\nassert len(r.requests) == 2")


def test_the_replay_command_loads_no_heavy_module_but_the_core(tmp_path):
    # `aisimulate replay` printing its table: the start-up of docs/benchmarks.md
    cfg = tmp_path / "c.json"
    cfg.write_text('{"engine": {"model": "Qwen/Qwen3-8B", "system": "h100_sxm"}, "traffic": '
                   '{"source": {"type": "synthetic", "num_requests": 2, "isl": 16, "osl": 2}, '
                   '"load": {"mode": "concurrency", "concurrency": 1}}}')
    code = ("import contextlib, io, sys\nimport aisimulate.cli as cli\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    assert cli.main(['replay', {str(cfg)!r}]) == 0")
    assert _loaded(code) == {"aisimulate._core"}
