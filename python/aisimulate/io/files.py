"""Writing a result into a folder so that it is whole or absent, never half there.

A result is several files (``prediction.json`` and the per-request tables). Each is
written to a temporary name in the destination folder (``.NAME.aisimulate-PID-TOKEN.tmp``:
hidden, and never a name a reader looks for), flushed to disk, and only when every file
is complete are they moved into place:

0. every check that can fail is made: no final name is a folder (the tables and the
   marker are renamed over files, never over folders);
1. the old ``prediction.json`` is removed, so from here until step 3 the folder holds
   nothing that looks like a complete result;
2. each table is renamed over its final name, and the tables the previous marker
   listed that this result does not write are removed (never an input of the replay,
   and only names aisimulate writes, :func:`result_names`, whatever the marker lists;
   one that cannot be removed is left);
3. the new ``prediction.json`` — the marker of a complete result, which names every
   table with its byte size and the record count — is renamed into place, and the
   folder is synced.

A save never replaces a file it did not write: a file of the result's name already in
the folder is refused (:class:`ForeignFileError`) unless an earlier aisimulate result
there owns it (:func:`previous_result`) or the caller forces it (``force=True``, the
CLI's ``--force``). Files of other names in the folder are left alone.

A full disk, an exception, Ctrl-C or SIGTERM before step 1 leaves the previous result as
it was (the temporary files are removed); a crash or SIGKILL before step 1 leaves it
intact plus hidden temporary files, which the next save into the folder removes once
their process is gone. A crash between steps 1 and 3 leaves no ``prediction.json``; an
error there raises :class:`IncompleteSaveError`, which says so.
"""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any, Callable, Iterable

from ..binding import lazy as _lazy
from ..errors import ConfigError
from .names import AIPERF_FILES, MARKER, result_files, result_names  # noqa: F401 (result_files: the callers')

_TEMP = re.compile(r"^\.(?P<name>.+)\.aisimulate-(?P<pid>\d+)-[0-9a-f]+\.tmp$")


class ForeignFileError(ConfigError):
    """A file of the result's name is in the output folder and no earlier aisimulate
    result there owns it (a real AIPerf ``profile_export.jsonl``, a user's own
    ``prediction.json``): it is not overwritten without ``force``. ``path`` is the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__("", f"{path} exists and no earlier aisimulate result in {path.parent} "
                             "lists it: it is not overwritten; choose another output folder, move "
                             "the file away, or pass force=True")

    def __reduce__(self):
        return (type(self), (self.path,))


class IncompleteSaveError(OSError):
    """A save failed after it removed the previous result's marker (step 1 of the module
    doc): the folder holds no complete result. ``filename`` is the file that failed.
    Equal by value, as the package's other errors (they cross process pools)."""

    def _key(self) -> tuple:
        return (type(self), self.errno, self.strerror, self.filename)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IncompleteSaveError) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


def _is_folder(path: Path) -> bool:
    """Whether ``path`` is a folder itself (a symbolic link to one is replaced as a link)."""
    return path.is_dir() and not path.is_symlink()


def previous_result(directory: Path) -> set[str]:
    """The names of the files in ``directory`` that an earlier aisimulate save wrote,
    known from its markers: a :data:`MARKER` whose ``metadata.aisimulate_version`` is a
    string, with every file its ``records.files`` lists (tables and exports); and an
    AIPerf summary ``profile_export_aiperf.json`` carrying ``aisimulate_version`` (from
    ``report.to_aiperf``), with the AIPerf export's files."""
    owned: set[str] = set()
    doc = _json_object(directory / MARKER)
    if _ours(doc):
        owned.add(MARKER)
        for name, entry in _listed(doc).items():
            if _unchanged(directory / name, entry.get("bytes") if isinstance(entry, dict) else None):
                owned.add(name)
    summary = _json_object(directory / AIPERF_FILES[1])
    if isinstance(summary.get("aisimulate_version"), str):
        sizes = summary.get(AISIMULATE_FILES_KEY)
        owned.add(AIPERF_FILES[1])
        owned.update(n for n in AIPERF_FILES[::2]  # an export of an older version lists no sizes
                     if not isinstance(sizes, dict) or _unchanged(directory / n, sizes.get(n)))
    return owned


#: The key of ``profile_export_aiperf.json`` (written last of an AIPerf export) listing
#: the byte size of the export's other files, so that a file replaced since (a real
#: measurement copied in) is not taken for aisimulate's own.
AISIMULATE_FILES_KEY = "aisimulate_files"


