"""Shared fixtures: small replay configs whose outcomes can be worked out by hand."""

from __future__ import annotations

import copy
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# The interrupt tests send SIGINT and SIGTERM to this process and to the processes it
# starts, which inherit its signal mask and its ignored signals through fork and exec.
# A launcher that starts the suite with SIGINT blocked or ignored (a background job of a
# non-interactive shell ignores it; some runners block it) made those signals vanish:
# every child then ran to its end instead of stopping. The suite starts from the
# defaults a terminal gives, however it was launched.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

# The linear pass-time model of the worked examples (docs/design.md):
# pass ms = 2.0 + 0.01 × prompt tokens computed + 0.1 × decoding requests.
LINEAR_PERF = {"source": "linear", "base_ms": 2.0, "per_prefill_token_ms": 0.01,
               "per_decode_seq_ms": 0.1}

BASE_SPEC = {
    "engine": {
        "model": "Qwen/Qwen3-32B",
        "system": "h100_sxm",
        "perf": LINEAR_PERF,
        # 1000 blocks of 16 hold 16,000 tokens: max_model_len must fit in them
        # (the start-up KV check, as vLLM refuses to start otherwise)
        "scheduler": {"num_gpu_blocks": 1000, "max_model_len": 16000},
    },
    "traffic": {
        "source": {"type": "synthetic", "num_requests": 5, "isl": 100, "osl": 4},
        "load": {"mode": "rate", "rate_rps": 10.0, "arrival": "constant"},
    },
}


@pytest.fixture
def base_spec() -> dict:
    """A valid synthetic spec (deep copy: tests may mutate it)."""
    return copy.deepcopy(BASE_SPEC)


def write_mooncake(path: Path, rows: list[dict]) -> Path:
    """Write Mooncake JSONL rows (timestamp ms, input_length, output_length, hash_ids)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# Worked example 1: r1 sent at 0 (ISL 1000, OSL 3), r2 at 10 ms (ISL 100, OSL 2), no
# shared prefix (distinct 512-token block hashes).
EXAMPLE1_ROWS = [
    {"timestamp": 0, "input_length": 1000, "output_length": 3, "hash_ids": [1, 2]},
    {"timestamp": 10, "input_length": 100, "output_length": 2, "hash_ids": [3]},
]


def example1_spec(trace: Path) -> dict:
    return {
        "engine": {
            "model": "Qwen/Qwen3-32B",
            "system": "h100_sxm",
            "perf": dict(LINEAR_PERF),
            "workers": {"aggregated": {"count": 1}},
            "scheduler": {"max_num_batched_tokens": 512, "max_num_seqs": 4, "block_size": 16,
                          "enable_prefix_caching": True, "num_gpu_blocks": 1000,
                          "max_model_len": 16000},
        },
        "traffic": {"source": {"type": "mooncake", "path": str(trace)},
                    "load": {"mode": "trace"}},
    }


def run_cli(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    """``python -m aisimulate ARGS`` in a child process with this checkout's package and a
    bare environment (no AISIMULATE_* settings of the caller)."""
    return subprocess.run([sys.executable, "-m", "aisimulate", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120, input=stdin,
                          env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"})


def assert_usage_error(proc: subprocess.CompletedProcess, prefix: str, *needles: str) -> None:
    """The command was refused before doing anything: exit 2, nothing on stdout, and one
    line on stderr that starts with ``prefix`` and holds every one of ``needles``."""
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix), proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert proc.stdout == ""
