"""Where aisimulate finds the model configs, GPU system specs and kernel tables that a
replay names, and what is there.

One setting adds data: the environment variable ``AISIMULATE_DATA``, a folder laid out
like the AIConfigurator data this project reads (``aic/model_configs/Org--Name_config.json``,
``aic/systems/<system>.yaml``, and the measured kernel tables under ``aic/systems/data/``
for ``perf: {source: aic}``). Folders are searched in this order:

1. ``$AISIMULATE_DATA`` (relative to the working directory; an error if it is set but
   is not a folder);
2. in a source checkout, ``../shared/data`` beside the checkout, when it exists;
3. the data the installed package carries (``aisimulate/data``: the model configs and
   system YAMLs present when the wheel was built; kernel tables stay outside it).

``AISIMULATE_MODEL_CONFIGS`` (a folder of ``Org--Name_config.json``) is searched before
all of them for model names, and a config's own ``engine.model_config_dir`` /
``engine.perf.database`` win over everything. Built-in models and systems (a few, in the
core) need no folder at all.

>>> import aisimulate
>>> [m["name"] for m in aisimulate.list_models() if m["supported"]][:3]
>>> aisimulate.list_systems()[0]["name"]
"""

from __future__ import annotations

import json
import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any

from .binding import native as _native
from .errors import ConfigError

__all__ = ["DATA_ENV", "MODEL_CONFIGS_ENV", "data_roots", "model_config_dirs", "system_dirs",
           "perf_databases", "list_models", "list_systems", "searched_hint"]

#: Environment variable naming a data folder (``aic/model_configs``, ``aic/systems``).
DATA_ENV = "AISIMULATE_DATA"
#: Environment variable naming a folder of ``Org--Name_config.json`` model configs.
MODEL_CONFIGS_ENV = "AISIMULATE_MODEL_CONFIGS"

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent.parent  # python/aisimulate -> python -> the checkout
_BUNDLED = _PACKAGE / "data"


def data_roots() -> list[Path]:
    """The data folders, in search order (those that exist).

    Raises:
        ConfigError: ``AISIMULATE_DATA`` is set but is not a folder.
    """
    roots: list[Path] = []
    env = os.environ.get(DATA_ENV)
    if env:
        root = Path(os.path.abspath(env))
        if not root.is_dir():
            what = "not a folder" if root.exists() else "folder not found"
            raise ConfigError("", f"{DATA_ENV}={env}: {what} ({root})")
        roots.append(root)
    shared = _CHECKOUT.parent / "shared" / "data"
    if (_CHECKOUT / "go.mod").is_file() and shared.is_dir():
        roots.append(shared)
    if _BUNDLED.is_dir():
        roots.append(_BUNDLED)
    return roots


def model_config_dirs() -> list[Path]:
    """Folders searched for ``Org--Name_config.json`` model configs, in order.

    Raises:
        ConfigError: ``AISIMULATE_MODEL_CONFIGS`` or ``AISIMULATE_DATA`` is set to
            something that is not a folder (``.field`` is ``engine.model_config_dir``
            for the former).
    """
    dirs: list[Path] = []
    env = os.environ.get(MODEL_CONFIGS_ENV)
    if env:
        folder = Path(os.path.abspath(env))
        if not folder.is_dir():
            what = "not a folder" if folder.exists() else "folder not found"
            raise ConfigError("engine.model_config_dir", f"{what}: {folder} "
                              f"(from the environment variable {MODEL_CONFIGS_ENV})")
        dirs.append(folder)
    dirs += [r / "aic" / "model_configs" for r in data_roots() if (r / "aic" / "model_configs").is_dir()]
    return dirs


def system_dirs() -> list[Path]:
    """Folders searched for ``<system>.yaml`` GPU system specs, in order."""
    return [r / "aic" / "systems" for r in data_roots() if (r / "aic" / "systems").is_dir()]


def perf_databases() -> list[Path]:
    """Folders that hold measured kernel tables (``aic/systems/data/<system>/…``), in
    order: the candidates for ``engine.perf.database`` when a config leaves it out."""
    return [d for d in system_dirs() if (d / "data").is_dir()]