def _unchanged(path: Path, size: Any) -> bool:
    """Whether ``path`` still is the file an aisimulate result wrote, as far as its
    marker knows: of the byte size it recorded (no size recorded: nothing to compare,
    it counts as unchanged). A file replaced since (a user's own, a real AIPerf
    measurement copied over the prediction) is not the result's any more."""
    if isinstance(size, bool) or not isinstance(size, int):
        return True
    try:
        return path.lstat().st_size == size  # a link put in its place is not ours either
    except OSError:
        return True  # gone: nothing to protect


def _json_object(path: Path) -> dict:
    """The JSON object in ``path``, or {} when it is missing, unreadable or not one."""
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read(_MARKER_MAX + 1)) if os.path.getsize(path) <= _MARKER_MAX else None
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


#: A marker larger than this is not read (a result's prediction.json is a few kB to a few
#: MB with its spec; a 500 MB file named like it is not one).
_MARKER_MAX = 64 << 20


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ResultDir:
    """One atomic save into ``directory`` (see the module doc); ``marker`` is the file
    moved into place last (:data:`MARKER` for a saved report).

    Use as a context manager: files are written to :meth:`temp` paths inside it and
    :meth:`commit` moves them into place; leaving the block without a commit (an
    exception, Ctrl-C) removes them.

    Raises:
        ValueError: ``directory`` is empty.
        ConfigError: a file of the result would overwrite one of ``inputs`` (the files
            the replay read), the folder is a file, or its name is too long for the
            file system.
    """

    def __init__(self, directory: str | os.PathLike[str], *, inputs: Iterable[str] = (),
                 marker: str = MARKER, force: bool = False) -> None:
        text = os.fspath(directory)
        if not str(text).strip():
            raise ValueError("the output folder name is empty")
        self.dir = Path(text)
        too_long = name_too_long(self.dir)
        if too_long:
            raise ConfigError("", f"the output folder {self.dir}: {too_long}")
        self._inputs = [p for p in inputs if p and os.path.isfile(p)]
        self._temps: dict[str, Path] = {}
        self._marker = marker  # the file written last, whose presence says "complete"
        self._force = bool(force)  # replace files no earlier aisimulate result owns
        if self.dir.exists() and not self.dir.is_dir():
            raise ConfigError("", f"the output folder {self.dir} is a file, not a folder")

    def check_names(self, names: Iterable[str]) -> None:
        """Refuse to write ``names`` into the folder when one of them is an input file
        (even with ``force``), or, without ``force``, a file there that no earlier
        aisimulate result owns (:func:`previous_result`).

        Raises:
            ConfigError: naming the output, the input and what to do.
            ForeignFileError: naming the file that would be replaced.
        """
        names = list(names)
        for name in names:
            refuse_overwrite(self.dir / name, self._inputs, "choose another output folder")
            if _is_folder(self.dir / name):
                raise ConfigError("", f"{self.dir / name} is a folder: a result file cannot "
                                      "replace it; choose another output folder or move the folder away")
        if self._force or not self.dir.is_dir():
            return
        owned = None
        for name in names:
            path = self.dir / name
            if os.path.lexists(path):
                owned = previous_result(self.dir) if owned is None else owned
                if name not in owned:
                    raise ForeignFileError(path)

    def __enter__(self) -> "ResultDir":
        # the folders this save makes (missing parents too), removed again by abort when left empty
        self._created = [d for d in (self.dir, *self.dir.parents) if not d.exists()]
        self.dir.mkdir(parents=True, exist_ok=True)
        self._remove_stale_temps()
        return self

    def __exit__(self, *exc) -> None:
        self.abort()

    def temp(self, name: str) -> Path:
        """The temporary path to write final file ``name`` to."""
        path = self.dir / f".{name}.aisimulate-{os.getpid()}-{os.urandom(4).hex()}.tmp"
        self._temps[name] = path
        return path

    def abort(self) -> None:
        """Remove every temporary file not yet committed, and the folder when this save
        created it and nothing else is in it (a replay streaming into it was stopped)."""
        for path in self._temps.values():
            try:
                path.unlink()
            except FileNotFoundError:
                pass
        self._temps.clear()
        created, self._created = getattr(self, "_created", []), []
        for folder in created:  # the innermost first
            try:
                folder.rmdir()
            except OSError:  # not empty (committed, or another writer's files)
                break

    def commit(self) -> dict[str, Path]:
        """Move every temporary file into place, :data:`MARKER` last, and remove the
        tables the previous result's marker lists that this result does not write (never
        an input file of the replay).

        Returns:
            final name → final path, in the order written.
        """
        _in_background(lambda: [_fsync(path) for path in self._temps.values()])
        for name in self._temps:  # step 0: what can fail fails before anything is removed
            if _is_folder(self.dir / name):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(self.dir / name))
        marker = self.dir / self._marker
        stale = [self.dir / n for n in _listed_files(marker) if n not in self._temps]
        stale = [p for p in stale if not _is_folder(p) and overwritten_input(p, self._inputs) is None]
        self._created = []  # the folder holds the result from here on
        try:
            marker.unlink()  # from here until the end, nothing looks complete
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(marker)) from exc  # still nothing removed
        for path in stale:
            try:
                path.unlink()
            except OSError:  # gone, or not ours to remove: the new marker does not list it
                pass
        done: dict[str, Path] = {}
        try:
            for name, path in sorted(self._temps.items(), key=lambda kv: kv[0] == self._marker):
                final = self.dir / name
                os.replace(path, final)
                done[name] = final
        except OSError as exc:
            raise IncompleteSaveError(
                exc.errno, f"{exc.strerror or exc} (the previous result in {self.dir} was "
                           f"removed and the new one is not complete: no {self._marker})",
                str(final)) from exc
        self._temps.clear()
        _fsync_dir(self.dir)
        return done

    def _remove_stale_temps(self) -> None:
        """Remove temporary files left by saves whose process is gone (SIGKILL, crash)."""
        try:
            entries = list(os.scandir(self.dir))
        except OSError:
            return
        for e in entries:
            m = _TEMP.match(e.name)
            if m and not _alive(int(m.group("pid"))):
                try:
                    os.unlink(e.path)
                except OSError:
                    pass


