"""The native parts of the PEP 517 build (metadata is in pyproject.toml).

- ``build_ext`` builds the Go core as the extension ``aisimulate._core._aisimcore`` with
  ``scripts/build_native.py`` (Go and a C compiler required; a missing one fails the
  install with a message that says so). Declaring the extension makes the wheel a
  platform wheel tagged for the interpreter that builds it (``cp311-cp311-linux_x86_64``).
  ``pip install -e .`` builds it into ``python/aisimulate/_core`` in place.
  ``AISIMULATE_SKIP_NATIVE=1`` skips it: ``make build`` uses that for its editable
  install and builds the core itself, tracking the Go sources.
- ``build_py`` puts the model configs and GPU system specs users name into the package
  (``aisimulate/data/aic/model_configs/*.json``, ``aisimulate/data/aic/systems/*.yaml``)
  from the data folder: ``$AISIMULATE_DATA`` or, in a checkout, ``../shared/data``. The
  measured kernel tables stay outside the wheel (``aisimulate.catalogue`` finds them the
  same way at run time). Without a data folder the wheel carries only the built-in ones.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "scripts"))
import build_native  # noqa: E402  (scripts/build_native.py)

SKIP_ENV = "AISIMULATE_SKIP_NATIVE"
CORE = "aisimulate._core._aisimcore"


class BuildGoExtension(build_ext):
    """Build the gopy extension instead of compiling C sources."""

    def build_extension(self, ext: Extension) -> None:
        if ext.name != CORE:
            return super().build_extension(ext)
        if os.environ.get(SKIP_ENV) == "1":
            print(f"{SKIP_ENV}=1: not building the native core", file=sys.stderr)
            return
        target = Path(self.get_ext_fullpath(ext.name))
        try:
            build_native.build(target.parent, tools=Path(self.build_temp) / "go-tools")
        except build_native.BuildError as exc:
            raise SystemExit(f"error: {exc}") from None
        # gopy names the file after the interpreter's EXT_SUFFIX, as setuptools does
        if not target.exists():
            raise SystemExit(f"error: the native build did not write {target}")

    def copy_extensions_to_source(self) -> None:
        """Editable install: put the whole ``aisimulate/_core`` package (the extension and
        gopy's modules) into ``python/aisimulate/_core``, not the extension alone."""
        if os.environ.get(SKIP_ENV) == "1":
            return
        build_py = self.get_finalized_command("build_py")
        for ext in self.extensions:
            if ext.name != CORE:
                continue
            package = ext.name.rpartition(".")[0]
            built = Path(self.build_lib, *package.split("."))
            dest = Path(build_py.get_package_dir(package))
            if dest.exists():
                shutil.rmtree(dest)
            shutil.copytree(built, dest)

    def get_outputs(self) -> list[str]:
        if os.environ.get(SKIP_ENV) == "1":
            return []
        return super().get_outputs()


def data_root() -> Path | None:
    """The data folder whose model configs and system specs the wheel carries."""
    env = os.environ.get("AISIMULATE_DATA")
    if env:
        root = Path(env).resolve()
        if not root.is_dir():
            raise SystemExit(f"error: AISIMULATE_DATA={env}: folder not found")
        return root
    shared = ROOT.parent / "shared" / "data"
    return shared if shared.is_dir() else None


class BuildPyWithData(build_py):
    """Copy the model configs and system specs into the package (not in editable mode:
    an editable install finds them in the checkout's data folder)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        root = data_root()
        if root is None:
            print("no data folder (AISIMULATE_DATA, ../shared/data): the wheel carries only "
                  "the built-in models and systems", file=sys.stderr)
            return
        dest = Path(self.build_lib) / "aisimulate" / "data" / "aic"
        copied = 0
        for sub, pattern in (("model_configs", "*.json"), ("systems", "*.yaml")):
            src = root / "aic" / sub
            if not src.is_dir():
                continue
            (dest / sub).mkdir(parents=True, exist_ok=True)
            for f in sorted(src.glob(pattern)):
                shutil.copyfile(f, dest / sub / f.name)
                copied += 1
        print(f"bundled {copied} model configs and system specs from {root}", file=sys.stderr)


setup(
    ext_modules=[Extension(CORE, sources=[])],
    cmdclass={"build_ext": BuildGoExtension, "build_py": BuildPyWithData},
)
