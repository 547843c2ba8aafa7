"""``python -m aisimulate``: the command line (see :mod:`aisimulate.cli`)."""

from .cli import console_main

console_main()
