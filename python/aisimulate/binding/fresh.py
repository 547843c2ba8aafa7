"""``python -m aisimulate.binding.fresh NAME``: run one native call in this fresh interpreter
and print its envelope (used by a process forked after the Go core started, whose own
Go runtime cannot be trusted; see :mod:`aisimulate.binding.native`). The call's arguments, a
JSON list of strings, come on stdin."""

import json
import sys

from .native import pybind

if __name__ == "__main__":
    args = json.loads(sys.stdin.read())
    sys.stdout.write(getattr(pybind(), sys.argv[1])(*args))
