"""Run sweep points as tasks on a Ray cluster (``sweep(..., backend="ray")``).

Each point is one Ray task (one CPU). The driver connects with ``ray.init(address=…)``
unless Ray is already initialized (then that connection is used as is); with no
address it starts or joins a local Ray, as ``ray.init()`` does. Results stream back
as tasks finish (``ray.wait``), so the progress bar moves and a failure is seen at once.

Files. With ``files="ship"`` (default) every file a point reads — the trace
(``traffic.source.path``), a model or system given as a file, the named model's config
(and quantization config) in ``engine.model_config_dir`` — is read once here, put in
Ray's object store, and written by each worker into a content-addressed cache folder
under the worker's temporary directory, the spec pointing there; the driver's paths need
not exist on the cluster. The aic perf database (``engine.perf.database``, a folder of
tables) is not shipped: it must be at the same path on every node, or mapped with
``path_map``. With ``files="shared"`` nothing is shipped: each path is rewritten by
``path_map`` (``{driver prefix: cluster prefix}``, longest prefix first) and read there.

Failures. A task whose worker process dies (killed, out of memory, node lost) is
retried by Ray up to ``max_retries`` times (Ray's ``max_retries`` for system failures);
after that the point's row is ``status="error"`` with the Ray error as its reason.
Every submitted point ends as a row: none is dropped, none waited for forever while
the cluster lives.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from typing import Any, Callable, Mapping

from ..binding import lazy as _lazy
from ..io.files import model_config_files
from ..errors import DataError
from .point import PointResult, failed, run_point

__all__ = ["run_ray", "FILES_MODES"]

#: How point files reach the workers.
FILES_MODES = ("ship", "shared")

#: Seconds ray.wait blocks before the driver looks at Ctrl-C and progress again.
_WAIT_S = 0.2


def _get(data: Mapping[str, Any], dotted: str) -> Any:
    node: Any = data
    for k in dotted.split("."):
        node = node.get(k) if isinstance(node, dict) else None
    return node


def _set(data: dict, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    node = data
    for k in parts[:-1]:
        node = node[k]
    node[parts[-1]] = value


def _file_fields(spec: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(dotted field, path) of every single file the point reads (in the canonical
    spec a path is absolute and a name, a built-in model or system, is not)."""
    out = []
    for field in ("traffic.source.path", "engine.model", "engine.system"):
        v = _get(spec, field)
        if isinstance(v, str) and v and (field == "traffic.source.path" or os.path.isabs(v)):
            out.append((field, v))
    return out


def _model_files(spec: Mapping[str, Any]) -> tuple[str, list[str]] | None:
    """The named model's files in ``engine.model_config_dir`` (:func:`model_config_files`)
    as (folder, names)."""
    folder, model = _get(spec, "engine.model_config_dir"), _get(spec, "engine.model")
    if not (isinstance(folder, str) and folder and isinstance(model, str)) or os.path.isabs(model) \
            or not os.path.isdir(folder):
        return None
    return folder, [os.path.basename(p) for p in model_config_files(spec)]


def _remap(path: str, path_map: Mapping[str, str]) -> str:
    for src in sorted(path_map, key=len, reverse=True):
        if path == src or path.startswith(src.rstrip("/") + "/"):
            return path_map[src] + path[len(src):]
    return path


def _shared(spec: dict, path_map: Mapping[str, str]) -> dict:
    for field, path in _file_fields(spec):
        _set(spec, field, _remap(path, path_map))
    for field in ("engine.model_config_dir", "engine.perf.database"):
        v = _get(spec, field)
        if isinstance(v, str) and v:
            _set(spec, field, _remap(v, path_map))
    return spec


