"""The config's JSON Schema (aisimulate.config_schema, `aisimulate schema`,
docs/config.schema.json), checked by jsonschema against the example configs and bad ones."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

import aisimulate
from aisimulate.cli import main
from conftest import REPO

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))


@pytest.fixture(scope="module")
def validator():
    schema = aisimulate.config_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_published_schema_is_the_generated_one(capsys):
    published = json.loads((REPO / "docs" / "config.schema.json").read_text(encoding="utf-8"))
    assert aisimulate.config_schema() == published
    assert main(["schema"]) == 0
    # byte for byte: a number such as max_memory_gb's minimum 0.000001 as the
    # file has it, not as Python's json writes it (1e-06)
    out = capsys.readouterr().out
    assert out.encode("utf-8") == (REPO / "docs" / "config.schema.json").read_bytes()
    assert '"minimum": 0.000001,' in out


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_config_is_valid(validator, path):
    assert EXAMPLES, "examples/*.yaml"
    validator.validate(yaml.safe_load(path.read_text(encoding="utf-8")))


def _messages(errors):
    """Every message, path and instance of the errors and of the oneOf alternatives'."""
    for e in errors:
        yield f"{e.message} {list(e.path)} {e.instance}"
        yield from _messages(e.context or [])


def _quickstart():
    return yaml.safe_load((REPO / "examples" / "quickstart.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("edit, where", [
    (lambda c: c["engine"].update(modle="x"), "modle"),                            # unknown field
    (lambda c: c["engine"].pop("model"), "model"),                                # required
    (lambda c: c["engine"].update(perf={"source": "guess"}), "guess"),            # unknown variant
    (lambda c: c["engine"].update(perf={"source": "linear", "base_ms": 1}), "per_prefill_token_ms"),
    (lambda c: c["engine"].update(perf={"source": "roofline", "base_ms": 1}), "base_ms"),  # another variant's
    (lambda c: c["traffic"]["source"].update(isl="ten"), "ten"),                  # a length: int or mapping
    (lambda c: c["engine"].update(scheduler={"max_num_seqs": 2.5}), "2.5"),      # integer field
    (lambda c: c["execution"].update(seed=-1), "-1"),
    # ranges, from the table the loader checks with (core/config/ranges.go)
    (lambda c: c["engine"]["workers"]["aggregated"].update(tp=1025), "1025"),
    (lambda c: c["engine"].update(scheduler={"max_num_seqs": 0}), "0"),
    (lambda c: c["engine"].update(scheduler={"gpu_memory_utilization": 0}), "0"),
    (lambda c: c["traffic"]["load"].update(concurrency=1 << 25), str(1 << 25)),
    (lambda c: c["engine"].update(perf={"compute_efficiency": 1.5}), "1.5"),
    (lambda c: c["execution"].update(max_memory_gb=0.001), "0.001"),
    # vLLM's --block-size choices, not the range [1, 256]
    (lambda c: c["engine"].update(scheduler={"block_size": 48}), "48"),
    # a string field's allowed values, from the lists the loader checks with
    (lambda c: c["execution"].update(mode="online"), "online"),
    (lambda c: c["engine"].update(backend="lmdeploy"), "lmdeploy"),
    (lambda c: c["traffic"]["load"].update(mode="rate", rate_rps=1, arrival="bursty"), "bursty"),
    (lambda c: c["engine"].update(quantization={"kv_cache": "int4"}), "int4"),
])
def test_bad_configs_fail_the_schema(validator, edit, where):
    cfg = _quickstart()
    edit(cfg)
    errors = list(validator.iter_errors(cfg))
    assert errors and where in " ".join(_messages(errors))
    with pytest.raises(aisimulate.ConfigError):  # the loader refuses each too
        aisimulate.load_config(cfg)


def test_block_size_takes_vllms_choices(validator):
    cfg = _quickstart()
    cfg["engine"]["scheduler"] = {"block_size": 64}
    validator.validate(cfg)
    aisimulate.load_config(cfg)
    cfg["engine"]["scheduler"] = {"block_size": 48}
    errors = list(validator.iter_errors(cfg))
    assert [e.message for e in errors] == ["48 is not one of [1, 8, 16, 32, 64, 128, 256]"]


def test_a_length_mapping_and_defaults(validator):
    cfg = _quickstart()
    cfg["traffic"]["source"]["isl"] = {"kind": "uniform", "min": 100, "max": 200}
    cfg["engine"]["perf"] = {"compute_efficiency": 0.5}  # source defaults to roofline
    validator.validate(cfg)
    aisimulate.load_config(cfg)


def test_null_for_an_optional_block_is_valid_as_the_loader_takes_it(validator):
    """The README says ``null`` for an optional block is the same as
    leaving it out, and the loader takes it; the schema refused it."""
    cfg = _quickstart()
    cfg["engine"].update(tokenization=None, detokenization=None, quantization=None)
    cfg["traffic"]["source"]["dataset"] = None
    cfg["traffic"]["load"]["response_overhead"] = None
    cfg["execution"]["max_memory_gb"] = None
    validator.validate(cfg)
    assert aisimulate.load_config(cfg).data == aisimulate.load_config(_quickstart()).data
    # a required field or a non-optional one stays non-null in both
    for edit, where in ((lambda c: c["engine"].update(model=None), "model"),
                        (lambda c: c["traffic"]["load"].update(concurrency=None), "concurrency")):
        bad = _quickstart()
        edit(bad)
        assert list(validator.iter_errors(bad))
        with pytest.raises(aisimulate.ConfigError, match=where):
            aisimulate.load_config(bad)


@pytest.mark.parametrize("edit, where", [
    (lambda c: c["traffic"]["load"].update(concurrency=-3), "-3"),
    (lambda c: c["engine"]["workers"]["aggregated"].update(count=0), "0"),
    (lambda c: c["traffic"]["source"].update(num_requests=0), "0"),
])
def test_the_bounds_a_tester_tried_are_in_the_schema(validator, edit, where):
    test_bad_configs_fail_the_schema(validator, edit, where)
