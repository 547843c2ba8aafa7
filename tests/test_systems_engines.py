"""``aisimulate systems`` says which engines' kernel tables a system has, since
``perf: {source: aic}`` with an engine whose tables the system lacks is refused: its
``kernel_tables`` column read "yes" for l40s, whose tables are vLLM's only, and a
TensorRT-LLM replay there then failed. ``list_systems()`` gives the engines as
``kernel_table_engines`` (the GEMM folders of the system's tables), and the CSV writes
them as one cell."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

from conftest import REPO


def _data(root):
    systems = root / "aic" / "systems"
    systems.mkdir(parents=True)
    (systems / "acme_gpu.yaml").write_text(
        "gpu: {mem_bw: 3350000000000, mem_capacity: 85899345920, bfloat16_tc_flops: 989000000000000,"
        " fp8_tc_flops: 1978000000000000}\nnode: {num_gpus_per_node: 8, intra_node_bw: 450000000000}\n"
        "misc: {other_mem: 3758096384}\n")
    for engine in ("vllm", "sglang"):  # tables of two engines, none of TensorRT-LLM's
        (systems / "data" / "acme_gpu" / "gemm" / engine / "0.1.0").mkdir(parents=True)
    return root


def _run(data, *args):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), AISIMULATE_DATA=str(data))
    proc = subprocess.run([sys.executable, "-m", "aisimulate", "systems", "-q", *args], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_systems_name_the_engines_of_their_tables(tmp_path):
    data = _data(tmp_path / "data")
    rows = {s["name"]: s for s in json.loads(_run(data, "--format", "json"))}
    assert rows["acme_gpu"]["kernel_tables"] is True
    assert rows["acme_gpu"]["kernel_table_engines"] == ["sglang", "vllm"]
    table = [ln.split() for ln in _run(data).splitlines()]
    assert table[0][5] == "kernel_tables"
    assert next(r for r in table if r[0] == "acme_gpu")[5] == "sglang,vllm"
    cells = {r["name"]: r for r in csv.DictReader(io.StringIO(_run(data, "--format", "csv")))}
    assert cells["acme_gpu"]["kernel_table_engines"] == "sglang,vllm"
