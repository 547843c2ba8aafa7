package pybind

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/replay"
	"github.com/aisimulate/aisimulate/core/report"
)

// Run replays a JSON spec and returns {"report": {"metadata", "summary",
// "requests"}} or an error envelope (see the package doc).
func Run(spec string) string {
	return guard(func() string {
		rep, err := decodeAndRun(spec)
		if err != nil {
			return errorEnvelope(err)
		}
		b, err := rep.JSON()
		if err != nil {
			return errorEnvelope(err)
		}
		return `{"report":` + string(b) + `}`
	})
}

// RunColumnar is Run with the per-request records as columns. It writes the
// little-endian column buffer to dataPath (a file the caller creates and later
// deletes) and returns {"report": {"metadata", "summary", "columns": {n,
// columns, statuses, reasons}}}. Python maps each column with numpy: one file
// read, no per-record parsing. (gopy strings cannot carry NUL bytes, and a
// []byte result crosses the boundary one element at a time; base64 inside the
// JSON cost more than the replay's own bookkeeping.)
func RunColumnar(spec, dataPath string) string { return Replay(spec, "{}", dataPath) }

// runOptions are Replay's options (JSON object; every member optional).
type runOptions struct {
	// Timeline records every engine pass (replay.WithTimeline).
	Timeline bool `json:"timeline"`
	// RunID is a run from NewRun: the replay reports its progress there and
	// stops when it is stopped ("" = neither).
	RunID string `json:"run_id"`
	// SLO adds the summary's goodput (replay.WithSLO).
	SLO *report.SLO `json:"slo"`
	// TokenGaps records each response's chunk times (replay.WithTokenGaps):
	// the report then has "chunks" {n, start, count, times, times_n}: the
	// byte offsets in the data file of each record's start (<i8) and count
	// (<i4) into the flat receive times (<i8 ns, times_n of them). Not with
	// StreamDir.
	TokenGaps bool `json:"token_gaps"`
	// Percentiles adds these percentiles to every statistic of the summary
	// (replay.WithPercentiles; null: only p50, p90, p95, p99).
	Percentiles []float64 `json:"percentiles"`
	// StreamDir streams the records instead of returning them: each chunk of
	// 65,536 records whose requests have all finished is written there, in
	// send order, as chunk-NNNNNN.cols (its columns, the columnar form of its
	// own rows) and then chunk-NNNNNN.json (its header: n, columns, statuses,
	// reasons so far), renamed into place last, so a reader takes a chunk
	// once its header exists. "" returns the records in the data file.
	StreamDir string `json:"stream_dir"`
	// ChunkShift is log2 of the records per streamed chunk (0: 16;
	// replay.WithRecordChunks).
	ChunkShift uint `json:"chunk_shift"`
}

// decodeOptions decodes a JSON object of options into o, refusing a member o
// does not have.
func decodeOptions(options string, o any) error {
	dec := json.NewDecoder(strings.NewReader(options))
	dec.DisallowUnknownFields()
	return dec.Decode(o)
}

