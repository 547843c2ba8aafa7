"""Every exception aisimulate raises survives pickling: a sweep point's error
crosses from its worker process back to the parent as an equal exception.

Before the fix, ``pickle.loads(pickle.dumps(ConfigError("a.b", "bad")))`` raised
TypeError (the default pickling calls ``ConfigError("a.b: bad")``), which killed
``multiprocessing.Pool``'s result thread and left ``sweep(..., jobs=2)`` waiting forever.
"""

from __future__ import annotations

import importlib
import inspect
import multiprocessing as mp
import pickle
import pkgutil
from pathlib import Path

import pytest

import aisimulate
from aisimulate.binding.args import GivenTwice
from aisimulate.binding.strict_json import DuplicateKey
from aisimulate.cli.bench_inference_perf import CommandLineError
from aisimulate.cli.bench_sglang import UsageError as SGLangBenchUsageError
from aisimulate.cli.common import CommandError, StdoutError, UsageError
from aisimulate.io.files import ForeignFileError, IncompleteSaveError
from aisimulate.sweep import UnknownFieldError
from aisimulate.errors import (AisimulateError, BackendVersionWarning, ConfigError, DataError, EngineLimitWarning,
                               InfeasibleError, SimulationError, from_envelope)

#: One or more instances of every public exception class, covering each constructor form.
EXAMPLES = [
    ConfigError("engine.workers.aggregated.tp", "the KV cache cannot hold one request"),
    ConfigError("a.b", "a.b: bad"),  # a prefixed reason is stripped once, and stays so
    ConfigError("", "mapping at the top level expected", file="spec.yaml", line=3),
    ConfigError(None, "empty document", file="spec.yaml"),
    ConfigError("", "no source"),
    InfeasibleError("engine.workers.aggregated.tp", "perf: model M does not fit on h100_sxm at TP 1"),
    DataError("missing output_length", file="/t/trace.jsonl", line=7, field="output_length"),
    DataError("/t/trace.jsonl:7: already located", file="/t/trace.jsonl", line=7),
    DataError("empty file", file="/t/trace.jsonl"),
    DataError("no file at all"),
    SimulationError("INV-3 clock went back"),
    SimulationError("runtime error: index out of range", kind="panic"),
    from_envelope({"kind": "config", "message": "x.y: must be ≥ 1", "field": "x.y"}),
    from_envelope({"kind": "config", "message": "does not fit", "field": "engine.workers.decode.tp",
                   "infeasible": True}),
    from_envelope({"kind": "data", "message": "bad row", "file": "a.csv", "line": 2}),
    ForeignFileError(Path("/out/profile_export.jsonl")),  # a file aisimulate did not write
    IncompleteSaveError(5, "Input/output error (the previous result was removed)", "/out/prediction.json"),
    DuplicateKey("max_num_seqs"),
    UnknownFieldError("traffic.load.bogus", "unknown field (known: concurrency, kind)"),
    GivenTwice("formats: 'csv' is given twice in ['csv', 'csv']: give each record format once", "csv"),
    BackendVersionWarning("engine.perf.backend_version: no tables of 9.9.9; 0.24.0 used"),
    EngineLimitWarning("batch: 5 sequences, over max_num_seqs 4: the aggregated pool's engine never runs this pass"),
    CommandError("an error of the command line"),
    UsageError("--slo ttft_ms=0: a bound is a number of ms > 0"),
    StdoutError("cannot write the result to stdout: No space left on device"),
    CommandLineError("--config_file c.yaml: not a mapping of sections"),
    SGLangBenchUsageError("--dataset-name sharegpt: not simulated (a dataset file; random and random-ids are)"),
]


