package pybind

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
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
}

// Replay is RunColumnar with options (a JSON object, runOptions): with
// {"timeline": true} the report also has "timeline": {n, columns, pools,
// kv_blocks_total} (report.TimelineColumns), whose columns follow the
// records' in the same file (offsets are from the file's start).
func Replay(spec, options, dataPath string) string {
	return guard(func() string {
		var o runOptions
		dec := json.NewDecoder(strings.NewReader(options))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
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
		cols := report.ToColumns(rep.Records)
		out := map[string]any{"metadata": rep.Metadata, "summary": rep.Summary, "columns": cols}
		data := [][]byte{cols.Data}
		if rep.Timeline != nil {
			tc := rep.Timeline.Columns()
			for i := range tc.Columns {
				tc.Columns[i].Offset += len(cols.Data) // 8-byte aligned: ToColumns pads every column
			}
			out["timeline"] = tc
			data = append(data, tc.Data)
		}
		if err := writeFile(dataPath, data); err != nil {
			return errorEnvelope(fmt.Errorf("writing the report columns: %w", err))
		}
		head, err := json.Marshal(map[string]any{"report": out})
		if err != nil {
			return errorEnvelope(err)
		}
		return string(head)
	})
}

// writeFile writes the parts one after the other to path (created or
// truncated, mode 0600).
func writeFile(path string, parts [][]byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if _, err := f.Write(p); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// decodeAndRun decodes a JSON spec strictly and replays it.
func decodeAndRun(spec string) (*report.Report, error) {
	s, err := config.Decode([]byte(spec))
	if err != nil {
		return nil, err
	}
	return replay.Run(s)
}

// Check validates a JSON spec and builds its deployment without replaying it
// (replay.Check): {"check": {"metadata": {...}}} or an error envelope.
func Check(spec string) string {
	return decodeThen(spec, "check", func(s *config.Spec) (any, error) {
		meta, err := replay.Check(s)
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
func Estimate(spec string) string {
	return decodeThen(spec, "estimate", func(s *config.Spec) (any, error) { return replay.EstimateMemory(s) })
}
