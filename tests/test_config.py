"""load_config: parsing, mode rejection, path resolution, and validation by the core."""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path

import pytest
import yaml

import aisimulate
from aisimulate import ConfigError, Spec, load_config
from aisimulate.binding import native as _native
from conftest import EXAMPLE1_ROWS, example1_spec, write_mooncake


def _set(d: dict, dotted: str, value) -> dict:
    """Set d[a][b][c] = value for dotted "a.b.c", creating mappings on the way."""
    keys = dotted.split(".")
    node = d
    for k in keys[:-1]:
        node = node.setdefault(k, {})
    node[keys[-1]] = value
    return d


def _write_yaml(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --- the core validates and names the dotted path --------------------------------------

def test_valid_dict_gives_a_spec(base_spec):
    spec = load_config(base_spec)
    assert isinstance(spec, Spec)
    assert spec.source is None
    assert spec.data["engine"]["model"] == "Qwen/Qwen3-32B"
    assert json.loads(spec.to_json()) == spec.data
    assert "Qwen/Qwen3-32B" in repr(spec)


def test_spec_is_returned_as_is(base_spec):
    spec = load_config(base_spec)
    assert load_config(spec) is spec


def test_input_dict_is_not_modified(base_spec):
    before = copy.deepcopy(base_spec)
    load_config(base_spec)
    assert base_spec == before


def test_defaults_come_from_the_core(base_spec):
    # vLLM's `vllm serve` defaults (vllm/engine/arg_utils.py), filled by the core:
    # on h100_sxm (80 GiB, not an A100) 1024 sequences and 8192 tokens.
    spec = load_config(base_spec).data
    sched = spec["engine"]["scheduler"]
    assert sched["max_num_seqs"] == 1024
    assert sched["max_num_batched_tokens"] == 8192
    assert sched["block_size"] == 16
    assert sched["enable_prefix_caching"] is True
    assert spec["engine"]["workers"]["aggregated"]["count"] == 1
    assert spec["execution"]["mode"] == "offline"


def test_scheduler_defaults_follow_the_system(base_spec):
    # an A100 keeps vLLM's small defaults despite its 80 GiB; an L40S (46,068 MiB)
    # is below 70 GiB
    for system in ("a100_sxm", "l40s"):
        _set(base_spec, "engine.system", system)
        sched = load_config(base_spec).data["engine"]["scheduler"]
        assert (sched["max_num_seqs"], sched["max_num_batched_tokens"]) == (256, 2048), system


def test_explicit_false_is_kept(base_spec):
    _set(base_spec, "engine.scheduler.enable_prefix_caching", False)
    assert load_config(base_spec).data["engine"]["scheduler"]["enable_prefix_caching"] is False


def test_unknown_field_names_the_dotted_path(base_spec):
    _set(base_spec, "engine.scheduler.max_num_seq", 8)  # typo of max_num_seqs
    with pytest.raises(ConfigError) as err:
        load_config(base_spec)
    assert err.value.field == "engine.scheduler.max_num_seq"
    assert str(err.value).startswith("engine.scheduler.max_num_seq: ")
    assert "unknown field" in str(err.value)
    # the field prefix appears once, not twice
    assert str(err.value).count("engine.scheduler.max_num_seq:") == 1


@pytest.mark.parametrize("field, value", [
    ("engine.scheduler.max_num_seqs", "many"),      # wrong type: string for an integer
    ("engine.scheduler.max_num_seqs", 2.5),         # wrong type: fraction for an integer
    ("engine.scheduler.max_num_seqs", -1),          # below range
    ("engine.scheduler.enable_prefix_caching", "yes please"),
    ("engine.perf.base_ms", -2.0),                  # negative pass time
    ("engine.scheduler.gpu_memory_utilization", 1.5),
    ("traffic.load.rate_rps", 0),
])
def test_bad_values_name_the_path(base_spec, field, value):
    _set(base_spec, field, value)
    with pytest.raises(ConfigError) as err:
        load_config(base_spec)
    assert err.value.field == field
    assert str(err.value).startswith(field + ": ")


@pytest.mark.parametrize("field, literal", [
    ("engine.scheduler.gpu_memory_utilization", ".nan"),
    ("traffic.load.rate_rps", ".inf"),
    ("engine.perf.base_ms", "-.inf"),
])
def test_non_finite_yaml_numbers_are_rejected(tmp_path, base_spec, field, literal):
    _set(base_spec, field, 0.5)
    text = yaml.safe_dump(base_spec).replace("0.5", literal)
    assert literal in text
    cfg = _write_yaml(tmp_path / "replay.yaml", text)
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert err.value.field == field
    assert "finite" in str(err.value)


def test_non_finite_in_a_dict_is_rejected(base_spec):
    _set(base_spec, "traffic.load.rate_rps", float("nan"))
    with pytest.raises(ConfigError) as err:
        load_config(base_spec)
    assert err.value.field == "traffic.load.rate_rps"


def test_non_string_key_is_rejected(base_spec):
    base_spec["engine"]["scheduler"][16] = "x"
    with pytest.raises(ConfigError) as err:
        load_config(base_spec)
    assert err.value.field == "engine.scheduler.16"


# --- unsupported modes: rejected before the core is called -----------------------------

UNSUPPORTED = [
    # (dotted key, value, expected field, words in the message)
    ("execution.mode", "online", "execution.mode", "online"),
    ("engine.workers.afd", {"attention_workers": 2}, "engine.workers.afd", "AFD"),
    ("engine.workers.attention_ffn", {"ratio": 2}, "engine.workers.attention_ffn", "AFD"),
    ("traffic.source.type", "agentic", "traffic.source.type", "agentic"),
    ("traffic.agentic", {"tools": 3}, "traffic.agentic", "agentic"),
    ("traffic.profile", "swe-agent", "traffic.profile", "agentic"),
    ("engine.planner", {"kind": "sla"}, "engine.planner", "scaling"),
    ("engine.workers.aggregated.scaling", {"max": 4}, "engine.workers.aggregated.scaling",
     "scaling"),
    ("engine.autoscale", True, "engine.autoscale", "scaling"),
    ("engine.workers.epd", {"encode": 1}, "engine.workers.epd", "encode-prefill-decode"),
    ("engine.encode", {"workers": 1}, "engine.encode", "encode-prefill-decode"),
]


@pytest.fixture
def core_must_not_be_called(monkeypatch):
    """The config never reaches the core; asking it for its lists of allowed values
    (pybind.Enums) is fine."""
    real = _native.call

    def fail(name, *args, **kwargs):
        if name == "Enums":
            return real(name, *args, **kwargs)
        raise AssertionError("the core was called for a config Python must reject")
    monkeypatch.setattr(_native, "call", fail)


@pytest.mark.parametrize("key, value, field, words", UNSUPPORTED,
                         ids=[u[0] for u in UNSUPPORTED])
def test_unsupported_modes_are_rejected_before_go(base_spec, core_must_not_be_called,
                                                  key, value, field, words):
    _set(base_spec, key, value)
    with pytest.raises(ConfigError) as err:
        load_config(base_spec)
    assert err.value.field == field
    assert "not supported" in str(err.value)
    assert words.lower() in str(err.value).lower()


@pytest.mark.parametrize("source", [{"path": "trace.jsonl"}, {"type": None}, {"type": ""}, None])
def test_source_without_type_is_rejected(base_spec, core_must_not_be_called, source):
    if source is None:
        del base_spec["traffic"]["source"]
    else:
        base_spec["traffic"]["source"] = source
    with pytest.raises(ConfigError) as err:
        load_config(base_spec)
    assert err.value.field == "traffic.source.type"
    # the core's one list of source types, sessions included
    assert "is required (one of mooncake, azure, llmservingsim, synthetic, sessions)" in str(err.value)


@pytest.mark.parametrize("where, key", [("", "trafic"), ("", "Traffic"), ("traffic", "sourc")])
def test_a_misspelt_traffic_or_source_is_named_not_a_missing_source(base_spec, where, key):
    # `trafic:` (or `traffic: {sourc: …}`) used to be "traffic.source.type: is required",
    # as if nothing had been written; the core names the unknown key and the known ones
    if where:
        base_spec[where][key] = base_spec[where].pop("source")
    else:
        base_spec[key] = base_spec.pop("traffic")
    with pytest.raises(ConfigError) as err:
        load_config(base_spec)
    assert err.value.field == (f"{where}.{key}" if where else key)
    assert "unknown field (known: " in str(err.value)


def test_offline_mode_is_accepted(base_spec):
    _set(base_spec, "execution.mode", "offline")
    assert load_config(base_spec).data["execution"]["mode"] == "offline"


# --- files, syntax, paths --------------------------------------------------------------

def test_yaml_syntax_error_names_file_and_line(tmp_path):
    cfg = _write_yaml(tmp_path / "bad.yaml",
                      "engine:\n  model: x\n  system: [h100\ntraffic: {}\n")
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert err.value.field == ""
    assert err.value.file == str(cfg)
    assert isinstance(err.value.line, int) and err.value.line >= 3
    assert str(err.value).startswith(f"{cfg}:{err.value.line}: invalid YAML")


def test_duplicate_json_key_names_its_line(tmp_path):
    # Python's JSON parser gives no position: the line is found by the strict YAML
    # reading; the second "model" is on line 3
    cfg = tmp_path / "dup.json"
    cfg.write_text('{"engine": {"model": "m",\n  "system": "h100_sxm",\n  "model": "x"},\n "traffic": {}}\n')
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert str(err.value) == f"{cfg}:3: invalid JSON: duplicate key 'model'"


def test_duplicate_yaml_key_is_rejected(tmp_path, base_spec):
    text = yaml.safe_dump(base_spec) + "engine: {}\n"
    cfg = _write_yaml(tmp_path / "dup.yaml", text)
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert "duplicate key 'engine'" in str(err.value)
    assert err.value.line == text.count("\n")  # the last line


@pytest.mark.parametrize("text", ["- a\n- b\n", "just a string\n", "42\n"])
def test_top_level_must_be_a_mapping(tmp_path, text):
    cfg = _write_yaml(tmp_path / "list.yaml", text)
    with pytest.raises(ConfigError, match="mapping at the top level"):
        load_config(cfg)


def test_empty_file_is_rejected(tmp_path):
    cfg = _write_yaml(tmp_path / "empty.yaml", "# nothing\n")
    with pytest.raises(ConfigError, match="empty"):
        load_config(cfg)


def test_missing_config_file(tmp_path):
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as err:
        load_config(missing)
    assert str(missing) in str(err.value)


def test_json_config_file(tmp_path, base_spec):
    cfg = tmp_path / "replay.json"
    cfg.write_text(json.dumps(base_spec), encoding="utf-8")
    spec = load_config(cfg)
    assert spec.source == str(cfg)
    assert spec.data["traffic"]["source"]["num_requests"] == 5


def test_relative_trace_path_resolves_against_the_yaml_folder(tmp_path, monkeypatch):
    folder = tmp_path / "configs"
    trace = write_mooncake(folder / "traces" / "t.jsonl", EXAMPLE1_ROWS)
    spec = example1_spec(Path("traces/t.jsonl"))
    cfg = _write_yaml(folder / "replay.yaml", yaml.safe_dump(spec))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # must not matter for a file config
    loaded = load_config(cfg)
    assert loaded.source == str(cfg)
    assert loaded.data["traffic"]["source"]["path"] == str(trace)


def test_relative_trace_path_in_a_dict_resolves_against_cwd(tmp_path, monkeypatch):
    trace = write_mooncake(tmp_path / "data" / "t.jsonl", EXAMPLE1_ROWS)
    monkeypatch.chdir(tmp_path)
    loaded = load_config(example1_spec(Path("data/t.jsonl")))
    assert loaded.data["traffic"]["source"]["path"] == str(trace)


def test_missing_trace_file_names_the_field(tmp_path):
    spec = example1_spec(tmp_path / "missing.jsonl")
    with pytest.raises(ConfigError) as err:
        load_config(spec)
    assert err.value.field == "traffic.source.path"
    assert str(err.value) == f"traffic.source.path: file not found: {tmp_path / 'missing.jsonl'}"


def test_missing_relative_trace_file_is_reported_absolute(tmp_path):
    spec = example1_spec(Path("traces/none.jsonl"))
    cfg = _write_yaml(tmp_path / "replay.yaml", yaml.safe_dump(spec))
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert err.value.field == "traffic.source.path"
    assert str(tmp_path / "traces" / "none.jsonl") in str(err.value)


@pytest.mark.parametrize("key", ["model", "system"])
def test_path_like_model_or_system_is_resolved_and_checked(tmp_path, base_spec, key):
    base_spec["engine"][key] = "./configs/x.json" if key == "model" else "sys.yaml"
    cfg = _write_yaml(tmp_path / "replay.yaml", yaml.safe_dump(base_spec))
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert err.value.field == f"engine.{key}"
    expected = tmp_path / ("configs/x.json" if key == "model" else "sys.yaml")
    assert str(err.value) == f"engine.{key}: file not found: {expected}"


def test_a_checkpoint_folder_is_a_model(tmp_path, base_spec):
    """engine.model as a Hugging Face checkpoint folder (``vllm serve ./Qwen3-32B``) was
    "not a file": it is read through its config.json, resolved against the config's
    folder like a file; a folder without config.json says so; the replay never writes
    over the files it reads there."""
    source = Path(__file__).resolve().parents[2] / "shared/data/aic/model_configs/Qwen--Qwen3-32B_config.json"
    if not source.is_file():
        pytest.skip("reads ../shared/data")
    ckpt = tmp_path / "ckpt" / "Qwen3-32B"
    ckpt.mkdir(parents=True)
    named = aisimulate.replay(base_spec, progress=False)  # Qwen/Qwen3-32B by name
    base_spec["engine"]["model"] = "./ckpt/Qwen3-32B"
    cfg = _write_yaml(tmp_path / "replay.yaml", yaml.safe_dump(base_spec))
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert str(err.value) == (f"engine.model: a folder without config.json: {ckpt} (give a Hugging Face "
                              "checkpoint folder, which holds one, or the config file itself)")
    (ckpt / "config.json").write_bytes(source.read_bytes())
    rep = aisimulate.replay(cfg, progress=False)
    assert rep.metadata["model"] == str(ckpt)
    assert rep.summary == named.summary
    assert rep.table().splitlines()[1].startswith(f"{ckpt} on h100_sxm")


def test_model_path_is_resolved_against_the_yaml_folder(tmp_path, base_spec):
    # the shared data beside the checkout (../shared/data), as the examples read it
    src = Path(__file__).resolve().parents[2] / "shared/data/aic/model_configs/Qwen--Qwen3-8B_config.json"
    if not src.is_file():
        pytest.skip("shared model configs are not present")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_bytes(src.read_bytes())
    base_spec["engine"]["model"] = "m/config.json"
    cfg = _write_yaml(tmp_path / "replay.yaml", yaml.safe_dump(base_spec))
    assert load_config(cfg).data["engine"]["model"] == str(tmp_path / "m" / "config.json")


def test_model_name_is_left_alone(base_spec):
    assert load_config(base_spec).data["engine"]["model"] == "Qwen/Qwen3-32B"


def test_model_config_dir_from_environment(tmp_path, monkeypatch, base_spec):
    # The environment's folder is searched first: it is chosen when it holds the model.
    (tmp_path / "Qwen--Qwen3-32B_config.json").write_text("{}")
    monkeypatch.setenv(aisimulate.config.MODEL_CONFIGS_ENV, str(tmp_path))
    data = load_config(base_spec).data
    assert data["engine"]["model_config_dir"] == str(tmp_path)
    # A folder without it is passed over for the next folder that has it (here the
    # data folder named by AISIMULATE_DATA), so the environment adds models.
    (tmp_path / "Qwen--Qwen3-32B_config.json").unlink()
    data_root = tmp_path / "data"
    (data_root / "aic" / "model_configs").mkdir(parents=True)
    (data_root / "aic" / "model_configs" / "Qwen--Qwen3-32B_config.json").write_text("{}")
    monkeypatch.setenv("AISIMULATE_DATA", str(data_root))
    data = load_config(base_spec).data
    assert data["engine"]["model_config_dir"] == str(data_root / "aic" / "model_configs")


def test_model_config_dir_from_missing_environment_folder(tmp_path, monkeypatch, base_spec):
    monkeypatch.setenv(aisimulate.config.MODEL_CONFIGS_ENV, str(tmp_path / "none"))
    with pytest.raises(ConfigError) as err:
        load_config(base_spec)
    assert err.value.field == "engine.model_config_dir"
    assert aisimulate.config.MODEL_CONFIGS_ENV in str(err.value)


def test_explicit_model_config_dir_is_resolved_and_checked(tmp_path, monkeypatch, base_spec):
    (tmp_path / "mc").mkdir()
    monkeypatch.chdir(tmp_path)
    base_spec["engine"]["model_config_dir"] = "mc"
    assert load_config(base_spec).data["engine"]["model_config_dir"] == str(tmp_path / "mc")
    base_spec["engine"]["model_config_dir"] = "nothing-here"
    with pytest.raises(ConfigError) as err:
        load_config(base_spec)
    assert err.value.field == "engine.model_config_dir"


def test_default_model_config_dir_is_the_shared_data_folder(monkeypatch, base_spec):
    monkeypatch.delenv(aisimulate.config.MODEL_CONFIGS_ENV, raising=False)
    shared = Path(aisimulate.__file__).resolve().parents[2].parent / "shared/data/aic/model_configs"
    if not shared.is_dir():
        pytest.skip("shared model configs are not present")
    assert load_config(base_spec).data["engine"]["model_config_dir"] == str(shared)


def test_load_config_rejects_other_types():
    with pytest.raises(TypeError):
        load_config(42)  # type: ignore[arg-type]


def test_cwd_is_not_changed(base_spec):
    before = os.getcwd()
    load_config(base_spec)
    assert os.getcwd() == before


def test_a_data_folder_variable_naming_a_file_says_it_is_no_folder(monkeypatch, tmp_path, base_spec):
    # AISIMULATE_DATA=/etc/passwd said "folder not found" of a file that is there
    from aisimulate import catalogue
    afile = tmp_path / "data.txt"
    afile.write_text("x")
    for env, words in (("AISIMULATE_DATA", f"AISIMULATE_DATA={afile}: not a folder ({afile})"),
                       ("AISIMULATE_MODEL_CONFIGS", f"not a folder: {afile} (from the environment variable")):
        monkeypatch.delenv("AISIMULATE_DATA", raising=False)
        monkeypatch.setenv(env, str(afile))
        with pytest.raises(ConfigError, match=re.escape(words)):
            catalogue.model_config_dirs()
        monkeypatch.setenv(env, str(tmp_path / "missing"))
        with pytest.raises(ConfigError, match="folder not found"):
            catalogue.model_config_dirs()
        monkeypatch.delenv(env)
