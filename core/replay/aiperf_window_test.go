package replay

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
)

// engine1ms is a linear engine of 1 ms + 0.01 ms per prompt token + 0.1 ms
// per decoding request (16-token blocks), the engine the P/D and AIPerf
// examples of this file and disagg_reuse_test.go are worked on.
func engine1ms(blocks int) string {
	return fmt.Sprintf(`
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  perf: {source: linear, base_ms: 1.0, per_prefill_token_ms: 0.01, per_decode_seq_ms: 0.1}
  scheduler: {max_num_batched_tokens: 512, max_num_seqs: 4, block_size: 16, enable_prefix_caching: true, num_gpu_blocks: %d, max_model_len: %d}
`, blocks, min(16*blocks, 40960))
}

// AIPerf's measured window holds its valid records only. Two requests sent at
// 0 on the 1 ms engine: a 100/2-token one and a 100/1000-token one that a
// 10 ms timeout cancels. Pass 1 computes both prompts (1 + 0.01 × 200 =
// 3.0 ms, first tokens), pass 2 decodes both (1 + 0.2 = 1.2 ms): the first
// request ends at 4.2 ms. The window is 4.2 ms and the throughput 1 / 4.2 ms
// = 238.1 req/s; counting the canceled request it was 10.0 ms and 100 req/s.
func TestAIPerfWindowLeavesOutACanceledRequest(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 100, out: 2, hashes: []int{1}}, {ts: 0, in: 100, out: 1000, hashes: []int{2}}}
	rep := runYAML(t, engine1ms(1000)+traceTraffic(t, rows, "{mode: trace, request_timeout_ms: 10}"))
	r1, r2 := rep.Records[0], rep.Records[1]
	require.Equal(t, report.StatusCompleted, r1.Status)
	assert.Equal(t, int64(4_200_000), r1.EndNs)
	require.Equal(t, report.StatusCanceled, r2.Status)
	assert.Equal(t, int64(10_000_000), r2.EndNs)
	s := rep.Summary
	assert.InDelta(t, 4.2, s.DurationMs, 1e-12)
	assert.InDelta(t, 238.095238, *s.RequestThroughputRPS, 1e-6)
	assert.InDelta(t, 2/0.0042, *s.OutputTokenThroughputTPS, 1e-9)
	assert.Equal(t, 0.0, rep.Metadata.WindowStartMs)
	assert.InDelta(t, 0.0042/3600, rep.Metadata.Pools[0].GPUHours, 1e-15)
}

// A rejected request first: the window starts at the first completed
// request's send. A 50,000-token row at 0 (past max_model_len: rejected at
// once), a 100/2 row at 5 ms ending at 5 + 2.0 + 1.1 = 8.1 ms: 3.1 ms.
func TestAIPerfWindowStartsAtTheFirstCompletedSend(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 50_000, out: 2}, {ts: 5, in: 100, out: 2, hashes: []int{1}}}
	rep := runYAML(t, engine1ms(1000)+traceTraffic(t, rows, "{mode: trace}"))
	require.Equal(t, report.StatusRejected, rep.Records[0].Status)
	assert.InDelta(t, 3.1, rep.Summary.DurationMs, 1e-12)
	assert.Equal(t, 5.0, rep.Metadata.WindowStartMs)
}

// Goodput as AIPerf counts it: a record without the SLO's metric is not
// good. A 100/1 request (one token: no inter-token latency) and a 100/2 one,
// sent at 0 and 10 ms: both have TTFT 2.0 ms; the second's TPOT is 1.1 ms.
// Under tpot ≤ 5 ms only the second is good: 1 of 2, over the window 0 →
// 13.1 ms = 76.3 req/s.
func TestGoodputNeedsTheSLOsMetric(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 100, out: 1, hashes: []int{1}}, {ts: 10, in: 100, out: 2, hashes: []int{2}}}
	s, err := config.DecodeYAML([]byte(engine1ms(1000) + traceTraffic(t, rows, "{mode: trace}")))
	require.NoError(t, err)
	bound := 5.0
	rep, err := Run(s, WithSLO(report.SLO{TPOTMs: &bound}))
	require.NoError(t, err)
	g := rep.Summary.Goodput
	require.NotNil(t, g)
	assert.Equal(t, 1, g.GoodRequests)
	assert.InDelta(t, 13.1, rep.Summary.DurationMs, 1e-12)
	assert.InDelta(t, 1/0.0131, *g.GoodputRPS, 1e-9)
	assert.InDelta(t, 0.5, *g.SLOAttainment, 1e-12)
}
