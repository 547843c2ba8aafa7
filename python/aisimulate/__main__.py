"""``python -m aisimulate``: the command line (see :mod:`aisimulate.cli`)."""

import sys

from .cli import main

sys.exit(main())
