package pybind

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/replay"
	"github.com/aisimulate/aisimulate/core/report"
)

// Run replays a JSON spec and returns {"report": {"metadata", "summary",
// "requests"}} or an error envelope (see the package doc).
func Run(spec string) string {
	return guard(func() string {
		s, err := config.Decode([]byte(spec))
		if err != nil {
			return errorEnvelope(err)
		}
		rep, err := replay.Run(s)
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

// RunColumnar is Run with the per-request records as columns: {"report":
// {"metadata", "summary", "columns": {n, columns, statuses, reasons}, "data":
// base64 of the little-endian column buffer}}. Python decodes each column with
// numpy.frombuffer; this is the bulk path (one string, no per-record parsing).
func RunColumnar(spec string) string {
	return guard(func() string {
		s, err := config.Decode([]byte(spec))
		if err != nil {
			return errorEnvelope(err)
		}
		rep, err := replay.Run(s)
		if err != nil {
			return errorEnvelope(err)
		}
		cols := report.ToColumns(rep.Records)
		head, err := json.Marshal(map[string]any{"metadata": rep.Metadata, "summary": rep.Summary, "columns": cols})
		if err != nil {
			return errorEnvelope(err)
		}
		var b strings.Builder
		b.Grow(len(head) + base64.StdEncoding.EncodedLen(len(cols.Data)) + 32)
		b.WriteString(`{"report":`)
		b.Write(head[:len(head)-1]) // reopen the object to append the data
		b.WriteString(`,"data":"`)
		enc := base64.NewEncoder(base64.StdEncoding, &b)
		enc.Write(cols.Data)
		enc.Close()
		b.WriteString(`"}}`)
		return b.String()
	})
}
