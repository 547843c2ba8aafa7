"""Interrupt-safe imports of the modules aisimulate loads on first use (PyYAML, numpy,
pandas, pyarrow, tqdm, tempfile …), so that ``import aisimulate`` stays light.

A Ctrl-C (or a notebook's interrupt) that lands while such a module is being imported
for the first time would otherwise leave it half-imported: Python drops the module that
failed from ``sys.modules`` but keeps the submodules it had finished, and the next
import of the package finds them without binding them to it again. PyYAML is broken
for the rest of the process that way (``partially initialized module 'yaml' has no
attribute 'error'`` on every later replay): a notebook user who interrupted once must
restart the kernel.

:func:`module` imports a module whole: on the main thread, a SIGINT that arrives during
the import is held until the import has finished and then delivered (the caller gets its
``KeyboardInterrupt`` a moment later, with the module complete). An import that fails
anyway (an error, or an exception raised in it some other way) and loaded no extension
module takes back every module it added, so that the next attempt starts clean. One that
did load an extension module leaves ``sys.modules`` as Python left it: the extension
cannot be initialised twice in one process and has already written into the
pure-Python modules loaded with it (numpy's ``_multiarray_umath`` fills
``numpy.dtypes``), so those must stay with it.
"""

from __future__ import annotations

import importlib
import signal
import sys
import threading
from contextlib import contextmanager
from importlib.machinery import ExtensionFileLoader
from types import ModuleType

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Any, Iterator

__all__ = ["module", "EXTRAS"]

#: The optional packages aisimulate imports on first use → the extra of aisimulate
#: that installs each (``pip install 'aisimulate[pandas]'``, pyproject.toml) and what
#: needs it.
EXTRAS = {"pandas": ("pandas", "sweep, compare and report.to_pandas()"),
          "matplotlib": ("plot", "figures (report.plot, compare --plot)"),
          "ray": ("ray", "sweep backend='ray'"),
          "ipywidgets": ("notebook", "progress widgets in Jupyter")}


def module(name: str) -> ModuleType:
    """``importlib.import_module(name)``, interrupt-safe (see the module docstring).

    Raises:
        ImportError: the module is not installed (as ``import`` raises it); for an
            optional package (:data:`EXTRAS`) the message names the extra that installs it.
        KeyboardInterrupt: Ctrl-C during the import, raised once it has finished.
    """
    mod = sys.modules.get(name)
    if mod is not None and not getattr(getattr(mod, "__spec__", None), "_initializing", False):
        return mod  # already imported whole: what ``import name`` would return
    before = set(sys.modules)
    with _sigint_held():
        try:
            return importlib.import_module(name)
        except BaseException as exc:
            _forget(set(sys.modules) - before)
            missing = (getattr(exc, "name", None) or "").partition(".")[0]
            if isinstance(exc, ModuleNotFoundError) and missing in EXTRAS:
                extra, users = EXTRAS[missing]
                raise ModuleNotFoundError(
                    f"{missing} is not installed; it is needed for {users}: pip install "
                    f"'aisimulate[{extra}]' (or pip install {missing})", name=exc.name) from None
            raise


def _forget(names: set[str]) -> None:
    """Remove from ``sys.modules`` the modules ``names`` that a failed import added, and
    their bindings in the parent packages, unless one of them is an extension module
    (see the module docstring)."""
    if any(isinstance(getattr(getattr(sys.modules.get(n), "__spec__", None), "loader", None),
                      ExtensionFileLoader) for n in names):
        return
    for name in sorted(names, reverse=True):  # submodules before their packages
        mod = sys.modules.pop(name, None)
        parent, _, child = name.rpartition(".")
        if parent and getattr(sys.modules.get(parent), child, None) is mod:
            delattr(sys.modules[parent], child)


@contextmanager
def _sigint_held() -> Iterator[None]:
    """Hold a SIGINT that arrives in the block and deliver it to the handler it was
    meant for once the block has run. Only on the main thread (the only one that runs
    signal handlers) and when that handler is a Python callable (the default one raises
    ``KeyboardInterrupt``; a notebook kernel's, or the user's own, is honoured alike)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = signal.getsignal(signal.SIGINT)
    if not callable(handler):  # SIG_IGN / SIG_DFL / set outside Python: leave it alone
        yield
        return
    caught: list[tuple[int, Any]] = []
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append((signum, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)
        if caught:
            handler(*caught[0])