def _package_exception_classes() -> set[type]:
    """Every public exception class defined anywhere in the aisimulate package."""
    found: set[type] = set()
    for info in pkgutil.walk_packages(aisimulate.__path__, "aisimulate."):
        if info.name.startswith("aisimulate._core") or info.name == "aisimulate.__main__":
            continue  # generated bindings; the CLI entry point exits on import
        module = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            # a private class (calibration's _OutOfBudget) is control flow caught where
            # it is raised and never leaves the package
            if issubclass(cls, BaseException) and cls.__module__.startswith("aisimulate") \
                    and not name.startswith("_"):
                found.add(cls)
    return found


def test_every_public_exception_class_has_an_example():
    classes = _package_exception_classes()
    assert {ConfigError, DataError, SimulationError} <= classes  # the walk found them
    covered = {type(e) for e in EXAMPLES} | {AisimulateError}  # the base is abstract
    assert classes <= covered, f"add pickling examples for {classes - covered}"


@pytest.mark.parametrize("exc", EXAMPLES, ids=lambda e: f"{type(e).__name__}:{e}")
def test_pickle_round_trip_is_equal(exc):
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(exc, protocol=protocol))
        assert back == exc and hash(back) == hash(exc)
        assert type(back) is type(exc)
        assert str(back) == str(exc) and back.args == exc.args
        assert vars(back) == vars(exc)  # field, reason, file, line, kind


def test_equality_is_by_value():
    assert ConfigError("a.b", "bad") == ConfigError("a.b", "a.b: bad")  # same after stripping
    assert ConfigError("a.b", "bad") != ConfigError("a.c", "bad")
    assert DataError("x", file="f", line=1) != DataError("x", file="f", line=2)
    assert SimulationError("x") != SimulationError("x", kind="panic")
    assert ConfigError("", "x") != DataError("x")  # different types never compare equal


def _raise_config_error(_: int) -> None:
    raise ConfigError("engine.workers.aggregated.tp", "too small")


def test_error_crosses_a_process_pool():
    # The original hang's mechanism, now a clean re-raise in the parent.
    with mp.get_context("spawn").Pool(1) as pool:
        with pytest.raises(ConfigError) as err:
            pool.map(_raise_config_error, [1])
    assert err.value == ConfigError("engine.workers.aggregated.tp", "too small")


def test_a_model_that_does_not_fit_is_infeasible(base_spec):
    # Llama-3.1-70B bf16 (131 GiB of weights) on one 80 GiB H100 cannot start; at TP 4
    # it can. InfeasibleError is a ConfigError, so existing handlers still catch it.
    base_spec["engine"].update(model="meta-llama/Llama-3.1-70B-Instruct", system="h100_sxm",
                               workers={"aggregated": {"count": 1, "tp": 1}}, scheduler={})
    with pytest.raises(InfeasibleError) as err:
        aisimulate.replay(base_spec)
    assert isinstance(err.value, ConfigError)
    assert err.value.field == "engine.workers.aggregated.tp" and "does not fit" in str(err.value)
    base_spec["engine"]["scheduler"] = {"max_num_seqs": 0}  # a bad value: not infeasible
    with pytest.raises(ConfigError) as err:
        aisimulate.replay(base_spec)
    assert type(err.value) is ConfigError


def test_a_cache_that_cannot_hold_max_model_len_is_infeasible(base_spec):
    # Qwen3-32B on one H100 at TP 1 holds 1,562 blocks of 16 (24,992 tokens), less than
    # one request of its default max_model_len 40,960: vLLM refuses to start. A sweep
    # over tp records TP 1 as infeasible and runs TP 2.
    base_spec["engine"].update(model="Qwen/Qwen3-32B", system="h100_sxm",
                               workers={"aggregated": {"count": 1, "tp": 1}}, scheduler={})
    with pytest.raises(InfeasibleError) as err:
        aisimulate.replay(base_spec)
    assert err.value.field == "engine.scheduler.max_model_len"
    assert "the largest max_model_len that fits is 24992" in str(err.value)
    base_spec["traffic"]["source"].update(num_requests=2)
    df = aisimulate.sweep(base_spec, {"engine.workers.aggregated.tp": [1, 2]}, jobs=1)
    assert list(df["status"]) == ["infeasible", "ok"]
