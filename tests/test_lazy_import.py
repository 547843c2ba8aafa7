"""Ctrl-C during the first import of a module that replay() loads on first use (PyYAML,
numpy) must not break the interpreter: the interrupt reaches the caller, and the next
replay runs as in a fresh process (a notebook user who interrupted once
lost the kernel: every later replay failed with "partially initialized module 'yaml'
has no attribute 'error'")."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import yaml

from conftest import BASE_SPEC, REPO

# A child that interrupts its own first import of TRIP (an import hook raises SIGINT in
# its own thread, whose handler has run when raise_signal returns, or raises
# KeyboardInterrupt itself, when TRIP is looked up: mid-import of its package),
# then replays the config twice and prints what each did.
_CHILD = textwrap.dedent("""
    import importlib.abc, json, os, signal, sys, threading
    trip, how, where, cfg = sys.argv[1:5]
    class Trip(importlib.abc.MetaPathFinder):
        fired = False
        def find_spec(self, name, path, target=None):
            if name == trip and not Trip.fired:
                Trip.fired = True
                if how == "raise":
                    raise KeyboardInterrupt
                signal.raise_signal(signal.SIGINT)  # its handler runs before this returns
            return None
    sys.meta_path.insert(0, Trip())
    import aisimulate
    out = {}
    def first():
        try:
            aisimulate.replay(cfg, progress=False).requests  # the records load numpy
            out["first"] = "ok"
        except KeyboardInterrupt:
            out["first"] = "KeyboardInterrupt"
    if where == "thread":
        t = threading.Thread(target=first); t.start(); t.join()
    else:
        first()
    out["fired"] = Trip.fired
    out["summary"] = aisimulate.replay(cfg, progress=False).summary
    print(json.dumps(out))
""")


def _clean_summary(cfg) -> dict:
    proc = subprocess.run([sys.executable, "-c", "import aisimulate, json, sys\n"
                           "print(json.dumps(aisimulate.replay(sys.argv[1], progress=False).summary))",
                           str(cfg)], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    cfg = tmp_path_factory.mktemp("lazy") / "replay.yaml"
    cfg.write_text(yaml.safe_dump(BASE_SPEC))
    return cfg, _clean_summary(cfg)


@pytest.mark.parametrize("trip,how,where", [
    ("yaml.constructor", "signal", "main"),  # the defect: PyYAML half-imported
    ("numpy._core.numeric", "signal", "main"),
    ("yaml.constructor", "raise", "main"),  # not a signal: the import is taken back
    ("yaml.constructor", "raise", "thread"),  # nor the main thread: the same
    ("numpy._core.numeric", "raise", "main"),  # after numpy's extension loaded: left whole
])
def test_an_interrupted_first_import_leaves_replay_working(config, trip, how, where):
    cfg, clean = config
    proc = subprocess.run([sys.executable, "-c", _CHILD, trip, how, where, str(cfg)],
                          capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert out["fired"], f"{trip} was not imported by the first replay"
    assert out["first"] == "KeyboardInterrupt"  # the interrupt still reaches the caller
    assert out["summary"] == clean  # and the next replay is the uninterrupted one
    assert out["summary"]["completed"] == 5  # BASE_SPEC's 5 synthetic requests


def test_a_notebook_kernel_interrupted_in_a_first_import_keeps_working(config):
    # the case, in a real Jupyter kernel: its interrupt is a SIGINT to the kernel
    # process (sent here by the import hook, mid-import of PyYAML); the cell fails with
    # KeyboardInterrupt and the next cell's replay runs
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    cfg, clean = config
    setup = textwrap.dedent(f"""
        import importlib.abc, os, signal, sys
        sys.path.insert(0, {str(REPO / "python")!r})
        class Trip(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == "yaml.constructor":
                    sys.meta_path.remove(self)
                    signal.raise_signal(signal.SIGINT)  # the kernel's handler runs in here
                return None
        sys.meta_path.insert(0, Trip())
        import aisimulate
    """)
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(setup),
        nbformat.v4.new_code_cell(f"aisimulate.replay({str(cfg)!r}, progress=False)"),
        nbformat.v4.new_code_cell(f"import json; print(json.dumps(aisimulate.replay({str(cfg)!r}, "
                                  "progress=False).summary))"),
    ])
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True).execute()
    first, second = nb.cells[1].outputs, nb.cells[2].outputs
    assert [o.get("ename") for o in first if o.output_type == "error"] == ["KeyboardInterrupt"]
    assert not [o for o in second if o.output_type == "error"], second
    assert json.loads(second[0]["text"]) == clean
