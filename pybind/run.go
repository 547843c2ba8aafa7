package pybind

import (
	"encoding/json"
	"fmt"
	"os"

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
func RunColumnar(spec, dataPath string) string {
	return guard(func() string {
		rep, err := decodeAndRun(spec)
		if err != nil {
			return errorEnvelope(err)
		}
		cols := report.ToColumns(rep.Records)
		if err := os.WriteFile(dataPath, cols.Data, 0o600); err != nil {
			return errorEnvelope(fmt.Errorf("writing the report columns: %w", err))
		}
		head, err := json.Marshal(map[string]any{"report": map[string]any{
			"metadata": rep.Metadata, "summary": rep.Summary, "columns": cols}})
		if err != nil {
			return errorEnvelope(err)
		}
		return string(head)
	})
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
	return guard(func() string {
		s, err := config.Decode([]byte(spec))
		if err != nil {
			return errorEnvelope(err)
		}
		meta, err := replay.Check(s)
		if err != nil {
			return errorEnvelope(err)
		}
		b, err := json.Marshal(map[string]any{"check": map[string]any{"metadata": meta}})
		if err != nil {
			return errorEnvelope(err)
		}
		return string(b)
	})
}
