"""The config compiler: YAML, JSON or a dict in, a canonical replay :class:`Spec` out.

:func:`load_config` is the only way a spec reaches the core. It

1. parses the source (``yaml.safe_load`` semantics, plus: duplicate keys, non-string
   keys, dates and non-finite numbers are rejected with their dotted path);
2. rejects, before calling Go, the modes aisimulate does not support — online replay,
   attention-FFN disaggregation (AFD), agentic profiles and traces, worker scaling /
   planners, analytical encode-prefill-decode (EPD) — and a ``traffic.source`` without
   a ``type``;
3. makes relative file paths absolute (see "Paths" below) and checks that the files
   exist;
4. asks the core (``pybind.Normalize``) to decode the spec strictly, validate types and
   ranges, and fill every default. Defaults live in ``core/config/defaults.go`` only;
   this module never restates them.

Paths. ``traffic.source.path``, ``engine.model_config_dir`` and ``engine.perf.database``
(the perf tables of source ``aic``, a folder) are resolved against the
folder of the config file (for a dict: the current working directory); so are
``engine.model`` and ``engine.system`` when they look like paths (start with ``.`` or
``/``, or end in ``.json``/``.yaml``/``.yml`` — the rule of Go's ``looksLikePath`` in
``core/config/decode.go``); otherwise they are names (``Qwen/Qwen3-32B``, ``h100_sxm``).

Data folders (:mod:`aisimulate.catalogue`). When ``engine.model`` is a name and
``engine.model_config_dir`` is not given, the folder is the first of
:func:`aisimulate.catalogue.model_config_dirs` (``AISIMULATE_MODEL_CONFIGS``, then
``aic/model_configs`` of each data folder: ``AISIMULATE_DATA``, the checkout's
``../shared/data``, the package's own) that holds ``Org--Name_config.json``, else the
first of them (the core's built-in models need none). An explicit
``model_config_dir: ""`` keeps to built-in models and paths. A system name that is not
built in becomes the path of ``<name>.yaml`` in the first systems folder that has it;
``perf: {source: aic}`` without ``database`` takes the first folder with kernel tables.
"""

from __future__ import annotations

import json
import math
import numbers
import re
import os
from typing import Any, Mapping

import yaml

from . import _native, catalogue
from .catalogue import MODEL_CONFIGS_ENV
from .errors import ConfigError

__all__ = ["Spec", "load_config", "parse_config_text", "set_field", "MODEL_CONFIGS_ENV"]



class Spec:
    """A validated replay spec in canonical form.

    Attributes:
        data: the canonical spec as a dict, exactly as the core's ``Normalize`` returned
            it: every default filled, file paths absolute. Its schema is the Go structs
            of ``core/config/spec.go`` (JSON keys = YAML keys).
        source: absolute path of the config file it came from, or ``None`` (a dict).

    Build one with :func:`load_config`; ``Spec(data)`` does no validation itself (the
    core validates again when the spec is run).
    """

    __slots__ = ("data", "source")

    def __init__(self, data: dict[str, Any], source: str | None = None) -> None:
        self.data = data
        self.source = source

    def to_json(self) -> str:
        """The spec as compact JSON text, the form the core's ``Run`` takes.

        Raises:
            ValueError: ``data`` holds a non-finite float (only after manual edits).
        """
        return json.dumps(self.data, separators=(",", ":"), allow_nan=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Spec):
            return NotImplemented
        return self.data == other.data

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        def get(*keys: str) -> Any:
            node: Any = self.data
            for k in keys:
                node = node.get(k) if isinstance(node, dict) else None
            return node

        agg = get("engine", "workers", "aggregated") or {}
        workers = f"{agg.get('count', '?')}×TP{agg.get('tp', '?')}" if isinstance(agg, dict) else "?"
        return (f"Spec(model={get('engine', 'model')!r}, system={get('engine', 'system')!r}, "
                f"workers={workers}, perf={get('engine', 'perf', 'source')!r}, "
                f"source={get('traffic', 'source', 'type')!r}, load={get('traffic', 'load', 'mode')!r}, "
                f"file={self.source!r})")


