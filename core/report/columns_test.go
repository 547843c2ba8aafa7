package report

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestColumnsRoundTrip(t *testing.T) {
	rs := []Record{
		{RequestID: 7, Status: StatusCompleted, InputTokens: 100, OutputTokens: 3, SendNs: 0, ArrivalNs: 0,
			FirstTokenNs: 14e6, EndNs: 19.3e6, ReleaseNs: 19.3e6, Worker: 1, PrefillWorker: -1, DecodeWorker: -1, SessionID: -1},
		{RequestID: 8, Status: StatusRejected, Reason: "too long", InputTokens: 5, FirstTokenNs: NoTime,
			EndNs: 1e6, ReleaseNs: 2e6, Worker: 0, PrefillWorker: 0, DecodeWorker: -1, SessionID: 4, Turn: 2},
	}
	c := ToColumns(rs)
	require.Equal(t, 2, c.N)
	col := map[string]Column{}
	for _, k := range c.Columns {
		col[k.Name] = k
		assert.Zero(t, k.Offset%8, k.Name)
	}
	f64 := func(name string, i int) float64 {
		return math.Float64frombits(binary.LittleEndian.Uint64(c.Data[col[name].Offset+8*i:]))
	}
	i32 := func(name string, i int) int32 {
		return int32(binary.LittleEndian.Uint32(c.Data[col[name].Offset+4*i:]))
	}
	assert.Equal(t, 14.0, f64("ttft_ms", 0))
	assert.InDelta(t, 2.65, f64("tpot_ms", 0), 1e-12) // (19.3 − 14) / 2
	assert.True(t, math.IsNaN(f64("ttft_ms", 1)))
	assert.True(t, math.IsNaN(f64("first_token_ms", 1)))
	assert.Equal(t, byte(1), c.Data[col["status"].Offset+1])
	assert.Equal(t, int32(-1), i32("reason", 0))
	assert.Equal(t, int32(0), i32("reason", 1))
	assert.Equal(t, []string{"too long"}, c.Reasons)
	assert.Equal(t, int32(-1), i32("turn", 0))
	assert.Equal(t, int32(2), i32("turn", 1))
	assert.True(t, math.IsNaN(f64("transfer_ms", 1)))
}

// A trace's string session ids label the session_id column (its integers index
// Columnar.Sessions); without them the column is the plain nullable integer
// and the header has no sessions.
func TestColumnsSessionNames(t *testing.T) {
	rs := []Record{{RequestID: 0, Status: StatusCompleted, FirstTokenNs: NoTime, SessionID: 1, Worker: -1, PrefillWorker: -1, DecodeWorker: -1}}
	var b ColumnBuilder
	b.Add(rs)
	plain := b.Header()
	assert.Nil(t, plain.Sessions)
	names := []string{"abc"}
	b.SessionNames = func() []string { return names }
	names = append(names, "x y") // the header reads the names as they are when it is made
	h := b.Header()
	assert.Equal(t, []string{"abc", "x y"}, h.Sessions)
	labels := map[string]string{}
	for _, c := range h.Columns {
		if c.Labels != "" {
			labels[c.Name] = c.Labels
		}
	}
	assert.Equal(t, map[string]string{"status": LabelsStatuses, "reason": LabelsReasons, "session_id": LabelsSessions}, labels)
	for _, c := range plain.Columns {
		if c.Name == "session_id" {
			assert.Equal(t, "", c.Labels)
			assert.True(t, c.Nullable)
		}
	}
	// nil names (a trace with integer ids): no labels
	b.SessionNames = func() []string { return nil }
	assert.Nil(t, b.Header().Sessions)
}