def model_config_files(spec: Mapping[str, Any] | None) -> list[str]:
    """The named model's files in the canonical ``spec``'s ``engine.model_config_dir``:
    ``Org--Name_*`` (its config.json and any hf_quant_config.json, the names core/model
    looks up), sorted; none for a model given as a path or without the folder."""
    engine = spec.get("engine") if isinstance(spec, Mapping) else None
    if not isinstance(engine, Mapping):
        return []
    folder, model = engine.get("model_config_dir"), engine.get("model")
    if not (isinstance(folder, str) and folder and isinstance(model, str)) or os.path.isabs(model):
        return []
    prefix = model.replace("/", "--") + "_"
    try:
        names = sorted(n for n in os.listdir(folder) if n.startswith(prefix))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names]


def input_files(spec: Mapping[str, Any] | None, config_file: str | None = None) -> list[str]:
    """The files a replay reads: its config file (``config_file``, when it came from
    one) and, from the canonical ``spec``, the trace (``traffic.source.path``), the
    model and system files when given as paths, and the named model's config files
    (:func:`model_config_files`)."""
    out = [config_file] if config_file else []
    if not isinstance(spec, Mapping):
        return out
    out += model_config_files(spec)
    for section, key in (("traffic", "source"), ("engine", None)):
        node = spec.get(section)
        if isinstance(node, Mapping) and key:
            node = node.get(key)
        if not isinstance(node, Mapping):
            continue
        for k in ("path", "model", "system"):
            v = node.get(k)
            if isinstance(v, str) and os.path.isabs(v):
                out.append(v)
                if k == "model" and os.path.isdir(v):  # a checkpoint folder: the files core/model reads
                    out += [os.path.join(v, n) for n in ("config.json", "hf_quant_config.json")]
    return out


def write_replacing(path: str | os.PathLike[str], prefix: str, write: Callable[[str], object]) -> None:
    """Write one file whole or not at all: ``write(tmp)`` fills a temporary file in
    ``path``'s folder (named ``prefix`` + random + ``path``'s suffix), which is given the
    mode ``open()`` would have given it and renamed over ``path`` when complete.

    What ``path`` already is decides where: a symbolic link to a file is kept and its
    file is replaced (in the file's folder); an existing node that is not a regular file
    (a device such as ``/dev/null``, a FIFO, a socket, ``/dev/stdout``) is written through
    with ``write(path)``, never replaced by a regular file.

    Raises:
        OSError: the file cannot be written (the temporary file is removed); its
            ``filename`` is ``path``, never the temporary name.
        BaseException: whatever ``write`` raises (the temporary file is removed).
    """
    import stat

    try:
        mode = os.stat(path).st_mode  # through a symbolic link
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        write(os.fspath(path))  # a device or a pipe: write through it
        return
    final = os.path.realpath(path)  # a link's file, replaced in its own folder
    tempfile = _lazy.module("tempfile")
    folder = os.path.dirname(final)
    if len(prefix.encode()) > 64:  # a temporary name must stay within NAME_MAX too
        prefix = ".aisimulate-"
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=os.path.splitext(final)[1][:16])
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
    os.close(fd)
    try:
        write(tmp)
        umask = os.umask(0)  # mkstemp made it 0600: give it the mode open() would have
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, final)
    except BaseException as exc:
        os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename in (tmp, final):  # name the user's file
            raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
        raise


