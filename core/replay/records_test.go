package replay

import (
	"bytes"
	"testing"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Replays that exercise what the record pages must get right: a warm-up
// phase (its records skipped), rejections with a reason (labels numbered
// across chunks), and sessions (ids out of order, requests finishing long
// after later ones were sent).
var recordColumnsSpecs = map[string]string{
	"closed loop with warm-up": synthetic("num_requests: 300, isl: 30, osl: 3",
		"mode: concurrency, concurrency: 7, warmup_requests: 5", ""),
	// prompts past max_model_len (16,000) are rejected
	"rejections": synthetic("num_requests: 300, isl: {kind: uniform, min: 10, max: 24000}, osl: 3",
		"mode: concurrency, concurrency: 7", ""),
	"sessions": linearEngineFor(1000) + `
traffic:
  source: {type: sessions, num_sessions: 60, turns: {kind: uniform, min: 1, max: 5}, isl: 40, osl: 3}
  load: {mode: concurrency, concurrency: 9}
`,
}

// GIVEN a replay run once keeping Records and once as columns in pages of 8
// records, THEN the columns joined are ToColumns of the Records byte for byte,
// with the same header (reason labels, count).
func TestRecordColumnsAreToColumnsOfTheRecords(t *testing.T) {
	for name, yml := range recordColumnsSpecs {
		t.Run(name, func(t *testing.T) {
			s, err := config.DecodeYAML([]byte(yml))
			require.NoError(t, err)
			held, err := Run(s)
			require.NoError(t, err)
			want := report.ToColumns(held.Records)
			cols, err := Run(s, WithRecordColumns(nil), WithRecordChunks(3))
			require.NoError(t, err)
			require.Nil(t, cols.Records)
			var got bytes.Buffer
			_, err = cols.Columns.WriteTo(&got)
			require.NoError(t, err)
			assert.Equal(t, want.Data, got.Bytes())
			h := cols.Columns.Header()
			assert.Equal(t, want.N, h.N)
			assert.Equal(t, want.Reasons, h.Reasons)
			assert.Equal(t, want.Columns, h.Columns)
			assert.Equal(t, held.Summary, cols.Summary)
		})
	}
	// the specs do what they are here for
	assert.Len(t, runYAML(t, recordColumnsSpecs["closed loop with warm-up"]).Records, 300) // 5 warm-ups besides the 300
	assert.Positive(t, runYAML(t, recordColumnsSpecs["rejections"]).Summary.Rejected)
	s, err := config.DecodeYAML([]byte(recordColumnsSpecs["sessions"]))
	require.NoError(t, err)
	sessions, err := Run(s, WithRecordColumns(nil), WithRecordChunks(3))
	require.NoError(t, err)
	assert.Greater(t, sessions.Columns.Rows(), 100)
	assert.False(t, sessions.Columns.Sorted(), "turns interleave: ids out of send order")
}

// GIVEN a replay streamed in chunks of 8 records, THEN each chunk is the
// columnar form of the next 8 records in send order (the last one the rest),
// the chunks cover every record once, and nothing is kept.
func TestStreamedChunksFollowTheRecords(t *testing.T) {
	yml := synthetic("num_requests: 100, isl: 30, osl: 4", "mode: concurrency, concurrency: 6", "")
	s, err := config.DecodeYAML([]byte(yml))
	require.NoError(t, err)
	held, err := Run(s)
	require.NoError(t, err)
	var rows []int
	from := 0
	emit := func(c report.Chunk, b *report.ColumnBuilder) error {
		want := report.ToColumns(held.Records[from : from+c.Rows])
		assert.Equal(t, want.Data, c.Data, "chunk at %d", from)
		rows = append(rows, c.Rows)
		from += c.Rows
		return nil
	}
	rep, err := Run(s, WithRecordColumns(emit), WithRecordChunks(3))
	require.NoError(t, err)
	// 100 records: 12 chunks of 8, then 4
	assert.Equal(t, []int{8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 4}, rows)
	assert.Equal(t, 100, rep.Columns.Rows())
	assert.True(t, rep.Columns.Sorted())
	var kept bytes.Buffer
	_, err = rep.Columns.WriteTo(&kept)
	require.NoError(t, err)
	assert.Equal(t, report.ColumnsBytes(0), kept.Len(), "a streamed replay keeps no chunk")
}

// GIVEN a sink that fails (a full disk), THEN the replay stops with its error.
func TestAFailingSinkStopsTheReplay(t *testing.T) {
	s, err := config.DecodeYAML([]byte(synthetic("num_requests: 100, isl: 30, osl: 4", "mode: concurrency, concurrency: 6", "")))
	require.NoError(t, err)
	full := assert.AnError
	calls := 0
	_, err = Run(s, WithRecordColumns(func(report.Chunk, *report.ColumnBuilder) error { calls++; return full }), WithRecordChunks(3))
	assert.ErrorIs(t, err, full)
	assert.Equal(t, 1, calls)
}
