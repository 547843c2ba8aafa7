"""The ``aisimulate`` command (also ``python -m aisimulate``).

Subcommands, one module each: ``replay`` (run a config and print the predicted metrics,
:mod:`.replay`), ``validate`` (check a config without running it), ``models`` and
``systems`` (what a config can name, :mod:`.catalogue`), ``schema``, ``sweep`` (a grid or
scenario list, one row per point), ``compare`` (against an AIPerf measurement), ``bench``
(a benchmark command as written) and ``search`` (capacity planning). Each reads its
config from a path or, with ``-``, from stdin; ``--set dotted.field=VALUE`` (repeatable)
changes one field before the config is compiled. What they share is :mod:`.common`.

stdout carries only the result (the table, JSON or CSV); diagnostics go to stderr.
Exit codes:

- 0: success;
- 1: a simulation error (any other error from the core; an internal error is one line,
  and ``AISIMULATE_DEBUG=1`` adds the Go stack), a missing native build, the output
  folder cannot be written, stdout cannot take the result (a full disk, a closed
  pipe), or every point of a sweep failed (the table of their reasons is still
  printed; some points failing is exit 0, with each failure named on stderr);
- 2: bad input: a config error (the message names the dotted field, or the file and
  line), a workload data error (file and line), or bad command-line arguments,
  including an output path that cannot be written or would overwrite a file the run
  reads (checked before the replay, :mod:`aisimulate.cli.outputs`);
- 130: interrupted (Ctrl-C), 143: terminated (SIGTERM): one line; the replay is stopped at
  once and no output file is left half-written.

Adding a subcommand: a module ``cli/NAME.py`` with ``_cmd_NAME(args) -> int`` and an
``add_NAME(sub)`` that creates its parser with ``set_defaults(run=_cmd_NAME)``; register
it in :data:`SUBCOMMANDS`. :func:`~.common.add_config_arguments` and
:func:`~.common.config_from_args` give it the same CONFIG / ``--config`` / ``--set``
handling as ``replay``; :class:`~.common.UsageError` is its exit 2.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import warnings

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs ~10 ms of CPU at import
    from typing import Callable, Sequence

from .._startup import EXIT_INTERRUPTED, release
from ..errors import BackendVersionWarning, ConfigError, DataError, SimulationError
from .catalogue import add_listing
from .common import DEBUG_ENV, EXAMPLES, PROG, StdoutError, UsageError, error
from .replay import add_replay
from .schema import add_schema
from .validate import add_validate


#: Subcommand registrars, in ``--help`` order.
SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_replay,
    add_validate,
    lambda sub: add_listing(sub, "models", "models"),
    lambda sub: add_listing(sub, "systems", "GPU systems"),
    add_schema,
    lambda sub: __import__("aisimulate.cli.sweep", fromlist=["add_sweep"]).add_sweep(sub),
    lambda sub: __import__("aisimulate.cli.compare", fromlist=["add_compare"]).add_compare(sub),
    lambda sub: __import__("aisimulate.cli.bench", fromlist=["add_bench"]).add_bench(sub),
    lambda sub: __import__("aisimulate.cli.search", fromlist=["add_search"]).add_search(sub),
]


class _Version(argparse._VersionAction):
    """``--version``: the package's version, read when asked for (reading it loads
    importlib.metadata, ~25 ms of CPU that every other command would pay)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from .. import __version__

        self.version = f"%(prog)s {__version__}"
        super().__call__(parser, namespace, values, option_string)


def parser() -> argparse.ArgumentParser:
    """The ``aisimulate`` argument parser with every subcommand."""
    p = argparse.ArgumentParser(prog=PROG, description="GPU-free simulator of LLM inference serving.",
                                epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_Version)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(sub)
    return p


#: Exit code after SIGTERM (128 + SIGTERM).
EXIT_TERMINATED = 143


