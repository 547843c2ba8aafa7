package pybind

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/aisimulate/aisimulate/core/report"
)

// tableRequest is WriteTable's request.
type tableRequest struct {
	N       int64                `json:"n"`
	Columns []report.TableColumn `json:"columns"`
	From    int64                `json:"from"`
	To      int64                `json:"to"`
	Format  string               `json:"format"`
	// Append adds the rows to outPath; otherwise outPath is created or
	// truncated first.
	Append bool `json:"append"`
	// Header: whether CSV starts with its header line (default: when from
	// is 0).
	Header *bool `json:"header"`
	// Times is where the flat chunk times are in the data (the aiperf
	// format with chunk_offset and chunk_count columns: inter_chunk_latency).
	Times *report.TimesColumn `json:"times"`
}

// WriteTable writes rows [from, to) of a per-request table (columns in
// dataPath, described by the request; report.WriteTable) to outPath as JSON
// lines or CSV, and returns {"written": {"rows": k}} or an error envelope.
// Python calls it chunk by chunk to show progress and to take a Ctrl-C
// between chunks.
func WriteTable(request, dataPath, outPath string) string {
	return guard(func() string {
		var req tableRequest
		if err := json.Unmarshal([]byte(request), &req); err != nil {
			return errorEnvelope(fmt.Errorf("table request: %w", err))
		}
		data, err := os.Open(dataPath)
		if err != nil {
			return errorEnvelope(fmt.Errorf("reading the table columns: %w", err))
		}
		defer data.Close()
		flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		if req.Append {
			flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
		}
		out, err := os.OpenFile(outPath, flags, 0o644)
		if err != nil {
			return errorEnvelope(err)
		}
		header := req.From == 0
		if req.Header != nil {
			header = *req.Header
		}
		if err := report.WriteTableRowsWith(out, data, req.N, req.Columns, req.From, req.To, req.Format, header, req.Times); err != nil {
			out.Close()
			return errorEnvelope(fmt.Errorf("writing %s: %w", outPath, err))
		}
		if err := out.Close(); err != nil {
			return errorEnvelope(err)
		}
		return fmt.Sprintf(`{"written":{"rows":%d}}`, req.To-req.From)
	})
}
