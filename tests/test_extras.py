"""An optional package that is not installed is named with the extra that installs it,
before any replay: pandas for sweep and compare, matplotlib for
compare --plot."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import aisimulate
from conftest import BASE_SPEC, REPO


@pytest.fixture
def without(tmp_path):
    """``PYTHONPATH`` for a child in which the named packages cannot be imported (a
    module of the same name first on the path raises ModuleNotFoundError, as for a
    package that is not installed)."""
    def env(*names: str) -> dict[str, str]:
        blocked = tmp_path / "blocked"
        blocked.mkdir(exist_ok=True)
        for name in names:
            (blocked / f"{name}.py").write_text(
                f"raise ModuleNotFoundError(\"No module named '{name}'\", name={name!r})\n")
        return {"PYTHONPATH": f"{blocked}:{REPO / 'python'}", "PATH": "/usr/bin:/bin"}
    return env


def _cli(env, *args, cwd):
    return subprocess.run([sys.executable, "-m", "aisimulate", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


def test_sweep_and_compare_without_pandas_name_the_extra(tmp_path, without):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(BASE_SPEC))
    (tmp_path / "p.jsonl").write_text("{}\n")
    env = without("pandas")
    for args in (["sweep", str(cfg), "--grid", "traffic.source.num_requests=1,2", "--no-progress"],
                 ["compare", str(cfg), "--aiperf", "p.jsonl"]):
        proc = _cli(env, *args, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr  # an environment to fix, as a bad argument is
        assert proc.stderr == ("aisimulate: error: pandas is not installed; it is needed for sweep, "
                               "compare and report.to_pandas(): pip install 'aisimulate[pandas]' "
                               "(or pip install pandas)\n")
    # a replay needs no pandas
    assert _cli(env, "replay", str(cfg), cwd=tmp_path).returncode == 0


def test_compare_plot_without_matplotlib_names_the_extra_before_the_replay(tmp_path, without):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(BASE_SPEC))
    (tmp_path / "p.jsonl").write_text("not read: the plot is checked first\n")
    proc = _cli(without("matplotlib"), "compare", str(cfg), "--aiperf", "p.jsonl", "--plot", "p.png",
                cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr  # an environment to fix, as a bad argument is
    assert "matplotlib is not installed" in proc.stderr and "pip install 'aisimulate[plot]'" in proc.stderr


def test_the_api_names_the_extra(monkeypatch):
    from aisimulate.binding import lazy as _lazy

    monkeypatch.delitem(sys.modules, "pandas", raising=False)
    monkeypatch.setattr(sys, "path", ["/nonexistent"] + [p for p in sys.path if "packages" not in p])
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'aisimulate\[pandas\]'") as exc:
        _lazy.module("pandas")
    assert exc.value.name == "pandas"
    assert aisimulate.replay  # the package itself still works
