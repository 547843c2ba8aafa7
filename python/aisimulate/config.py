"""The config compiler: YAML, JSON or a dict in, a canonical replay :class:`Spec` out.

:func:`load_config` is the only way a spec reaches the core. It

1. parses the source (``yaml.safe_load`` semantics, plus: duplicate keys, non-string
   keys, dates and non-finite numbers are rejected with their dotted path);
2. rejects, before calling Go, the modes aisimulate does not support — online replay,
   attention-FFN disaggregation (AFD), agentic profiles and traces, worker scaling /
   planners, analytical encode-prefill-decode (EPD) — and a ``traffic.source`` without
   a ``type``;
3. asks the core (``pybind.Normalize``) to decode the spec strictly, validate types and
   ranges, fill every default, and resolve its relative file paths (see "Paths" below).
   Defaults live in ``core/config/defaults.go`` only; this module never restates them;
4. fills the data folders a name refers to (below) and checks that the files the
   canonical spec names exist.

Paths. The core applies its one path rule (``Spec.ResolvePaths`` in
``core/config/decode.go``) against the folder of the config file (for a dict, and for
a config that is not a regular file — a pipe such as ``<(…)``, ``/dev/stdin``, whose
folder ``/dev/fd`` holds nothing of the user's: the current working directory): ``traffic.source.path``, ``engine.model_config_dir`` and
``engine.perf.database`` (the perf tables of source ``aic``, a folder) are resolved, and
so are ``engine.model`` and ``engine.system`` when they look like paths (start with
``.`` or ``/``, or end in ``.json``/``.yaml``/``.yml``); otherwise they are names
(``Qwen/Qwen3-32B``, ``h100_sxm``). In the canonical spec a path is absolute. A path
given outside the file (``overrides``, the CLI's ``--set``; a sweep's points, set on the
compiled base) resolves against the working directory, as a command's arguments do
(:func:`set_overrides`).

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

import functools
import json
import math
import numbers
import os
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any


from . import catalogue
from .binding import lazy as _lazy, native as _native
from .catalogue import MODEL_CONFIGS_ENV
from .config_bounds import MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH, MAX_CONFIG_VALUES, MAX_INT_DIGITS
from .errors import ConfigError

__all__ = ["Spec", "load_config", "parse_config_text", "set_field", "set_overrides", "MODEL_CONFIGS_ENV"]



class Spec:
    """A validated replay spec in canonical form.

    Attributes:
        data: the canonical spec as a dict, exactly as the core's ``Normalize`` returned
            it: every default filled, file paths absolute. Its schema is the Go structs
            of ``core/config/spec.go`` (JSON keys = YAML keys).
        source: absolute path of the config file it came from, or ``None`` (a dict).
        given: the config as given, with its overrides, before compilation (``None``
            for a ``Spec(data)``): what :func:`aisimulate.sweep` sets a point's fields
            on, as ``--set`` does, so that a point's defaults follow from it.

    Build one with :func:`load_config`; ``Spec(data)`` does no validation itself (the
    core validates again when the spec is run).
    """

    __slots__ = ("data", "source", "given")

    def __init__(self, data: dict[str, Any], source: str | None = None,
                 given: dict[str, Any] | None = None) -> None:
        self.data = data
        self.source = source
        self.given = given

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
            are created), as the CLI's ``--set`` does. A relative file path among
            them resolves against the working directory, not the file's folder
            (:func:`set_overrides`).

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
    if isinstance(src, Spec) and not overrides:
        return src
    raw = read_config(src)
    data, source = raw.data, raw.source
    base = config_folder(source)
    set_overrides(data, overrides or {})
    _reject_unsupported(data)
    _default_perf_database(data)
    canonical = _native.call("Normalize", json.dumps(data, allow_nan=False), "spec", base)
    engine = data.get("engine")
    _data_folders(canonical, model_config_dir_given=isinstance(engine, dict) and "model_config_dir" in engine)
    _check_files(canonical)
    return Spec(canonical, source, given=data)


# --- reading ---------------------------------------------------------------------------

_INT_BOUND = 10 ** MAX_INT_DIGITS




def read_config(src: str | os.PathLike[str] | Mapping[str, Any] | Spec) -> Spec:
    """Read a config as :func:`load_config` reads it, without compiling it: a
    :class:`Spec` of the plain data (a copy; relative paths not yet resolved, nothing
    checked beyond the syntax and the bounds) and the absolute path of its file, for a
    caller that edits the config before :func:`load_config` compiles
    ``Spec(data, source)`` with ``overrides`` (``compare`` swaps in its own traffic).

    Raises:
        ConfigError: the file is missing or unreadable, is not valid YAML/JSON, or the
            config is empty or not a mapping.
        TypeError: ``src`` is none of the accepted types.
    """
    if isinstance(src, Spec):
        data, source = _plain(src.data, ""), src.source
    elif isinstance(src, Mapping):
        data, source = _plain(src, ""), None
    elif isinstance(src, (str, os.PathLike)):
        source = os.path.abspath(os.fspath(src))
        data = _plain(_read(source), "")
    else:
        raise TypeError(f"load_config takes a path, a dict or a Spec, not {type(src).__name__}")
    if data is None:
        raise ConfigError("", "the config is empty", file=source)
    if not isinstance(data, dict):
        raise ConfigError("", f"the config must be a mapping at the top level, got {_describe(data)}",
                          file=source)
    return Spec(data, source)


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


#: The spec's file-path fields, as ``Spec.ResolvePaths`` (core/config/decode.go) resolves
#: them; engine.model and engine.system only when they look like a path
#: (``LooksLikePath`` there: they start with "." or "/" or end in .json, .yaml, .yml).
PATH_FIELDS = ("traffic.source.path", "engine.model_config_dir", "engine.perf.database",
               "engine.model", "engine.system")


def _looks_like_path(text: str) -> bool:
    return text.startswith((".", "/")) or text.endswith((".json", ".yaml", ".yml"))


def set_overrides(data: dict[str, Any], overrides: Mapping[str, Any]) -> None:
    """Set each dotted field of ``overrides`` on the raw config ``data`` (in place, as
    :func:`set_field`), a relative file path among the values (a field of
    :data:`PATH_FIELDS`, given alone or inside a mapping, ``--set traffic.source={type:
    mooncake, path: t.jsonl}``) made absolute against the working directory: a path
    given beside the config, on a command line or in code, is read where the user is,
    whereas the paths written in the config file resolve against its folder.

    Raises:
        ConfigError: as :func:`set_field`, or a value JSON cannot carry.
    """
    for dotted, value in overrides.items():
        value = _plain(value, dotted)
        for field in PATH_FIELDS:
            if field == dotted:
                value = _absolute(field, value)
            elif field.startswith(dotted + ".") and isinstance(value, dict):
                node, keys = value, field[len(dotted) + 1:].split(".")
                for k in keys[:-1]:
                    node = node.get(k)
                    if not isinstance(node, dict):
                        break
                else:
                    if keys[-1] in node:
                        node[keys[-1]] = _absolute(field, node[keys[-1]])
        set_field(data, dotted, value)


def _absolute(field: str, value: Any) -> Any:
    """``value`` of the path field ``field`` made absolute against the working directory
    when it is a relative path (a model or system name, a non-string, "" stay)."""
    if not isinstance(value, str) or not value or os.path.isabs(value):
        return value
    if field in ("engine.model", "engine.system") and not _looks_like_path(value):
        return value
    return os.path.abspath(value)


def parse_config_text(text: str, name: str = "<stdin>") -> Any:
    """Parse config text (YAML, or JSON, which the YAML reader also takes) the way
    :func:`load_config` parses a file; ``name`` is the file named in errors.

    Raises:
        ConfigError: invalid YAML (with ``name`` and the line).
    """
    return _parse(text, name, json_text=False)


def config_folder(source: str | None) -> str:
    """The folder a config's relative paths resolve against: the config file's, or the
    working directory for a config not read from a file (a dict, stdin) or from one that
    is not a regular file (a pipe: ``<(…)``, ``/dev/stdin``, ``/dev/fd/N``; a regular
    file redirected to stdin is reached through ``/dev`` or ``/proc`` too, never its own
    folder)."""
    import stat

    if not source:
        return os.getcwd()
    try:
        regular = stat.S_ISREG(os.stat(source).st_mode)
    except OSError:
        regular = False
    folder = os.path.dirname(source)
    special = any(folder == d or folder.startswith(d + os.sep) for d in ("/dev", "/proc"))
    return folder if regular and not special else os.getcwd()


def _read(path: str) -> Any:
    """Parse the YAML or JSON file at ``path`` (absolute), within the bounds of
    :data:`MAX_CONFIG_BYTES`, :data:`MAX_CONFIG_DEPTH` and :data:`MAX_CONFIG_VALUES`."""
    try:
        with open(path, "rb") as f:
            text = read_config_bytes(f, path)
    except FileNotFoundError:
        raise ConfigError("", f"config file not found: {path}") from None
    except IsADirectoryError:
        raise ConfigError("", f"config path is a folder, not a file: {path}") from None
    except OSError as exc:
        raise ConfigError("", f"cannot read config file: {exc.strerror or exc}", file=path) from None
    return _parse(text, path, json_text=path.endswith(".json"))


def read_config_bytes(stream: Any, name: str, what: str = "config") -> str:
    """Read config text from the binary ``stream`` (a file, stdin's buffer): at most
    :data:`MAX_CONFIG_BYTES`, UTF-8. ``name`` names it in errors, ``what`` says what it
    should be (``"config"``, ``"scenario list"``).

    Raises:
        ConfigError: the stream holds more (a device such as ``/dev/zero``, a data file),
            or is not UTF-8.
        OSError: from the read.
    """
    raw = stream.read(MAX_CONFIG_BYTES + 1)  # a device never ends: never read it whole
    if len(raw) > MAX_CONFIG_BYTES:
        hint = ": not a replay config (a trace goes in traffic.source.path)" if what == "config" else ""
        raise ConfigError("", f"the {what} is larger than {MAX_CONFIG_BYTES // (1 << 20)} MiB{hint}",
                          file=name)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError("", f"{what} file is not UTF-8 text ({exc.reason})", file=name) from None


def _duplicate_line(text: str, key: str) -> int | None:
    """The line of the second ``key`` in a JSON text whose objects repeat it: Python's
    JSON parser gives no positions, so the text is read again by the strict YAML loader
    (JSON is YAML's flow style), which refuses the duplicate at its mark. None when that
    reading finds no duplicate of ``key`` (it stops at the first)."""
    yaml = _lazy.module("yaml")
    strict = _lazy.module("aisimulate._yaml")
    try:
        strict.load_strict(text)
    except yaml.MarkedYAMLError as exc:
        if exc.problem == f"duplicate key {key!r}" and exc.problem_mark is not None:
            return exc.problem_mark.line + 1
    except Exception:  # noqa: BLE001 - a text YAML reads otherwise: no line to give
        pass
    return None


def _parse(text: str, path: str, *, json_text: bool) -> Any:
    """Parse ``text`` as JSON (``json_text``) or YAML; ``path`` names it in errors."""
    if json_text:
        from .binding.strict_json import DuplicateKey, unique_keys

        try:
            return json.loads(text, object_pairs_hook=unique_keys)
        except json.JSONDecodeError as exc:
            raise ConfigError("", f"invalid JSON: {exc.msg}", file=path, line=exc.lineno) from None
        except DuplicateKey as exc:
            raise ConfigError("", f"invalid JSON: duplicate key {_clip(repr(exc.key))}", file=path,
                              line=_duplicate_line(text, exc.key)) from None
        except ValueError as exc:
            raise ConfigError("", f"invalid JSON: {_clip(str(exc))}", file=path) from None
        except RecursionError:
            raise ConfigError("", f"invalid JSON: nested more than {MAX_CONFIG_DEPTH} levels deep",
                              file=path) from None
    # on first use (`import aisimulate` stays light), whole even if Ctrl-C lands in it
    yaml = _lazy.module("yaml")
    strict = _lazy.module("aisimulate._yaml")
    try:
        return strict.load_strict(text)
    except strict._TooBig as exc:
        raise ConfigError("", f"invalid YAML: {exc.what}", file=path,
                          line=exc.mark.line + 1 if exc.mark is not None else None) from None
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
            or a value of another type (a date, a set, bytes), naming its dotted path; a
            value nested deeper than :data:`MAX_CONFIG_DEPTH` (or containing itself), or
            more than :data:`MAX_CONFIG_VALUES` values in all (a dict that shares one
            list many times over expands like a YAML alias bomb).
    """
    return _Copier().copy(value, path, 0)


class _Copier:
    """One bounded deep copy (see :func:`_plain`); counts the values copied."""

    def __init__(self) -> None:
        self.values = 0

    def copy(self, value: Any, path: str, depth: int) -> Any:
        self.values += 1
        if self.values > MAX_CONFIG_VALUES:
            raise ConfigError(_clip(path), f"the config holds more than {MAX_CONFIG_VALUES:,} values")
        if depth > MAX_CONFIG_DEPTH:
            raise ConfigError(_clip(path), f"nested more than {MAX_CONFIG_DEPTH} levels deep "
                                           "(or the value contains itself)")
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            for k, v in value.items():
                if not isinstance(k, str):
                    raise ConfigError(_join(path, _clip(str(k))),
                                      f"keys must be strings, got {_describe(k)} (quote it in YAML)")
                out[k] = self.copy(v, _join(path, k), depth + 1)
            return out
        if isinstance(value, (list, tuple)):
            return [self.copy(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            value = int(value)  # numpy integers and the like
            if abs(value) >= _INT_BOUND:  # json.dumps fails past 4,300 digits
                raise ConfigError(path, f"an integer of more than {MAX_INT_DIGITS} digits is too large")
            return value
        if value is None or isinstance(value, (str, bool)):
            return value
        if isinstance(value, (float, numbers.Real)):
            value = float(value)
            if not math.isfinite(value):
                raise ConfigError(path, f"must be a finite number, got {value}")
            return value
        raise ConfigError(path, f"{_describe(value)} is not a config value: use a string, number, "
                                "boolean, list or mapping")


def _clip(text: str, limit: int = 120) -> str:
    """``text`` cut to ``limit`` characters for a message, so that a huge value (a whole
    data file read as a config) cannot flood it."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _INT_BOUND:
        return f"an integer of more than {MAX_INT_DIGITS} digits"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {_clip(repr(value))}"
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
    """Raise ConfigError for a mode the core does not run (docs/design.md, "What the compiler refuses")."""
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

    if traffic is None or isinstance(traffic, dict) and traffic.get("benchmark") is None:
        source = (traffic or {}).get("source")
        if source is None and _unknown_key(data, traffic):
            return  # `trafic:` or `sourc:`: the core names the misspelt key, not the missing one
        if source is None or (isinstance(source, dict) and source.get("type") in (None, "")):
            types = ", ".join(_native.enums()["traffic.source.type"])
            raise ConfigError("traffic.source.type", f"is required (one of {types}): a workload "
                              "without a source type is not supported")


@functools.cache
def _schema_keys() -> tuple[frozenset[str], frozenset[str]]:
    """The fields of a spec's top level and of its ``traffic`` (the core's JSON Schema)."""
    schema = json.loads(_native.call_text("Schema", "", "schema"))
    return frozenset(schema["properties"]), frozenset(schema["properties"]["traffic"]["properties"])


def _unknown_key(data: dict[str, Any], traffic: Any) -> bool:
    """Whether the top level or ``traffic`` holds a key that is no field there (the
    core's JSON Schema's properties), which the core reports as an unknown field."""
    top, in_traffic = _schema_keys()
    return any(k not in top for k in data) or (isinstance(traffic, dict) and any(k not in in_traffic for k in traffic))


# --- data folders and files -------------------------------------------------------------

def _default_perf_database(data: dict[str, Any]) -> None:
    """``perf: {source: aic}`` without ``database``: the first folder with kernel tables
    (:func:`aisimulate.catalogue.perf_databases`), set in place before the core sees it."""
    engine = data.get("engine")
    perf = engine.get("perf") if isinstance(engine, dict) else None
    if isinstance(perf, dict) and perf.get("source") == "aic" and "database" not in perf:
        dbs = catalogue.perf_databases()
        if not dbs:
            raise ConfigError("engine.perf.database", "is required for source aic (the folder "
                              "of the AIConfigurator kernel tables) and none was found: "
                              + catalogue.searched_hint("kernel tables"))
        perf["database"] = str(dbs[0])


def _data_folders(spec: dict[str, Any], *, model_config_dir_given: bool) -> None:
    """Fill, in the canonical ``spec`` (in place), the folders a name refers to: the
    model configs of a model name (unless the config gave ``model_config_dir``) and the
    system YAML of a system name that is not built in. In the canonical spec a path is
    absolute and a name is not."""
    engine = spec["engine"]
    model = engine["model"]
    if not model_config_dir_given and not os.path.isabs(model):
        dirs = catalogue.model_config_dirs()
        file = model.replace("/", "--") + "_config.json"  # Go's model.ConfigFileName
        # os.path.isfile, not Path.is_file: a name longer than a file name may be
        # (255 bytes) is "not there", not an OSError
        having = [d for d in dirs if os.path.isfile(d / file)]
        if having or dirs:
            ordered: dict[str, Any] = {}
            for key, value in engine.items():  # in the canonical key order: after model
                ordered[key] = value
                if key == "model":
                    ordered["model_config_dir"] = str((having or dirs)[0])
            spec["engine"] = engine = ordered
    system = engine["system"]
    if not os.path.isabs(system) and system not in catalogue.builtin_systems():
        for d in catalogue.system_dirs():
            if os.path.isfile(d / f"{system}.yaml"):
                engine["system"] = str(d / f"{system}.yaml")
                break


def _check_files(spec: dict[str, Any]) -> None:
    """Raise ConfigError (with the field path) for a file the canonical ``spec`` names
    that is missing (its paths are absolute; a built-in model or system is a name)."""
    source = spec["traffic"].get("source") or {}  # a traffic.benchmark has no file
    if source.get("path"):
        _need_file("traffic.source.path", source["path"])
    engine = spec["engine"]
    for field, folder in (("engine.model_config_dir", engine.get("model_config_dir")),
                          ("engine.perf.database", engine["perf"].get("database"))):
        if folder and not os.path.isdir(folder):
            raise ConfigError(field, f"{'not a folder' if os.path.exists(folder) else 'folder not found'}: {folder}")
    for key in ("model", "system"):
        if os.path.isabs(engine[key]):
            _need_file(f"engine.{key}", engine[key], checkpoint=key == "model")


def _need_file(field: str, path: str, *, checkpoint: bool = False) -> None:
    """Raise ConfigError unless ``path`` is a file (or, with ``checkpoint``, a Hugging
    Face checkpoint folder holding config.json, as ``vllm serve FOLDER`` takes it)."""
    if not os.path.exists(path):
        raise ConfigError(field, f"file not found: {path}")
    if checkpoint and os.path.isdir(path):
        if not os.path.isfile(os.path.join(path, "config.json")):
            raise ConfigError(field, f"a folder without config.json: {path} (give a Hugging Face checkpoint "
                                     "folder, which holds one, or the config file itself)")
        return
    if not os.path.isfile(path):
        raise ConfigError(field, f"not a file: {path}")