// Replay is RunColumnar with options (a JSON object, runOptions): with
// {"timeline": true} the report also has "timeline": {n, columns, pools,
// kv_blocks_total} (report.TimelineColumns), whose columns follow the
// records' in the same file (offsets are from the file's start).
func Replay(spec, options, dataPath string) string {
	return guard(func() string {
		var o runOptions
		if err := decodeOptions(options, &o); err != nil {
			return errorEnvelope(fmt.Errorf("replay options: %w", err))
		}
		s, err := config.Decode([]byte(spec))
		if err != nil {
			return errorEnvelope(err)
		}
		var opts []replay.Option
		if o.Timeline {
			opts = append(opts, replay.WithTimeline())
		}
		if o.SLO != nil {
			opts = append(opts, replay.WithSLO(*o.SLO))
		}
		if o.Percentiles != nil {
			opts = append(opts, replay.WithPercentiles(o.Percentiles))
		}
		if o.TokenGaps {
			if o.StreamDir != "" {
				return errorEnvelope(fmt.Errorf("replay options: token_gaps holds the chunk times with the records: " +
					"not with stream_dir"))
			}
			opts = append(opts, replay.WithTokenGaps())
		}
		var streamed int
		if o.StreamDir != "" {
			opts = append(opts, replay.WithRecordColumns(func(c report.Chunk, b *report.ColumnBuilder) error {
				streamed++
				return writeChunk(o.StreamDir, streamed, c, b)
			}))
			if o.ChunkShift > 0 {
				opts = append(opts, replay.WithRecordChunks(o.ChunkShift))
			}
		} else {
			opts = append(opts, replay.WithRecordColumns(nil))
		}
		ctx := context.Background()
		if r := lookupRun(o.RunID); r != nil {
			ctx = r.ctx
			opts = append(opts, r.options()...)
			defer r.ended.Store(true)
		}
		rep, err := replay.RunContext(ctx, s, opts...)
		if err == nil {
			err = ctx.Err() // stopped while the report was being built
		}
		if err != nil {
			return errorEnvelope(err)
		}
		cols := rep.Columns.Header()
		size := int64(report.ColumnsBytes(cols.N))
		if o.StreamDir != "" {
			cols.Streamed = &report.Streamed{Chunks: streamed, Sorted: rep.Columns.Sorted()}
			size = 0
		}
		out := map[string]any{"metadata": rep.Metadata, "summary": rep.Summary, "columns": cols}
		var timeline []byte
		if rep.Timeline != nil {
			tc := rep.Timeline.Columns()
			for i := range tc.Columns {
				tc.Columns[i].Offset += int(size) // 8-byte aligned: every column is padded
			}
			out["timeline"] = tc
			timeline = tc.Data
		}
		if rep.Chunks != nil {
			var head map[string]int64
			head, timeline = chunkColumns(rep.Chunks, size+int64(len(timeline)), timeline)
			out["chunks"] = head
		}
		err = writeColumns(dataPath, rep.Columns, o.StreamDir == "", timeline)
		rep = nil
		// The columns now live in the file, which Python reads whole: give
		// their memory back to the system first, so that the two copies are
		// never resident at once (a 10-million-request replay's columns are
		// 1.4 GB). Not for small ones: a forced collection costs tens of ms.
		if size >= freeOSBytes {
			debug.FreeOSMemory()
		}
		if err != nil {
			return errorEnvelope(fmt.Errorf("writing the report columns: %w", err))
		}
		head, err := json.Marshal(map[string]any{"report": out})
		if err != nil {
			return errorEnvelope(err)
		}
		return string(head)
	})
}

// freeOSBytes is the size of the records' columns from which Replay returns
// the Go heap to the system before Python reads them (about 29,000 records;
// 16 MB left 90,000 session turns' heap resident beside Python's copy: 153
// MiB peak against 98).
const freeOSBytes = 4 << 20

// chunkColumns appends the chunk times c to data, whose first byte is at
// offset base of the data file (8-byte aligned), and returns their header:
// the offsets of the starts (<i8), the counts (<i4, padded to 8 bytes) and
// the times (<i8), the records n and the times times_n.
func chunkColumns(c *report.ChunkTimes, base int64, data []byte) (map[string]int64, []byte) {
	le := binary.LittleEndian
	at := func() int64 { return base + int64(len(data)) }
	head := map[string]int64{"n": int64(len(c.Start)), "times_n": int64(len(c.Times)), "start": at()}
	for _, v := range c.Start {
		data = le.AppendUint64(data, uint64(v))
	}
	head["count"] = at()
	for _, v := range c.Count {
		data = le.AppendUint32(data, uint32(v))
	}
	for len(data)%8 != 0 {
		data = append(data, 0)
	}
	head["times"] = at()
	for _, v := range c.Times {
		data = le.AppendUint64(data, uint64(v))
	}
	return head, data
}

