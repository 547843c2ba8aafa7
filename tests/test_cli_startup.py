"""Ctrl-C while the aisimulate command starts (its imports and argument parser, before
the command runs) is exit 130 with the command's one line, never a traceback. The
interrupt lands at a fixed point of the start-up whatever the machine's load: an import
hook (a sitecustomize module first on the path) raises SIGINT in its own thread when the
named module is looked up (``signal.raise_signal``: the handler has run when it
returns)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BASE_SPEC, REPO

_SITE = """\
import importlib.abc, os, signal, sys
TRIP = os.environ["AISIMULATE_TEST_TRIP"]
class _Trip(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == TRIP:
            sys.meta_path.remove(self)
            signal.raise_signal(signal.SIGINT)  # its handler runs before this returns
        return None
sys.meta_path.insert(0, _Trip())
"""


@pytest.mark.parametrize("trip", [
    "aisimulate.errors",  # in the package's own imports
    "argparse",  # in aisimulate.cli's
    "aisimulate.cli.sweep",  # while the parser is built
])
@pytest.mark.parametrize("how", ["module", "script"])
def test_ctrl_c_during_start_up_is_one_line_and_exit_130(tmp_path, trip, how):
    (tmp_path / "sitecustomize.py").write_text(_SITE)
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(BASE_SPEC))
    cmd = [sys.executable, "-m", "aisimulate"] if how == "module" \
        else [str(Path(sys.executable).parent / "aisimulate")]
    proc = subprocess.run([*cmd, "replay", str(cfg)], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": f"{tmp_path}:{REPO / 'python'}", "PATH": "/usr/bin:/bin",
                               "AISIMULATE_TEST_TRIP": trip})
    assert (proc.returncode, proc.stderr, proc.stdout) == (130, "aisimulate: error: interrupted\n", "")


def test_an_interrupt_during_start_up_reaches_a_script_that_imports_aisimulate(tmp_path):
    # not the command: the interrupt is the script's KeyboardInterrupt, as before
    (tmp_path / "sitecustomize.py").write_text(_SITE)
    proc = subprocess.run([sys.executable, "-c", "try:\n import aisimulate\nexcept KeyboardInterrupt:\n"
                           " print('KeyboardInterrupt')\n"], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": f"{tmp_path}:{REPO / 'python'}", "PATH": "/usr/bin:/bin",
                               "AISIMULATE_TEST_TRIP": "aisimulate.errors"})
    assert (proc.returncode, proc.stdout) == (0, "KeyboardInterrupt\n"), proc.stderr


def test_ctrl_c_as_the_command_returns_is_one_line_and_exit_130(tmp_path):
    # A SIGINT measured landing in main()'s finally (the SIGTERM handler restored after a
    # replay whose files were written) printed a traceback. Here the restore raises it.
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(BASE_SPEC))
    child = ("import signal, sys\n"
             "import aisimulate.cli as cli\n"
             "real = signal.signal\n"
             "def trip(sig, handler):\n"
             "    if sig == signal.SIGTERM and handler is not cli._on_sigterm:\n"
             "        raise KeyboardInterrupt\n"
             "    return real(sig, handler)\n"
             "signal.signal = trip\n"
             f"sys.argv = ['aisimulate', 'validate', {str(cfg)!r}]\n"
             "cli.console_main()\n")
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"})
    assert (proc.returncode, proc.stderr) == (130, "aisimulate: error: interrupted\n")
    assert proc.stdout.startswith(f"{cfg}: valid\n")  # the command's own output came first


def test_a_second_ctrl_c_while_a_sweeps_pool_shuts_down_is_no_traceback():
    # After an interrupted sweep the interpreter's exit runs loky's handler, which joins
    # its pool's manager thread; a second SIGINT then (Ctrl-C pressed again, or
    # `timeout -s INT`, which signals the command and then its process group) printed
    # "Exception ignored in: <module 'threading'> … KeyboardInterrupt" after the one
    # line. Here the command returns 130 as a pool had started, and an exit handler
    # standing for loky's takes the second SIGINT.
    child = ("import atexit, signal, sys, types\n"
             "import aisimulate.cli as cli\n"
             "sys.modules['joblib.externals.loky'] = types.ModuleType('loky')  # a pool was started\n"
             "def shut_down_pool():\n"
             "    signal.raise_signal(signal.SIGINT)\n"
             "    print('pool shut down', flush=True)\n"
             "atexit.register(shut_down_pool)\n"
             "cli.main = lambda: 130\n"
             "cli.console_main()\n")
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"})
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "pool shut down\n", "")
