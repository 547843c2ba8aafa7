"""Streaming a replay's per-request records into a result folder as requests finish.

With ``aisimulate.replay(spec, output_dir=DIR)`` (the CLI's ``replay --output-dir``) the
core does not hold the records: each chunk of 65,536 records whose requests have all
finished is written to a scratch folder as its column bytes and a header
(``pybind.Replay``'s ``stream_dir``), and the waiting thread takes each chunk as it
appears, appends it to the tables being written — a Parquet row group (pyarrow, the
writer :meth:`ReplayReport.save` uses, so the file is the same) or a block of JSON lines
or CSV rows (the core's table writer) — and deletes it. Python never loops over records.

The tables are written to temporary names in the folder and moved into place with
``prediction.json`` only when the replay has finished (:mod:`aisimulate.io.files`): a
replay stopped by Ctrl-C or an error leaves the previous result as it was. The rows are
in send order, which is ``request_id`` order except for interleaved sessions and
unsorted traces; then the tables are rewritten sorted (the records are held for that).
The returned report reads its records back, when first used, from the first of the
tables in :data:`aisimulate.io.tables.READ_BACK` that was written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..io import tables as _tables
from ..binding import lazy as _lazy, native as _native


#: log2 of the records per chunk the core streams (pybind ``chunk_shift``): 2^16 =
#: 65,536, a row group of :data:`_tables.CHUNK_ROWS` (the row groups are cut to that
#: size whatever the chunks are).
CHUNK_SHIFT = 16


class RecordStream:
    """Takes the core's streamed chunks from ``chunk_dir`` in order and appends them to
    ``targets`` (format → path): :meth:`poll` while the replay runs, :meth:`close` once
    it has returned."""

    def __init__(self, chunk_dir: str, targets: Mapping[str, Path]) -> None:
        self.dir = chunk_dir
        self.targets = dict(targets)
        self.next = 1
        self.rows = 0
        self._parquet = None
        self._pending: list = []  # Parquet rows not yet in a row group
        self._dtypes: dict[str, Any] | None = None  # an empty array of each column's dtype

    def poll(self) -> None:
        """Append every chunk that is complete (its header written), in order."""
        while True:
            base = os.path.join(self.dir, f"chunk-{self.next:06d}")
            if not os.path.exists(base + ".json"):
                return
            with open(base + ".json", encoding="utf-8") as f:
                head = json.load(f)
            self._append(head, base + ".cols")
            os.unlink(base + ".cols")
            os.unlink(base + ".json")
            self.next += 1

    def _append(self, head: Mapping[str, Any], data: str) -> None:
        n = int(head["n"])
        fields = [c["name"] for c in head["columns"]]
        for fmt, path in self.targets.items():
            if fmt == "parquet":
                np = _lazy.module("numpy")

                cols = _tables.columns_of(head, np.fromfile(data, dtype=np.uint8))
                if self._dtypes is None:
                    self._dtypes = {name: cols[name][:0] for name in fields}
                self._row_groups(path, _tables.arrow_table(cols, fields))
            else:  # in pieces of CHUNK_ROWS: a Ctrl-C is taken between them
                layout = _layout(head)
                for start in range(0, n, _tables.CHUNK_ROWS):
                    first = self.rows == 0 and start == 0
                    req = {"n": n, "columns": layout, "from": start, "to": min(start + _tables.CHUNK_ROWS, n),
                           "format": fmt, "append": not first, "header": first}
                    _native.call("WriteTable", json.dumps(req), "written", data, str(path))
        self.rows += n

    def _row_groups(self, path: Path, table, last: bool = False) -> None:
        """Write ``table`` (after what is pending) as row groups of
        :data:`_tables.CHUNK_ROWS` rows, keeping the rest for the next call unless
        ``last``: the row groups of :func:`_tables.write_parquet`, whatever the core's
        chunks (the first is short of the warm-up requests)."""
        pa = _lazy.module("pyarrow")

        if table is not None:
            if self._pending and table.schema != self._pending[0].schema:
                self._pending = [t.cast(table.schema) for t in self._pending]
            if self._parquet is not None and table.schema != self._parquet.schema:
                self._retype(path, table.schema)
            self._pending.append(table)
        pending = pa.concat_tables(self._pending) if len(self._pending) > 1 else self._pending[0]
        start = 0
        while pending.num_rows - start >= _tables.CHUNK_ROWS or (last and start < pending.num_rows):
            group = pending.slice(start, _tables.CHUNK_ROWS).combine_chunks()
            if self._parquet is None:
                self._parquet = _tables.parquet_writer(path, group.schema, self._dtypes, list(self._dtypes))
            self._parquet.write_table(group)
            start += group.num_rows
        self._pending = [pending.slice(start)] if start < pending.num_rows else []

    def _retype(self, path: Path, schema) -> None:
        """Rewrite the row groups written so far with ``schema``: a trace that names its
        sessions by strings labels ``session_id`` from its first named session on (the
        core's chunk header), so chunks before it carried the column as integers — all
        null, no session having started — and Parquet holds one type a column."""
        pq = _lazy.module("pyarrow.parquet")

        self._parquet.close()
        old = os.path.join(self.dir, "retype.parquet")  # the scratch folder, removed with it
        os.replace(path, old)
        self._parquet = _tables.parquet_writer(path, schema, self._dtypes, list(self._dtypes))
        written = pq.ParquetFile(old)
        for i in range(written.num_row_groups):
            self._parquet.write_table(written.read_row_group(i).cast(schema))
        written.close()
        os.unlink(old)

    def close(self, head: Mapping[str, Any]) -> None:
        """Take the last chunks and close the tables; a replay without records still
        gets its (empty) tables, as :meth:`ReplayReport.save` writes them."""
        self.poll()
        if self._pending:
            self._row_groups(self.targets["parquet"], None, last=True)
        if self.rows == 0:
            from ..report import ReplayReport

            empty = ReplayReport.from_columnar({"summary": {}, "columns": head}, b"")
            cols = empty.record_columns()
            for fmt, path in self.targets.items():
                _tables.write_table(cols, list(cols["_header"]), 0, path, fmt, lambda k: None)
        if self._parquet is not None:
            self._parquet.close()
            self._parquet = None

    def abort(self) -> None:
        if self._parquet is not None:
            try:
                self._parquet.close()
            except Exception:  # noqa: BLE001 - the file is removed by the caller
                pass
            self._parquet = None


def _layout(head: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The core's table layout (``pybind.WriteTable``) of a chunk's header."""
    out = []
    for c in head["columns"]:
        col = {"name": c["name"], "dtype": c["dtype"], "offset": int(c["offset"])}
        if c.get("nullable") or c.get("labels"):
            col["null"] = "negative"
        elif c["dtype"] == "<f8":
            col["null"] = "nan"
        if c.get("labels"):
            col["labels"] = list(head[c["labels"]])
        out.append(col)
    return out


#: The scratch folders' prefix, in the temporary folder: ``aisimulate-stream-PID.START-``
#: with the owning process's id and start time (clock ticks after boot, /proc/PID/stat).
SCRATCH_PREFIX = "aisimulate-stream-"


def _start_ticks(pid: int) -> str | None:
    """Process ``pid``'s start time (/proc/PID/stat field 22), or None when there is no
    such process (or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def scratch_prefix() -> str:
    """This process's scratch-folder prefix (:data:`SCRATCH_PREFIX`)."""
    pid = os.getpid()
    return f"{SCRATCH_PREFIX}{pid}.{_start_ticks(pid) or 0}-"


def reclaim_scratch(tmp: str) -> None:
    """Remove the scratch folders in ``tmp`` whose owning process is gone: one killed
    in the middle of a replay (SIGKILL, the OOM killer, a crash) cannot remove its own
    chunks, 26–100 MB each, and nothing else would. A folder's name tells its owner
    (:func:`scratch_prefix`); one whose process id now belongs to a process that started
    at another time was left by the earlier one. Only this user's folders are looked at;
    folders named otherwise are left alone."""
    shutil = _lazy.module("shutil")
    uid = os.getuid() if hasattr(os, "getuid") else None
    try:
        entries = list(os.scandir(tmp))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(SCRATCH_PREFIX):
            continue
        owner = entry.name[len(SCRATCH_PREFIX):].split("-", 1)[0]
        pid, _, ticks = owner.partition(".")
        if not (pid.isdigit() and ticks.isdigit()):
            continue  # not named by scratch_prefix
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not entry.is_dir(follow_symlinks=False) or (uid is not None and st.st_uid != uid):
            continue
        alive = _start_ticks(int(pid))
        if alive == ticks:
            continue  # its owner still runs
        if alive is None and not os.path.isdir("/proc/self"):
            try:  # no /proc: the process id alone tells
                os.kill(int(pid), 0)
                continue
            except ProcessLookupError:
                pass
            except OSError:
                continue
        shutil.rmtree(entry.path, ignore_errors=True)


def replay_into(spec_json: str, options: dict[str, Any], directory, formats: Sequence[str],
                exports: Sequence[str], *, progress, on_error, config_file: str | None = None,
                force: bool = False):
    """Replay with the records streamed into ``directory`` (see the module doc) and
    return the report, whose records are read back from the first of
    :data:`aisimulate.io.tables.READ_BACK` among ``formats`` when used. ``formats`` and
    ``exports`` are known names, each once (:func:`aisimulate.replay` checks them).
    ``config_file``: the config the spec came from (no result file may overwrite it);
    ``force``: as :meth:`ReplayReport.save` takes it.

    Raises:
        as :func:`aisimulate.replay` and :meth:`ReplayReport.save` raise.
    """
    shutil = _lazy.module("shutil")
    tempfile = _lazy.module("tempfile")

    from ..io import files as _files
    from ..binding.calls import replay_native, save_progress
    from ..report import ReplayReport

    out = _files.ResultDir(directory, inputs=_files.input_files(json.loads(spec_json), config_file), force=force)
    out.check_names(_files.result_files(formats, exports))
    with out:
        targets = {fmt: out.temp(_tables.FILES[fmt]) for fmt in formats}
        reclaim_scratch(tempfile.gettempdir())
        chunk_dir = tempfile.mkdtemp(prefix=scratch_prefix())
        stream = RecordStream(chunk_dir, targets)
        try:
            head, buf = replay_native(spec_json, {**options, "stream_dir": chunk_dir, "chunk_shift": CHUNK_SHIFT}, progress=progress,
                                      on_error=on_error, on_poll=stream.poll)
            stream.close(head["columns"])
        finally:
            stream.abort()
            shutil.rmtree(chunk_dir, ignore_errors=True)
        source = _tables.read_back_format(formats)
        report = ReplayReport.from_streamed(head, buf, targets[source], source)
        report.config_file = config_file
        rewrite = not head["columns"]["streamed"]["sorted"]
        n = report.record_count()
        # The work after the replay (a sorted rewrite, the AIPerf records) takes seconds
        # at 10^6 records: a bar of its own, as save() shows, after the replay's.
        total = n * ((len(targets) if rewrite else 0) + ("aiperf" in exports))
        with save_progress(progress, total) as advance:
            return report.finish_streamed(out, targets, exports, source, rewrite, advance)
