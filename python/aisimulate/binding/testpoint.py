"""Named points where a test can interrupt a process (off unless a test turns them on).

A test that interrupts a replay must know where the process is when the signal
arrives; a sleep or a CPU-time threshold is a guess about the scheduler that a busy
machine defeats. Instead the process says where it is and waits there:
:func:`reached` does nothing unless the environment variable ``AISIMULATE_TEST_PAUSE``
(a comma-separated list of point names) names the point; then it appends the line
``NAME PID`` to the file ``AISIMULATE_TEST_PAUSE_FILE`` (when set) and waits, in short
sleeps, until a signal handler raises (Ctrl-C's ``KeyboardInterrupt``, the CLI's
SIGTERM exception) or the process is killed. The test waits for the line, then sends
its signal.

Points (each on the thread that waits for the core, which is the main thread of the
command and of a script):

- ``replay``: :func:`aisimulate.binding.calls.replay_native` after one wait in which the core was
  replaying (it goes on replaying on its own thread while this one waits);
- ``check``: :func:`aisimulate.binding.calls.call_stoppable` likewise, for ``validate`` and
  :func:`aisimulate.check` (the core reads the trace meanwhile).
"""

from __future__ import annotations

import os
import time

__all__ = ["reached", "ENV", "FILE_ENV"]

#: The environment variable that names the points to wait at (comma-separated).
ENV = "AISIMULATE_TEST_PAUSE"

#: The file that :func:`reached` appends ``NAME PID`` to before it waits.
FILE_ENV = "AISIMULATE_TEST_PAUSE_FILE"

#: Each wait's length (s): short, so that a signal taken by another thread of the
#: process (whose handler Python runs on the main thread at its next instruction) is
#: acted on soon after.
_NAP_S = 0.01


def reached(name: str) -> None:
    """The process is at point ``name``: wait there if ``AISIMULATE_TEST_PAUSE`` names
    it (see the module docstring), else return at once."""
    names = os.environ.get(ENV)
    if not names or name not in names.split(","):
        return
    path = os.environ.get(FILE_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as f:  # one short append: whole lines
            f.write(f"{name} {os.getpid()}\n")
    while True:
        time.sleep(_NAP_S)