def load_config(src: str | os.PathLike[str] | Mapping[str, Any] | Spec, *,
                overrides: Mapping[str, Any] | None = None) -> Spec:
    """Compile a replay config into a canonical :class:`Spec`.

    Args:
        src: a path to a YAML (or ``.json``) file, a dict with the same structure, or a
            :class:`Spec` (returned unchanged when there are no ``overrides``). A dict
            is not modified.
        overrides: dotted field → value, set on the config before it is compiled
            (``{"engine.workers.aggregated.count": 4}``; missing mappings on the way
            are created), as the CLI's ``--set`` does. Relative paths among them
            resolve like the file's own.

    Returns:
        The canonical spec (defaults filled by the core, paths absolute).

    Raises:
        ConfigError: the file is missing or unreadable, is not valid YAML/JSON (the
            message names the file and line), is not a mapping; a mode is not supported;
            a referenced file is missing; or the core rejects a field (unknown key,
            wrong type, out of range, non-finite). ``.field`` is the dotted path.
        TypeError: ``src`` is none of the accepted types.
        ImportError: the native core has not been built (``make build``).
    """
    if isinstance(src, Spec):
        if not overrides:
            return src
        src, source = src.data, src.source
        base = os.path.dirname(source) if source else os.getcwd()
        data = _plain(src, "")
    elif isinstance(src, Mapping):
        data = _plain(src, "")
        base = os.getcwd()
        source = None
    elif isinstance(src, (str, os.PathLike)):
        source = os.path.abspath(os.fspath(src))
        data = _plain(_read(source), "")
        base = os.path.dirname(source)
    else:
        raise TypeError(f"load_config takes a path, a dict or a Spec, not {type(src).__name__}")

    if data is None:
        raise ConfigError("", "the config is empty", file=source)
    if not isinstance(data, dict):
        raise ConfigError("", f"the config must be a mapping at the top level, got {_describe(data)}",
                          file=source)
    for dotted, value in (overrides or {}).items():
        set_field(data, dotted, _plain(value, dotted))
    _reject_unsupported(data)
    _resolve_paths(data, base)
    _check_files(data)
    canonical = _native.call("Normalize", json.dumps(data, allow_nan=False), "spec")
    return Spec(canonical, source)


# --- reading ---------------------------------------------------------------------------

class _StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that rejects a key given twice in one mapping."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
        except TypeError:
            continue  # unhashable key: construct_mapping reports it
        if duplicate:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)

