"""engine.perf.database (source aic): resolved against the config file's folder, checked."""

from __future__ import annotations

import pytest

import aisimulate
from aisimulate import ConfigError


def _yaml(db: str) -> str:
    return f"""
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  perf: {{source: aic, database: {db}}}
  quantization: {{weights: fp8}}
traffic:
  source: {{type: synthetic, num_requests: 2, isl: 16, osl: 2}}
  load: {{mode: concurrency, concurrency: 1}}
"""


def test_database_is_relative_to_the_config_file(tmp_path):
    (tmp_path / "tables").mkdir()
    cfg = tmp_path / "sub" / "replay.yaml"
    cfg.parent.mkdir()
    cfg.write_text(_yaml("../tables"))
    spec = aisimulate.load_config(cfg)
    assert spec.data["engine"]["perf"]["database"] == str(tmp_path / "tables")
    assert spec.data["engine"]["perf"]["backend_version"] == "0.24.0"  # core default
    # kv_cache "auto": the checkpoint's calibrated KV format (none here), else bf16
    assert spec.data["engine"]["quantization"] == {"weights": "fp8", "kv_cache": "auto"}


def test_missing_database_names_the_field(tmp_path):
    cfg = tmp_path / "replay.yaml"
    cfg.write_text(_yaml("./nowhere"))
    with pytest.raises(ConfigError) as exc:
        aisimulate.load_config(cfg)
    assert exc.value.field == "engine.perf.database"
    assert "folder not found" in str(exc.value)