def searched_hint(kind: str, said: str = "") -> str:
    """A sentence naming the folders searched for ``kind`` (``"models"``, ``"systems"``
    or ``"kernel tables"``) and the setting that adds more, for "not found" errors.
    Folders ``said`` (the error's own text) already names are not named again."""
    try:
        dirs = {"models": model_config_dirs, "systems": system_dirs,
                "kernel tables": perf_databases}[kind]()
    except ConfigError as exc:
        return str(exc)
    layout = {"models": "aic/model_configs/Org--Name_config.json",
              "systems": "aic/systems/<system>.yaml",
              "kernel tables": "aic/systems/data/<system>/..."}[kind]
    add = (f"set {DATA_ENV} to a folder holding {layout} to add more "
           f"(`aisimulate {'models' if kind == 'models' else 'systems'}` lists what is found)")
    new = [str(d) for d in dirs if str(d) not in said]
    if not dirs:
        return f"searched for {kind} in: no data folder; {add}"
    if not new:
        return add
    return f"{'also ' if len(new) < len(dirs) else ''}searched for {kind} in: {', '.join(new)}; {add}"


_builtin_systems: frozenset[str] | None = None


def builtin_systems() -> frozenset[str]:
    """Names of the GPU systems built into the core."""
    global _builtin_systems
    if _builtin_systems is None:
        cat = _native.call("Catalogue", json.dumps({}), "catalogue")
        _builtin_systems = frozenset(s["name"] for s in cat["systems"])
    return _builtin_systems


def _catalogue() -> dict[str, Any]:
    req = {"model_config_dirs": [str(d) for d in model_config_dirs()],
           "system_dirs": [str(d) for d in system_dirs()]}
    return _native.call("Catalogue", json.dumps(req), "catalogue")


def list_models(*, supported_only: bool = False) -> list[dict[str, Any]]:
    """The models ``engine.model`` can name: the core's built-ins, then every
    ``Org--Name_config.json`` in :func:`model_config_dirs`, sorted by name.

    Each is a dict: ``name``, ``source`` (``"built-in"`` or the file), ``architecture``,
    ``supported`` (whether a replay can use it), ``reason`` (why not), and for supported
    models ``layers``, ``hidden_size``, ``weight_dtype``, ``max_position_embeddings``
    (tokens).

    Raises:
        ConfigError: a data setting names a folder that does not exist.
    """
    models = sorted(_catalogue()["models"], key=lambda m: (m["source"] != "built-in", m["name"]))
    return [m for m in models if m["supported"]] if supported_only else models


def list_systems() -> list[dict[str, Any]]:
    """The GPU systems ``engine.system`` can name: the core's built-ins, then every
    ``<system>.yaml`` in :func:`system_dirs`, sorted by name.

    Each is a dict: ``name``, ``source``, ``supported``, ``reason``, and
    ``mem_capacity_bytes``, ``mem_bw_bytes_per_s``, ``bf16_flops``, ``fp8_flops``
    (FLOP/s, dense tensor-core peaks), ``gpus_per_node``; plus ``kernel_tables``, whether
    measured kernel tables for it were found (``perf: {source: aic}``), and
    ``kernel_table_engines``, the engines (``engine.backend``: vllm, sglang, trtllm) whose
    GEMM tables were found for it, sorted ([] without tables): ``perf: {source: aic}``
    with another engine is refused.

    Raises:
        ConfigError: a data setting names a folder that does not exist.
    """
    systems = sorted(_catalogue()["systems"], key=lambda s: (s["source"] != "built-in", s["name"]))
    dbs = perf_databases()
    for s in systems:
        found = [db / "data" / s["name"] for db in dbs if (db / "data" / s["name"]).is_dir()]
        s["kernel_tables"] = bool(found)
        # the engines of the first database that has the system, the one a replay reads
        gemm = found[0] / "gemm" if found else None
        s["kernel_table_engines"] = sorted(e.name for e in gemm.iterdir() if e.is_dir()) \
            if gemm is not None and gemm.is_dir() else []
    return systems


def explain_not_found(exc: ConfigError) -> ConfigError:
    """``exc`` with the folders searched and the setting that adds more appended, when
    it says a model or system name was not found; else ``exc`` itself."""
    kind = {"engine.model": "models", "engine.system": "systems"}.get(exc.field)
    if kind is None or not ("not found" in exc.reason or "unknown system" in exc.reason):
        return exc
    new = ConfigError(exc.field, f"{exc.reason}; {searched_hint(kind, exc.reason)}", file=exc.file, line=exc.line)
    return new
