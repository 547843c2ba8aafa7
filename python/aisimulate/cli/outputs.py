"""The CLI's checks of the paths it will write (``--output-dir``, ``--trace-out``,
``sweep --out``, ``compare --plot`` / ``--requests-out``), made before the replay: a
path that cannot be written, or that would overwrite a file the replay reads (the
config, the trace, a model or system file, the AIPerf export being compared), is a
usage error (exit 2) naming the option and the path, not a traceback after minutes of
simulation."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any, Iterable, Mapping, Sequence

from ..io import files as _files
from ..binding import lazy as _lazy
from ..errors import ConfigError
from .common import UsageError


def check_output_file(flag: str, path: str, inputs: Iterable[str] = (),
                      suffixes: Sequence[str] = (), *, read_folders: Iterable[str] = (),
                      force: bool = False) -> None:
    """Check, before any work, that the CLI can write the file ``path`` given as
    ``flag``: a file name (not a folder), with one of ``suffixes`` when given, not one
    of ``inputs``, whose folder exists or can be created and can be written in. The
    writer creates the missing folders.

    Without ``force`` (the CLI's ``--force``) an existing regular file is not replaced:
    a single output file carries no record that aisimulate wrote it (a result folder's
    ``prediction.json`` does, :func:`_files.foreign_output`), so it may be anyone's; the
    message says why (one in ``read_folders``, folders the run reads as a whole such as
    compare's AIPerf artifact folder; one of a result's names that no earlier aisimulate
    result owns; any other existing file).

    Raises:
        UsageError: naming ``flag``, ``path`` and what is wrong.
    """
    if not path.strip():
        raise UsageError(f"{flag}: the file name is empty")
    if os.path.isdir(path):
        raise UsageError(f"{flag} {path}: is a folder: give a file name")
    if suffixes and os.path.splitext(path)[1].lower() not in suffixes:
        raise UsageError(f"{flag} {path}: the file name must end in one of {', '.join(suffixes)}")
    too_long = _files.name_too_long(path)
    if too_long:
        raise UsageError(f"{flag} {path}: {too_long}")
    src = _files.overwritten_input(path, inputs)
    if src is not None:
        raise UsageError(f"{flag} {path} would overwrite the input file {src} that this "
                          "run reads: choose another file")
    if os.path.exists(path) and not os.path.isfile(path):
        return  # a device or a pipe (/dev/null, a FIFO): written through, not replaced
    # One rule for every output: an existing file is replaced only when aisimulate can
    # tell that it wrote it. A result folder's prediction.json lists its files (so
    # --output-dir replaces its own earlier result); a single file records nothing, so
    # an existing one is replaced only with --force.
    why = None if force else (_files.foreign_output(path, read_folders)
                              or (f"{path} exists" if os.path.isfile(path) else None))
    if why is not None:
        raise UsageError(f"{flag} {path}: {why}: it is not overwritten; choose another file, "
                          "move it away, or add --force")
    # a symbolic link's file is replaced in its own folder, which the writer does not make
    if os.path.islink(path):
        target = os.path.dirname(os.path.realpath(path))
        if not os.path.isdir(target):
            raise UsageError(f"{flag} {path}: its link points into {target}, which does not exist: "
                              "make the folder or give another file")
        writable_folder(flag, path, target)
    else:
        writable_folder(flag, path, os.path.dirname(os.path.abspath(path)))


def check_apart(flag: str, path: str, others: Mapping[str, str]) -> None:
    """Check that the output file ``path`` given as ``flag`` is none of the run's other
    outputs ``others`` (what each is → its path), which it would overwrite or be
    overwritten by.

    Raises:
        UsageError: naming ``flag``, ``path`` and the other output.
    """
    for what, other in others.items():
        if _files.same_file(path, other):
            raise UsageError(f"{flag} {path} is also {what}: choose another file")


def check_output_dir(flag: str, directory: str, names: Iterable[str], inputs: Iterable[str],
                     force: bool = False) -> None:
    """Check, before any work, the result folder ``directory`` given as ``flag``: not a
    file, none of the files ``names`` it will hold one of ``inputs``, none (without
    ``force``, the CLI's ``--force``) a file there that no earlier aisimulate result
    wrote, and the folder exists or can be created and can be written in.

    Raises:
        UsageError: naming ``flag``, the path and what is wrong.
    """
    if not directory.strip():
        raise UsageError(f"{flag}: the folder name is empty")
    names = list(names)
    too_long = _files.name_too_long(os.path.join(directory, max(names, key=len, default="x")))
    if too_long:
        raise UsageError(f"{flag} {directory}: {too_long}")
    try:
        _files.ResultDir(directory, inputs=inputs, force=force).check_names(names)
    except _files.ForeignFileError as exc:
        raise UsageError(f"{flag} {directory}: {exc.path} exists and no earlier aisimulate "
                          f"result there lists it: it is not overwritten; choose another "
                          f"folder, move the file away, or add --force") from None
    except ConfigError as exc:
        raise UsageError(f"{flag} {directory}: {exc.reason}") from None
    writable_folder(flag, directory, os.path.abspath(directory))


def writable_folder(flag: str, path: str, folder: str) -> None:
    """Check that ``folder`` (where ``path`` goes) is a folder this process can create
    files in, or can be created: its nearest existing ancestor is a folder, and a file
    can be made there (a real attempt, so that read-only file systems and permissions
    are seen as they are, also for root).

    Raises:
        UsageError: naming ``flag`` and ``path``.
    """
    probe = folder
    while not os.path.lexists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if os.path.islink(probe) and not os.path.exists(probe):
        raise UsageError(f"{flag} {path}: {probe} is a symbolic link to {os.readlink(probe)}, "
                          "which does not exist: make its target or give another path")
    if not os.path.isdir(probe):
        raise UsageError(f"{flag} {path}: cannot make the folder {folder}: {probe} is a file")
    try:
        _lazy.module("tempfile").TemporaryFile(dir=probe, prefix=".aisimulate-probe-").close()
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot write in {probe}: {exc.strerror or exc}") from None


def figure_suffixes() -> tuple[str, ...]:
    """The file suffixes a matplotlib figure can be saved as (``.png``, ``.pdf``,
    ``.svg`` …), from matplotlib itself.

    Raises:
        ImportError: matplotlib is not installed (the message names the extra).
    """
    backend_bases = _lazy.module("matplotlib.backend_bases")
    return tuple(f".{k}" for k in sorted(backend_bases.FigureCanvasBase.get_supported_filetypes()))


def write_figure(fig: Any, path: str, dpi: int = 110) -> None:
    """Save the matplotlib figure ``fig`` to ``path`` (its format from the suffix),
    creating the folder, to a temporary name renamed when complete.

    Raises:
        OSError: the file cannot be written (no file is left behind).
    """
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    ext = os.path.splitext(path)[1].lower()
    _files.write_replacing(path, ".aisimulate-plot-", lambda tmp: fig.savefig(tmp, format=ext[1:], dpi=dpi))