class _Terminated(BaseException):
    """Raised in the main thread by the SIGTERM handler, so that ``finally`` blocks
    run (a replay is stopped, temporary files are removed) before the exit."""


def _on_sigterm(signum, frame):  # pragma: no cover - exercised in a subprocess test
    raise _Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    args = parser().parse_args(argv)  # exits 2 on bad arguments
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        with warnings.catch_warnings():
            shown = warnings.showwarning

            def show(message, category, *rest, **kw):  # ours as one line, like an error
                if issubclass(category, BackendVersionWarning) and sys.stderr is not None:
                    print(f"{PROG}: warning: {message}", file=sys.stderr)
                else:
                    shown(message, category, *rest, **kw)
            warnings.showwarning = show
            return _run(args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace) -> int:
    try:
        release()  # from here Ctrl-C is a KeyboardInterrupt, taken below
        return args.run(args)
    except KeyboardInterrupt:
        error("interrupted")
        return EXIT_INTERRUPTED
    except _Terminated:
        error("terminated")
        return EXIT_TERMINATED
    except UsageError as exc:
        error(str(exc))
        return 2
    except (ConfigError, DataError) as exc:
        error(str(exc))
        return 2
    except SimulationError as exc:
        if exc.kind == "panic":
            # one line; the Go stack only on request (it is for the bug report)
            debug = os.environ.get(DEBUG_ENV)
            error(f"internal error (a bug in aisimulate; please report it with the config): {exc}"
                   + ("" if debug else f" [set {DEBUG_ENV}=1 for the Go stack]"))
            if debug and exc.detail and sys.stderr is not None:
                sys.stderr.write(exc.detail)
            return 1
        error(f"simulation failed: {exc}")
        return 1
    except StdoutError as exc:
        error(str(exc))
        return 1
    except ImportError as exc:  # a missing optional extra: an environment to fix, as a bad argument is
        error(str(exc))
        return 2
    except KeyboardInterrupt:
        # Ctrl-C: the replay or sweep has stopped and nothing was written (outputs are
        # renamed into place only when complete); one line, the shell's 128 + SIGINT
        error("interrupted")
        return EXIT_INTERRUPTED


def _started_processes() -> bool:
    """Whether this process may have started worker processes (a sweep's loky pool or
    Ray), whose clean-up runs at the interpreter's exit."""
    return "ray" in sys.modules or "joblib.externals.loky" in sys.modules


def console_main() -> None:  # pragma: no cover - the installed `aisimulate` script
    """Entry point of the ``aisimulate`` console script (and ``python -m aisimulate``)."""
    try:
        code = main()
    except KeyboardInterrupt:
        # Ctrl-C after the command's own handling: once it has returned (restoring the
        # SIGTERM handler), or from argparse; its result, if any, is already whole
        error("interrupted")
        code = EXIT_INTERRUPTED
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        # Stopping: a further Ctrl-C (pressed again, or `timeout -s INT`, which signals
        # the command and then its process group) would land in the exit handlers below
        # (loky's joins its pool's manager thread) as a traceback "Exception ignored in:
        # <module 'threading'>… KeyboardInterrupt". The command has already answered.
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        except (ValueError, OSError):  # not the main thread, or no signals here
            pass
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED) and not _started_processes():
        # Stopped: every file is already removed or left whole (the finally blocks ran),
        # so leave at once. The interpreter's own shutdown would first free everything
        # a big replay built (garbage collection over pyarrow, pandas, the report's
        # columns): 0.5–1 s on a loaded machine, after the user asked to stop. Not after
        # a sweep that started processes: Ray's exit handler stops the local cluster it
        # may have started; loky's kills the pool's workers (they ignore SIGINT: they
        # would live on, holding stdout and stderr open) and its semaphores are released
        # by their exit finalizers (skipped, its resource tracker warns of "leaked
        # semlock objects").
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (AttributeError, OSError, ValueError):
                pass
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    console_main()
