"""The example notebook runs as written (its code cells, in order, from examples/)."""

from __future__ import annotations

import json
import os
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_quickstart_notebook_runs(monkeypatch):
    nb = json.loads((EXAMPLES / "quickstart.ipynb").read_text())
    monkeypatch.chdir(EXAMPLES)
    scope: dict = {}
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), "quickstart.ipynb", "exec"), scope)
    # two workers with the client path serve the same closed loop faster
    assert scope["report2"].summary["output_token_throughput_tps"] > scope["report"].summary["output_token_throughput_tps"]
    assert len(scope["df"]) == 500