# PyYAML follows YAML 1.1, whose float pattern needs a dot: ``1e-3`` and ``2e5`` would be
# read as strings. YAML 1.2 (and every other reader) takes them as numbers; so do we.
_StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def set_field(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set the field at the dotted path ``dotted`` of ``data`` to ``value``, in place,
    creating the mappings on the way.

    Raises:
        ConfigError: ``dotted`` is empty or has an empty part, or a part on the way
            holds a value that is not a mapping (``.field`` names that part's path).
    """
    parts = dotted.split(".")
    if not dotted or any(not p for p in parts):
        raise ConfigError(dotted, "is not a dotted field path (e.g. engine.workers.aggregated.count)")
    node = data
    for i, p in enumerate(parts[:-1]):
        nxt = node.setdefault(p, {})
        if nxt is None:  # `key: null` leaves an optional block out: set inside a new one
            nxt = node[p] = {}
        if not isinstance(nxt, dict):
            raise ConfigError(".".join(parts[:i + 1]),
                              f"is {_describe(nxt)}, not a mapping: cannot set {dotted}")
        node = nxt
    node[parts[-1]] = value


def parse_config_text(text: str, name: str = "<stdin>") -> Any:
    """Parse config text (YAML, or JSON, which the YAML reader also takes) the way
    :func:`load_config` parses a file; ``name`` is the file named in errors.

    Raises:
        ConfigError: invalid YAML (with ``name`` and the line).
    """
    return _parse(text, name, json_text=False)


def _read(path: str) -> Any:
    """Parse the YAML or JSON file at ``path`` (absolute)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise ConfigError("", f"config file not found: {path}") from None
    except IsADirectoryError:
        raise ConfigError("", f"config path is a folder, not a file: {path}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError("", f"config file is not UTF-8 text ({exc.reason})", file=path) from None
    except OSError as exc:
        raise ConfigError("", f"cannot read config file: {exc.strerror or exc}", file=path) from None
    return _parse(text, path, json_text=path.endswith(".json"))


def _parse(text: str, path: str, *, json_text: bool) -> Any:
    """Parse ``text`` as JSON (``json_text``) or YAML; ``path`` names it in errors."""
    if json_text:
        def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for k, v in pairs:
                if k in out:
                    raise ValueError(f"duplicate key {k!r}")
                out[k] = v
            return out
        try:
            return json.loads(text, object_pairs_hook=no_duplicates)
        except json.JSONDecodeError as exc:
            raise ConfigError("", f"invalid JSON: {exc.msg}", file=path, line=exc.lineno) from None
        except ValueError as exc:
            raise ConfigError("", f"invalid JSON: {exc}", file=path) from None
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "syntax error"
        if exc.context and exc.problem:
            what = f"{exc.problem} ({exc.context})"
        raise ConfigError("", f"invalid YAML: {what}", file=path,
                          line=mark.line + 1 if mark is not None else None) from None
    except yaml.YAMLError as exc:
        raise ConfigError("", f"invalid YAML: {exc}", file=path) from None


def _plain(value: Any, path: str) -> Any:
    """Deep-copy ``value`` into JSON types, rejecting what JSON cannot carry.

    Raises:
        ConfigError: a non-string key, a NaN or infinite float (YAML ``.nan``, ``.inf``),
            or a value of another type (a date, a set, bytes), naming its dotted path.
    """
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ConfigError(_join(path, str(k)),
                                  f"keys must be strings, got {_describe(k)} (quote it in YAML)")
            out[k] = _plain(v, _join(path, k))
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, numbers.Integral):  # numpy integers and the like
        return int(value)
    if isinstance(value, (float, numbers.Real)):
        value = float(value)
        if not math.isfinite(value):
            raise ConfigError(path, f"must be a finite number, got {value}")
        return value
    raise ConfigError(path, f"{_describe(value)} is not a config value: use a string, number, "
                            "boolean, list or mapping")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


# --- unsupported modes -----------------------------------------------------------------

# Key names that select a mode aisimulate does not simulate: the first three wherever they
# appear under `engine`, the agentic ones directly under `traffic` or `traffic.source`.
_AFD_KEYS = frozenset({"afd", "attention_ffn", "attention_ffn_disaggregation", "attn_ffn"})
_SCALING_KEYS = frozenset({"planner", "scaling", "autoscale", "autoscaling", "autoscaler"})
_EPD_KEYS = frozenset({"epd", "encode", "encoder", "encode_workers", "encode_prefill_decode"})
_AGENTIC_KEYS = frozenset({"agentic", "profile", "agentic_profile"})


def _engine_keys(node: Any, path: str) -> list[tuple[str, str]]:
    """(dotted path, key) of every mapping key under ``node``, depth first in file order."""
    found: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for k, v in node.items():
            p = _join(path, k)
            found.append((p, k))
            found.extend(_engine_keys(v, p))
    return found


def _reject_unsupported(data: dict[str, Any]) -> None:
    """Raise ConfigError for a mode the core does not run (DESIGN.md §9)."""
    execution = data.get("execution")
    if isinstance(execution, dict):
        mode = execution.get("mode")
        if isinstance(mode, str) and mode.strip().lower() == "online":
            raise ConfigError("execution.mode", "online replay is not supported: aisimulate "
                              "runs offline replays on a virtual clock (execution.mode: offline)")

    engine_keys = _engine_keys(data.get("engine"), "engine")
    for path, k in engine_keys:
        if k.lower() in _AFD_KEYS:
            raise ConfigError(path, "attention-FFN disaggregation (AFD) is not supported: "
                              "aisimulate simulates workers that run whole model passes")

    agentic = "agentic profiles and traces are not supported"

    def agentic_keys(block: dict[str, Any], path: str) -> None:
        for k in block:
            if k.lower() in _AGENTIC_KEYS:
                raise ConfigError(f"{path}.{k}", agentic)

    def agentic_value(block: dict[str, Any], path: str, key: str) -> None:
        v = block.get(key)
        if isinstance(v, str) and v.strip().lower().startswith("agentic"):
            raise ConfigError(f"{path}.{key}", f"{v!r}: {agentic}")

    traffic = data.get("traffic")
    if isinstance(traffic, dict):
        agentic_keys(traffic, "traffic")
        source = traffic.get("source")
        if isinstance(source, dict):
            agentic_value(source, "traffic.source", "type")
            agentic_keys(source, "traffic.source")
        load = traffic.get("load")
        if isinstance(load, dict):
            agentic_value(load, "traffic.load", "mode")

    for path, k in engine_keys:
        if k.lower() in _SCALING_KEYS:
            raise ConfigError(path, "worker scaling (planners, autoscaling) is not supported: "
                              "the worker pools are fixed for the whole replay")
    for path, k in engine_keys:
        if k.lower() in _EPD_KEYS:
            raise ConfigError(path, "analytical encode-prefill-decode (EPD) is not supported")

    if traffic is None or isinstance(traffic, dict):
        source = (traffic or {}).get("source")
        if source is None or (isinstance(source, dict) and source.get("type") in (None, "")):
            raise ConfigError("traffic.source.type", "is required (mooncake, azure or "
                              "synthetic): a workload without a source type is not supported")


# --- paths -----------------------------------------------------------------------------

def looks_like_path(s: str) -> bool:
    """Whether a model/system value is a file path rather than a name.

    The rule of Go's ``looksLikePath`` (``core/config/decode.go``): it starts with ``.``
    or ``/``, or ends in ``.json``, ``.yaml`` or ``.yml``.
    """
    return s.startswith((".", "/")) or s.endswith((".json", ".yaml", ".yml"))


def _abs(p: str, base: str) -> str:
    return os.path.normpath(os.path.join(base, p))


def _resolve_paths(data: dict[str, Any], base: str) -> None:
    """Make the spec's relative paths absolute against ``base``, in place, and fill
    ``engine.model_config_dir`` from the environment or the shared data folder."""
    traffic = data.get("traffic")
    source = traffic.get("source") if isinstance(traffic, dict) else None
    if isinstance(source, dict) and isinstance(source.get("path"), str) and source["path"]:
        source["path"] = _abs(source["path"], base)

    engine = data.get("engine")
    if not isinstance(engine, dict):
        return
    for key in ("model", "system"):
        v = engine.get(key)
        if isinstance(v, str) and looks_like_path(v):
            engine[key] = _abs(v, base)
    perf = engine.get("perf")
    if isinstance(perf, dict) and isinstance(perf.get("database"), str) and perf["database"]:
        perf["database"] = _abs(perf["database"], base)
    mcd = engine.get("model_config_dir")
    if isinstance(mcd, str) and mcd:
        engine["model_config_dir"] = _abs(mcd, base)
    elif "model_config_dir" not in engine:
        model = engine.get("model")
        if isinstance(model, str) and model and not looks_like_path(model):
            dirs = catalogue.model_config_dirs()
            file = model.replace("/", "--") + "_config.json"  # Go's model.ConfigFileName
            having = [d for d in dirs if (d / file).is_file()]
            if having or dirs:
                engine["model_config_dir"] = str((having or dirs)[0])
    system = engine.get("system")
    if isinstance(system, str) and system and not looks_like_path(system) \
            and system not in catalogue.builtin_systems():
        for d in catalogue.system_dirs():
            if (d / f"{system}.yaml").is_file():
                engine["system"] = str(d / f"{system}.yaml")
                break
    if isinstance(perf, dict) and perf.get("source") == "aic" and "database" not in perf:
        dbs = catalogue.perf_databases()
        if not dbs:
            raise ConfigError("engine.perf.database", "is required for source aic (the folder "
                              "of the AIConfigurator kernel tables) and none was found: "
                              + catalogue.searched_hint("kernel tables"))
        perf["database"] = str(dbs[0])


def _check_files(data: dict[str, Any]) -> None:
    """Raise ConfigError (with the field path) for a referenced file that is missing."""
    traffic = data.get("traffic")
    source = traffic.get("source") if isinstance(traffic, dict) else None
    if isinstance(source, dict):
        p = source.get("path")
        if isinstance(p, str) and p:
            _need_file("traffic.source.path", p)
    engine = data.get("engine")
    if not isinstance(engine, dict):
        return
    mcd = engine.get("model_config_dir")
    if isinstance(mcd, str) and mcd and not os.path.isdir(mcd):
        raise ConfigError("engine.model_config_dir",
                          f"{'not a folder' if os.path.exists(mcd) else 'folder not found'}: {mcd}")
    perf = engine.get("perf")
    db = perf.get("database") if isinstance(perf, dict) else None
    if isinstance(db, str) and db and not os.path.isdir(db):
        raise ConfigError("engine.perf.database",
                          f"{'not a folder' if os.path.exists(db) else 'folder not found'}: {db}")
    for key in ("model", "system"):
        v = engine.get(key)
        if isinstance(v, str) and looks_like_path(v):
            _need_file(f"engine.{key}", v)


def _need_file(field: str, path: str) -> None:
    if not os.path.exists(path):
        raise ConfigError(field, f"file not found: {path}")
    if not os.path.isfile(path):
        raise ConfigError(field, f"not a file: {path}")
