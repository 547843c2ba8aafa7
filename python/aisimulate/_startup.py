"""Ctrl-C while the ``aisimulate`` command starts.

The command spends its first ~0.1 s of CPU (more on a loaded machine) importing the
package and building its argument parser, before :func:`aisimulate.cli.main` can take a
``KeyboardInterrupt``; a Ctrl-C then printed a traceback from the middle of an import.
When this process is the command (``aisimulate …``, ``python -m aisimulate …``),
``aisimulate/__init__.py`` calls :func:`hold` first: until the command starts to run
(:func:`release`), SIGINT ends the process at once with the command's one line and exit
130. Nothing has been read or written by then. In any other process (a script or a
notebook importing aisimulate) nothing changes.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

#: Exit code after Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130

_held = False


def is_command() -> bool:
    """Whether this process is the ``aisimulate`` command: the console script (its
    ``argv[0]`` is named ``aisimulate``) or ``python -m aisimulate``."""
    argv0 = os.path.basename(sys.argv[0]) if sys.argv else ""
    if argv0 in ("aisimulate", "aisimulate.exe", "aisimulate-script.py"):
        return True
    orig = list(getattr(sys, "orig_argv", ()))
    return any(a == "-m" and b == "aisimulate" for a, b in zip(orig, orig[1:])) or "-maisimulate" in orig


def _quit(signum, frame) -> None:  # pragma: no cover - runs in a child process
    try:
        os.write(2, b"aisimulate: error: interrupted\n")
    except OSError:  # stderr closed
        pass
    os._exit(EXIT_INTERRUPTED)


def hold() -> None:
    """In the ``aisimulate`` command only: make SIGINT exit at once (one line, exit
    130) until :func:`release`."""
    global _held
    if not _held and is_command() and threading.current_thread() is threading.main_thread() \
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _quit)
        _held = True


def release() -> None:
    """The command starts to run: SIGINT raises ``KeyboardInterrupt`` again (a replay
    stops and the CLI exits 130 with its one line)."""
    global _held
    if _held:
        _held = False
        signal.signal(signal.SIGINT, signal.default_int_handler)
