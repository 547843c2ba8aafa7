package replay

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
)

// runChunks replays yml with WithTokenGaps (and, to compare, without).
func runChunks(t *testing.T, yml string) (with, without *report.Report) {
	t.Helper()
	s, err := config.DecodeYAML([]byte(yml))
	require.NoError(t, err)
	with, err = Run(s, WithTokenGaps())
	require.NoError(t, err)
	without, err = Run(s)
	require.NoError(t, err)
	return with, without
}

func msList(ns []int64) []float64 {
	out := make([]float64, len(ns))
	for i, v := range ns {
		out[i] = msOf(v)
	}
	return out
}

// One request of 100 prompt tokens and 4 output tokens on the linear engine
// (pass ms = 2.0 + 0.01 × prompt tokens + 0.1 × decoding requests): the
// prefill pass 0 → 2.0 + 1.0 = 3.0 gives the first token, each decode pass
// 2.0 + 0.1 = 2.1 ms one more: chunks at 3.0, 5.1, 7.2, 9.3 ms, gaps of 2.1.
// A rejected request (longer than max_model_len) has none. The report is
// the same with and without the chunk times.
func TestTokenGapsOfOneRequest(t *testing.T) {
	yml := traceSpec(t, 10, []traceRow{{ts: 0, in: 100, out: 4, hashes: []int{1}}, {ts: 1, in: 900, out: 2, hashes: []int{2}}}, "")
	rep, plain := runChunks(t, yml)
	require.NotNil(t, rep.Chunks)
	assert.Nil(t, plain.Chunks)
	require.Len(t, rep.Chunks.Start, 2)
	got := msList(rep.Chunks.Of(0))
	want := []float64{3.0, 5.1, 7.2, 9.3}
	require.Len(t, got, len(want))
	for i := range want {
		assert.InDelta(t, want[i], got[i], 1e-9, "chunk %d", i)
	}
	assert.Equal(t, report.StatusRejected, rep.Records[1].Status)
	assert.Empty(t, rep.Chunks.Of(1))
	a, _ := rep.JSON()
	b, _ := plain.JSON()
	assert.Equal(t, string(b), string(a))
}

// TensorRT-LLM with stream_interval 2 returns a request's tokens at its
// first iteration, every second one and its last (PyExecutor._handle_responses),
// each return one chunk. One request of 100 + 5 tokens, no overlap
// scheduler: I1 0 → 3.0 (context, token 1 returned), I2 → 5.1 (token 2,
// returned: 2nd iteration), I3 → 7.2 (token 3 held), I4 → 9.3 (tokens 3 and
// 4 returned together), I5 → 11.4 (token 5, the last): chunks at 3.0, 5.1,
// 9.3, 11.4, gaps 2.1, 4.2, 2.1 ms, while the ITL pool keeps the 0 between
// tokens 3 and 4.
func TestTokenGapsJoinTokensReturnedTogether(t *testing.T) {
	yml := fmt.Sprintf(trtllmEngine, "disable_overlap_scheduler: true\n    stream_interval: 2") + fmt.Sprintf(`
traffic:
  source: {type: mooncake, path: %s}
  load: {mode: trace}
`, writeTrace(t, []traceRow{{ts: 0, in: 100, out: 5, hashes: []int{1}}}))
	rep, _ := runChunks(t, yml)
	got := msList(rep.Chunks.Of(0))
	want := []float64{3.0, 5.1, 9.3, 11.4}
	require.Len(t, got, len(want), "%v", got)
	for i := range want {
		assert.InDelta(t, want[i], got[i], 1e-9, "chunk %d", i)
	}
	assert.Equal(t, 5, rep.Records[0].OutputTokens)
	assert.InDelta(t, 0.0, rep.Summary.ITL.Min, 1e-12)
}

// The estimate counts 8 bytes per output token and 12 per request for the
// chunk times: 5 synthetic requests of 4 output tokens, 5 × (8·4 + 12) = 220
// bytes more.
func TestTokenGapsInTheMemoryEstimate(t *testing.T) {
	s, err := config.DecodeYAML([]byte(linearEngineFor(1000) + `
traffic:
  source: {type: synthetic, num_requests: 5, isl: 100, osl: 4}
  load: {mode: concurrency, concurrency: 1}
`))
	require.NoError(t, err)
	plain, err := EstimateMemory(s)
	require.NoError(t, err)
	with, err := EstimateMemory(s, WithTokenGaps())
	require.NoError(t, err)
	assert.Equal(t, int64(220), with.Records-plain.Records)
	assert.Equal(t, int64(220), with.Total-plain.Total)
}