def name_too_long(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be created on this system (a component longer than the file
    system's NAME_MAX, the whole longer than PATH_MAX), or None."""
    full = os.path.abspath(os.fspath(path))
    probe = full
    while not os.path.isdir(probe):  # the nearest existing folder, for its limits
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    try:
        name_max, path_max = os.pathconf(probe, "PC_NAME_MAX"), os.pathconf(probe, "PC_PATH_MAX")
    except (OSError, ValueError):
        name_max, path_max = 255, 4096
    if len(os.fsencode(full)) >= path_max:
        return f"the path is longer than {path_max} bytes"
    for part in full.split(os.sep):
        if len(os.fsencode(part)) > name_max:
            return f"File name too long (a name of {len(os.fsencode(part))} bytes, more than {name_max})"
    return None


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether paths ``a`` and ``b`` name one file (the same path after symbolic links,
    or, both existing, the same inode: a hard link)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist
        return False


def overwritten_input(out: str | os.PathLike[str], inputs: Iterable[str]) -> str | None:
    """The one of ``inputs`` (the files a replay reads) that writing ``out`` would
    overwrite (:func:`same_file`), or None."""
    return next((src for src in inputs if src and same_file(out, src)), None)


def foreign_output(out: str | os.PathLike[str], read_folders: Iterable[str] = ()) -> str | None:
    """Why the existing file ``out`` is not aisimulate's to replace, or None: it lies in
    one of ``read_folders`` (a folder the run reads as a whole, such as the AIPerf
    artifact folder ``compare`` reads, whose other files are the measurement's too), or
    it has the name of a result file (:func:`result_names`: ``prediction.json``, the
    tables, the exports) and no earlier aisimulate result in its folder owns it
    (:func:`previous_result`). A missing file, a device or a pipe is None."""
    if not os.path.isfile(out):
        return None
    real = Path(os.path.realpath(out))
    for folder in read_folders:
        if folder and same_file(real.parent, folder):
            return f"{out} is a file of {folder}, the folder this run reads"
    if real.name in result_names() and real.name not in previous_result(real.parent):
        return f"{out} exists and no earlier aisimulate result in {real.parent} lists it"
    return None


def refuse_overwrite(out: str | os.PathLike[str], inputs: Iterable[str], instead: str) -> None:
    """Refuse to write ``out`` when it is one of ``inputs`` (the files the replay read).

    Raises:
        ConfigError: naming the output, the input and ``instead`` (what to do).
    """
    src = overwritten_input(out, inputs)
    if src is not None:
        raise ConfigError("", f"writing {out} would overwrite the input file {src} "
                              f"that this replay read: {instead}")


def _listed_files(marker: Path) -> list[str]:
    """The table names a result's marker lists (:func:`_listed`)."""
    return list(_listed(_json_object(marker)))


def _ours(doc: Mapping[str, Any]) -> bool:
    """Whether the marker ``doc`` is an aisimulate result's: its
    ``metadata.aisimulate_version`` is a string."""
    meta = doc.get("metadata")
    return isinstance(meta, dict) and isinstance(meta.get("aisimulate_version"), str)


def _listed(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The files (name → entry) the marker ``doc`` lists (``records.files``) that
    aisimulate writes (:func:`result_names`; any other name, a user's file or one that
    is not a plain file name, is dropped); none when the marker is not an aisimulate
    result's (:func:`_ours`)."""
    records = doc.get("records") if _ours(doc) else None
    files = records.get("files") if isinstance(records, dict) else None
    if not isinstance(files, dict):
        return {}
    ours = result_names()
    return {n: e for n, e in files.items() if isinstance(n, str) and n in ours}


def _in_background(work: Callable[[], object]) -> None:
    """Run ``work`` on a daemon thread and wait for it in short joins, so that Ctrl-C
    (or the CLI's SIGTERM handler) is taken at once rather than when it ends: flushing
    a 500 MB table to disk takes a second here and far longer on a busy disk, and a
    signal is only handled when the main thread runs Python again. Re-raises what
    ``work`` raised. When the wait is interrupted, the thread finishes on its own; its
    files are then removed by :meth:`ResultDir.abort` (a flush of a removed file does
    no harm)."""
    import threading

    error: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            error.append(exc)

    worker = threading.Thread(target=run, name="aisimulate-fsync", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.05)
    if error:
        raise error[0]


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