// writeColumns writes the records' columns (when records) and then the
// timeline's to path (created or truncated, mode 0600).
func writeColumns(path string, cols *report.ColumnBuilder, records bool, timeline []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if records {
		_, err = cols.WriteTo(w)
	}
	if err == nil {
		_, err = w.Write(timeline)
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeChunk writes streamed chunk i into dir: its columns, then its header
// under a temporary name renamed into place (the reader's signal).
func writeChunk(dir string, i int, c report.Chunk, b *report.ColumnBuilder) error {
	base := filepath.Join(dir, fmt.Sprintf("chunk-%06d", i))
	if err := os.WriteFile(base+".cols", c.Data, 0o600); err != nil {
		return fmt.Errorf("streaming the records: %w", err)
	}
	h := b.ChunkHeader(c.Rows)
	head, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".json.tmp", head, 0o600); err != nil {
		return fmt.Errorf("streaming the records: %w", err)
	}
	return os.Rename(base+".json.tmp", base+".json")
}

// decodeAndRun decodes a JSON spec strictly and replays it.
func decodeAndRun(spec string) (*report.Report, error) {
	s, err := config.Decode([]byte(spec))
	if err != nil {
		return nil, err
	}
	return replay.Run(s)
}

// checkOptions are Check's options (JSON object; every member optional).
type checkOptions struct {
	// RunID is a run from NewRun: the check stops when it is stopped (its
	// workload's reads look every few ms; "" = never).
	RunID string `json:"run_id"`
}

// Check validates a JSON spec and builds its deployment without replaying it
// (replay.CheckContext), held to the memory budget as Replay holds it
// (records as columns), with options (a JSON object, checkOptions): {"check":
// {"metadata": {...}}} or an error envelope ("interrupted" once stopped).
func Check(spec, options string) string {
	return decodeThen(spec, "check", func(s *config.Spec) (any, error) {
		var o checkOptions
		if err := decodeOptions(options, &o); err != nil {
			return nil, fmt.Errorf("check options: %w", err)
		}
		ctx := context.Background()
		if r := lookupRun(o.RunID); r != nil {
			ctx = r.ctx
			defer r.ended.Store(true)
		}
		meta, err := replay.CheckContext(ctx, s, replay.WithRecordColumns(nil))
		return map[string]any{"metadata": meta}, err
	})
}

// decodeThen decodes a JSON spec strictly, calls f on it and returns
// {key: result} or an error envelope.
func decodeThen(spec, key string, f func(*config.Spec) (any, error)) string {
	return guard(func() string {
		s, err := config.Decode([]byte(spec))
		if err != nil {
			return errorEnvelope(err)
		}
		v, err := f(s)
		if err != nil {
			return errorEnvelope(err)
		}
		b, err := json.Marshal(map[string]any{key: v})
		if err != nil {
			return errorEnvelope(err)
		}
		return string(b)
	})
}

// Estimate validates a JSON spec, builds its deployment and returns its
// memory estimate and budget (replay.EstimateMemory), simulating nothing:
// {"estimate": {...}} or an error envelope.
func Estimate(spec string) string { return EstimateWith(spec, "{}") }

// EstimateWith is Estimate for a replay with options (a JSON object:
// {"token_gaps": true} adds the chunk times' memory, replay.WithTokenGaps).
func EstimateWith(spec, options string) string {
	var o struct {
		TokenGaps bool `json:"token_gaps"`
	}
	if err := decodeOptions(options, &o); err != nil {
		return errorEnvelope(fmt.Errorf("estimate options: %w", err))
	}
	return decodeThen(spec, "estimate", func(s *config.Spec) (any, error) {
		opts := []replay.Option{replay.WithRecordColumns(nil)} // as Replay holds the records
		if o.TokenGaps {
			opts = append(opts, replay.WithTokenGaps())
		}
		return replay.EstimateMemory(s, opts...)
	})
}

// DatasetEntries returns {"entries": {"ids": [e_0, e_1, …]}}, the dataset
// entry of each request by request id (warm-up requests first), for a
// synthetic source with a dataset, and {"entries": {"ids": null}} otherwise
// (replay.DatasetEntries); or an error envelope.
func DatasetEntries(spec string) string {
	return decodeThen(spec, "entries", func(s *config.Spec) (any, error) {
		ids, err := replay.DatasetEntries(s)
		return map[string]any{"ids": ids}, err
	})
}
