package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The golden's records carry exactly the schema's keys, in its order, and
// each value has the field's JSON kind or is null.
func TestGoldenRecordsAreTheSchema(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "TestReportJSON.golden.json"))
	require.NoError(t, err)
	var rep struct{ Requests []json.RawMessage }
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Len(t, rep.Requests, 4)
	for _, raw := range rep.Requests {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		_, err := dec.Token() // {
		require.NoError(t, err)
		for _, f := range Fields() {
			key, err := dec.Token()
			require.NoError(t, err)
			assert.Equal(t, f.Name, key)
			v, err := dec.Token()
			require.NoError(t, err)
			switch x := v.(type) {
			case nil:
				assert.NotEmpty(t, f.Null, "%s is null but the schema says never", f.Name)
			case string:
				assert.Equal(t, "string", f.Kind(), f.Name)
			case json.Number:
				want := "integer"
				if strings.Contains(string(x), ".") {
					want = "float"
				}
				assert.Equal(t, want, f.Kind(), "%s = %s", f.Name, x)
			}
		}
		end, err := dec.Token()
		require.NoError(t, err)
		assert.Equal(t, json.Delim('}'), end, "no key beyond the schema")
	}
}

// The columns are the schema's fields, in order, with its dtypes, and say how
// their nulls are written.
func TestColumnsAreTheSchema(t *testing.T) {
	c := ToColumns(nil)
	fs := Fields()
	require.Len(t, c.Columns, len(fs))
	for i, f := range fs {
		col := c.Columns[i]
		assert.Equal(t, f.Name, col.Name)
		assert.Equal(t, f.Dtype, col.Dtype)
		assert.Equal(t, f.Kind() == "integer" && f.Null != "", col.Nullable, f.Name)
		assert.Equal(t, f.Kind() == "string", col.Labels != "", f.Name)
	}
	assert.Equal(t, LabelsStatuses, c.Columns[1].Labels)
	// three records: 22 columns, each padded to 8 bytes: 15 of 8-byte values
	// (24 bytes each), 6 of 4-byte (12 → 16) and the status (3 → 8): 360 + 96 + 8
	assert.Equal(t, 464, ColumnsBytes(3))
	assert.Len(t, ToColumns(make3()).Data, ColumnsBytes(3))
	assert.Equal(t, LabelsReasons, c.Columns[2].Labels)
}

// The per-request table of docs/metrics.md is generated from the schema
// (`go test ./core/report -run TestMetricsDocFields -update` rewrites it).
func TestMetricsDocFields(t *testing.T) {
	const begin = "<!-- per-request fields: generated from core/report/fields.go by `go test ./core/report -run TestMetricsDocFields -update` -->\n"
	const end = "<!-- end of the generated per-request fields -->\n"
	var b strings.Builder
	b.WriteString(begin)
	b.WriteString("| field | type | unit | formula / meaning | null when |\n|---|---|---|---|---|\n")
	for _, f := range Fields() {
		unit, null := f.Unit, f.Null
		if unit == "" {
			unit = "—"
		}
		if null == "" {
			null = "never"
		}
		kind := f.Kind()
		if f.Type != "" {
			kind = f.Type
		}
		b.WriteString("| `" + f.Name + "` | " + kind + " | " + unit + " | " + f.Doc + " | " + null + " |\n")
	}
	b.WriteString(end)
	path := filepath.Join("..", "..", "docs", "metrics.md")
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	require.True(t, i >= 0 && j > i, "docs/metrics.md has no generated section (markers %q … %q)", begin, end)
	got := string(doc[i : j+len(end)])
	if *update {
		doc = append(append(append([]byte{}, doc[:i]...), b.String()...), doc[j+len(end):]...)
		require.NoError(t, os.WriteFile(path, doc, 0o644))
		got = b.String()
	}
	assert.Equal(t, b.String(), got, "docs/metrics.md is stale: rerun with -update")
}

func make3() []Record {
	r := Record{Status: StatusCompleted, FirstTokenNs: NoTime, Worker: -1, PrefillWorker: -1, DecodeWorker: -1, SessionID: -1}
	return []Record{r, r, r}
}
