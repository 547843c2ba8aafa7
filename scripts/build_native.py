"""Build aisimulate's native core (the Go packages in core/ and pybind/) as a CPython
extension with gopy, for the Python that runs this script.

Used by the PEP 517 build (setup.py's build_ext: ``pip install .``, ``pip wheel .``,
``pip install -e .``) and by ``make build``, so both build the same way:

    python scripts/build_native.py OUT_DIR

writes into OUT_DIR the extension ``_aisimcore<EXT_SUFFIX>`` (e.g.
``_aisimcore.cpython-311-x86_64-linux-gnu.so``) and gopy's Python modules (``go.py``,
``pybind.py``, ``__init__.py``), i.e. the package ``aisimulate._core``.

Steps: install the Go tools pinned in go.mod's ``tool`` directive (gopy, goimports) into
a tools folder; let gopy generate and compile the extension into a staging folder with
this interpreter (``-vm``, which must have pybindgen) in a staging folder under
``_build/`` (inside the Go module, as gopy's ``go build`` needs); copy only the runtime files, and
drop the ``os.chdir`` gopy puts in its import code (it would change the caller's working
directory at import) and its unused import of ``inspect``.

Needs Go (the version go.mod names) and a C compiler for cgo. A missing one is a
:class:`BuildError` that says what to install.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The gopy package name: the extension is ``_aisimcore``, its Go wrapper ``aisimcore``.
NAME = "aisimcore"
#: Go packages exported to Python.
GO_PACKAGES = ["./pybind"]
#: gopy writes these lines in its generated modules; they chdir at import time.
_CHDIR = re.compile(r"^(cwd = os\.getcwd\(\)|currentdir = os\.path\.dirname.*|os\.chdir\(.*)\n", re.M)
#: gopy's import line; ``inspect`` in it is unused (its import costs ~12 ms of CPU, a
#: seventh of a small replay's whole process) and is dropped when nothing uses it.
_IMPORTS = "import os,sys,inspect,collections\n"


def patch_generated(text: str) -> str:
    """A gopy module's text without the ``os.chdir`` of its import code and, when the
    module never uses it, without ``inspect`` in its imports."""
    text = _CHDIR.sub("", text)
    if "inspect." not in text:
        text = text.replace(_IMPORTS, "import os,sys,collections\n")
    return text


class BuildError(RuntimeError):
    """The native core cannot be built here (a missing tool, a failed step)."""


def go_version_required() -> str:
    """The Go version go.mod names (``go 1.26.8`` → ``"1.26.8"``)."""
    m = re.search(r"^go\s+(\S+)", (ROOT / "go.mod").read_text(encoding="utf-8"), re.M)
    return m.group(1) if m else "?"


def find_tools() -> tuple[str, str]:
    """Paths of ``go`` and the C compiler cgo will use.

    Raises:
        BuildError: either is missing, naming what to install.
    """
    go = shutil.which("go")
    if go is None:
        raise BuildError(
            f"aisimulate's native core is written in Go and needs Go {go_version_required()} "
            "or newer to build, but `go` was not found on PATH. Install it "
            "(https://go.dev/doc/install) or put its bin folder on PATH, then install again.")
    cc = os.environ.get("CC") or "gcc"
    cc_path = shutil.which(cc.split()[0])
    if cc_path is None:
        raise BuildError(
            f"aisimulate's native core needs a C compiler for cgo, but `{cc}` was not found "
            "on PATH (Debian/Ubuntu: apt-get install gcc; or set CC).")
    return go, cc_path


def _run(cmd: list[str], env: dict[str, str], what: str) -> None:
    print(" ".join(cmd), file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, env=env)
    if proc.returncode != 0:
        raise BuildError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}")


def install_tools(tools: Path, env: dict[str, str]) -> None:
    """``go install tool`` (gopy, goimports at go.mod's pins) into ``tools``."""
    tools.mkdir(parents=True, exist_ok=True)
    _run(["go", "install", "tool"], {**env, "GOBIN": str(tools)}, "installing the Go tools (gopy)")


def build(out_dir: str | os.PathLike[str], *, tools: str | os.PathLike[str] | None = None,
          python: str | None = None) -> list[Path]:
    """Build the extension for ``python`` (default: this interpreter) into ``out_dir``.

    Args:
        out_dir: the ``aisimulate/_core`` folder to fill (created; files it held from
            an earlier build are replaced).
        tools: where to install gopy and goimports (default: a temporary folder).
        python: the interpreter whose headers and ABI the extension targets; it must
            import pybindgen.

    Returns:
        the files written.

    Raises:
        BuildError: Go or the C compiler is missing, or a step failed.
    """
    find_tools()
    python = python or sys.executable
    out = Path(out_dir).resolve()
    # gopy's staging folder must sit inside the Go module (it runs `go build` there)
    (ROOT / "_build").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="native-", dir=ROOT / "_build") as tmp:
        tool_dir = Path(tools).resolve() if tools else Path(tmp) / "tools"
        env = dict(os.environ)
        env["PATH"] = f"{tool_dir}{os.pathsep}{env.get('PATH', '')}"
        env["CGO_LDFLAGS_ALLOW"] = "-fwrapv"  # the flag Python's own build adds
        env.setdefault("CGO_ENABLED", "1")
        if not (tool_dir / "gopy").exists():
            install_tools(tool_dir, env)
        stage = Path(tmp) / "gopy"
        _run([str(tool_dir / "gopy"), "build", f"-vm={python}", "-dynamic-link=true", "-no-make=true",
              "-symbols=false", f"-name={NAME}", f"-output={stage}", *GO_PACKAGES], env,
             "gopy build of the native core")
        suffix = _ext_suffix(python)
        so = stage / f"_{NAME}{suffix}"
        if not so.exists():
            found = sorted(p.name for p in stage.glob(f"_{NAME}*"))
            raise BuildError(f"gopy did not write {so.name} (found: {found or 'nothing'})")
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        written = []
        for src in sorted(stage.glob("*.py")):
            if src.name == "build.py":  # gopy's build script, not part of the package
                continue
            dst = out / src.name
            dst.write_text(patch_generated(src.read_text(encoding="utf-8")), encoding="utf-8")
            written.append(dst)
        shutil.copy2(so, out / so.name)
        written.append(out / so.name)
        return written


def _ext_suffix(python: str) -> str:
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        return sysconfig.get_config_var("EXT_SUFFIX")
    return subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                          check=True, capture_output=True, text=True).stdout.strip()


def main(argv: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out_dir", help="the aisimulate/_core folder to write")
    p.add_argument("--tools", help="install gopy and goimports here (default: a temporary folder)")
    args = p.parse_args(argv)
    try:
        build(args.out_dir, tools=args.tools)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
