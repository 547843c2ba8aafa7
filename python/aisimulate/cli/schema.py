"""``aisimulate schema``: the config's JSON Schema, byte for byte docs/config.schema.json."""

from __future__ import annotations

import argparse

from .common import add_progress_argument, write


def add_schema(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "schema", help="print the config's JSON Schema",
        description="Print the JSON Schema of a replay config (generated from the core's "
                    "types; the same as docs/config.schema.json), for editors to complete "
                    "and check configs: e.g. a '# yaml-language-server: $schema=PATH' line "
                    "at the top of a YAML config.",
        epilog="examples:\n  aisimulate schema > aisimulate.schema.json\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_progress_argument(p)  # nothing here shows one: taken as by every command
    p.set_defaults(run=_cmd_schema)


def _cmd_schema(args: argparse.Namespace) -> int:
    from ..binding import native as _native

    # the core's text as it is (not re-encoded: Python would print 0.000001 as 1e-06),
    # byte for byte docs/config.schema.json
    write(_native.call_text("Schema", "", "schema"))
    return 0
