"""The example notebook runs in a real Jupyter kernel (nbclient, the venv's python3 kernel),
every plotting cell shows an image, and the stored copy carries those outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "quickstart.ipynb"

#: Source markers of the cells that draw a figure.
PLOT_CELLS = ("plot.latency_cdf(", "report2.plot.timeline()", "report.plot.throughput()", "plot.pareto(")


def _images(cell) -> int:
    return sum("image/png" in out.get("data", {}) for out in cell.get("outputs", []))


def test_quickstart_notebook_runs_in_a_kernel_and_draws_every_plot():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []  # run from scratch, not from the stored outputs
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()  # raises CellExecutionError on any failing cell
    code = [c for c in nb.cells if c.cell_type == "code"]
    plot_cells = [c for c in code if any(m in c.source for m in PLOT_CELLS)]
    assert len(plot_cells) == len(PLOT_CELLS)
    for cell in plot_cells:
        assert _images(cell) == 1, f"no figure from: {cell.source[:60]!r}"
    for cell in code:
        assert not [o for o in cell.outputs if o.output_type == "error"]
        assert not [o for o in cell.outputs if o.get("name") == "stderr"], "a cell wrote to stderr"
    # the sweep's table: 4 deployments × 3 client counts, every one ran
    sweep_cell = next(c for c in code if "aisimulate.sweep(" in c.source)
    table = sweep_cell.outputs[-1]["data"]["text/plain"]
    assert table.count(" ok ") == 12


def test_the_stored_notebook_shows_its_figures():
    nb = json.loads(NOTEBOOK.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    for cell in code:
        src = "".join(cell["source"])
        if any(m in src for m in PLOT_CELLS):
            assert _images(cell) == 1, f"stored without its figure: {src[:60]!r}"
    assert "matplotlib.use(" not in NOTEBOOK.read_text()  # the Agg trap that hid the plot