class Shipper:
    """Puts each distinct file (and model-config set) in the object store once."""

    def __init__(self, ray) -> None:
        self.ray = ray
        self.refs: dict[Any, Any] = {}

    def _put(self, key, make):
        if key not in self.refs:
            self.refs[key] = self.ray.put(make())
        return self.refs[key]

    def ship(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        """``{field: ("file", path, ref) | ("model_dir", folder, ref)}`` for the point."""
        out: dict[str, Any] = {}
        for field, path in _file_fields(spec):
            out[field] = ("file", path, self._put(("file", path), lambda p=path: _read(p)))
        found = _model_files(spec)
        if found:
            folder, names = found
            out["engine.model_config_dir"] = ("model_dir", folder, self._put(
                ("dir", folder, tuple(names)),
                lambda: {n: _read(os.path.join(folder, n)) for n in names}))
        return out


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _cache_write(folder: str, name: str, data: bytes) -> str:
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".part-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)  # atomic: a concurrent task sees the whole file or none
    return path


def localize(spec: dict, shipped: Mapping[str, Any]) -> dict[str, str]:
    """Worker side: write shipped files into the cache and point ``spec`` at them.
    Returns ``{local path: driver path}`` for naming files in error messages."""
    ray = _lazy.module("ray")

    back: dict[str, str] = {}
    root = os.path.join(tempfile.gettempdir(), "aisimulate-ray-files")
    for field, (kind, original, ref) in shipped.items():
        payload = ray.get(ref)
        if kind == "file":
            digest = hashlib.sha256(payload).hexdigest()[:20]
            local = _cache_write(os.path.join(root, digest), os.path.basename(original), payload)
        else:
            h = hashlib.sha256()
            for name in sorted(payload):
                h.update(name.encode() + b"\0" + payload[name])
            local = os.path.join(root, h.hexdigest()[:20])
            os.makedirs(local, exist_ok=True)  # no file of this name: a built-in model
            for name, data in payload.items():
                _cache_write(local, name, data)
        _set(spec, field, local)
        back[local] = original
    return back


def _ray_point(index: int, spec: dict, shipped: Mapping[str, Any], row, keep_report: bool) -> PointResult:
    """The Ray task: one point, its files localized first."""
    try:
        back = localize(spec, shipped)
    except Exception as exc:  # a file that cannot be written on the worker
        return failed(index, exc)
    r = run_point(index, spec, row, keep_report)
    if r.status != "ok" and back and r.reason:
        for local, original in back.items():
            r.reason = r.reason.replace(local, original)
        if isinstance(r.error, DataError) and r.error.file in back:
            e = r.error
            r.error = DataError(e.reason.replace(e.file, back[e.file]), file=back[e.file],
                                line=e.line, field=e.field)
    return r


def run_ray(tasks: list[tuple[int, Mapping[str, Any]]], row, keep_report: bool,
            on_result: Callable[[PointResult], None], *, address: str | None, files: str,
            path_map: Mapping[str, str] | None, max_retries: int) -> None:
    """Submit every task to Ray and call ``on_result`` per point as results arrive.

    Raises:
        ImportError: Ray is not installed.
        ValueError: ``files`` is not one of :data:`FILES_MODES`.
    """
    if files not in FILES_MODES:
        raise ValueError(f"ray_files={files!r}: use one of {', '.join(FILES_MODES)}")
    try:
        ray = _lazy.module("ray")
    except ImportError as exc:
        raise ImportError("sweep(backend='ray') needs Ray: pip install 'aisimulate[ray]'") from exc
    if not ray.is_initialized():
        ray.init(address=address, logging_level="WARNING", log_to_driver=False)
    remote = ray.remote(num_cpus=1, max_retries=max_retries)(_ray_point)
    shipper = Shipper(ray)
    pending: dict[Any, int] = {}
    try:
        for index, spec in tasks:
            spec = dict(spec) if files == "ship" else _shared(_deep(spec), path_map or {})
            shipped = shipper.ship(spec) if files == "ship" else {}
            pending[remote.remote(index, _deep(spec), shipped, row, keep_report)] = index
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=_WAIT_S)
            for ref in ready:
                index = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:  # the task's own code raised
                    result = failed(index, getattr(exc, "cause", None) or exc)
                except ray.exceptions.RayError as exc:  # its worker or node died each try
                    first = (str(exc).strip().splitlines() or [""])[0]
                    result = PointResult(index, "error", f"WorkerDied: the Ray task of this point failed "
                                         f"{max_retries + 1} time(s) ({type(exc).__name__}: {first})")
                on_result(result)
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise


def _deep(spec: Mapping[str, Any]) -> dict:
    import copy

    return copy.deepcopy(dict(spec))
