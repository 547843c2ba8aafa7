package replay

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedLoopEngine is worked example 2's output processor (500 µs + 100 µs
// per token) with 10 µs of input processing per prompt token on the same
// event loop (engine.tokenization.shared_event_loop).
const sharedLoopEngine = detokExample2 +
	"  tokenization: {send_ms: 0, per_token_us: 10, shared_event_loop: true}\n"

// The worked example of docs/design.md ("The client path"), on the linear
// engine: r1 (1,000 prompt tokens, 3 out) sent at 0, r2 (100, 2) at 24.2 ms,
// r3 (2,000, 2) at 26.0 ms, one API server loop.
//
//	r1 intake 0 → 10.0; P1 10.0 → 17.12; P2 → 24.00 (r1 #1), job 24.00 → 24.60
//	r2 reaches the loop at 24.2, waits for P2's job: intake 24.60 → 25.60
//	P3 24.00 → 26.10 (r1 #2); r3 at 26.0 finds the loop idle: intake 26.0 → 46.0
//	P3's job waits for r3's intake: 46.0 → 46.6; P4 26.10 → 29.20 (r1 #3 and
//	r2 #1), job 46.6 → 47.3; P5 29.20 → 31.30 (r2 #2), job 47.3 → 47.9
//	r3 at the engine at 46.0: P6 → 53.12, P7 → 60.24, P8 → 67.36, P9 (464)
//	→ 74.00 (#1, job → 74.60), P10 → 76.10 (#2, job → 76.70)
//
// Without the shared loop r2 would reach the engine at 25.20 (same pass) and
// r1's second token would be received at 26.70.
func TestSharedLoopWorkedExample(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 1000, out: 3, hashes: []int{1, 2}}, {ts: 24.2, in: 100, out: 2, hashes: []int{3}},
		{ts: 26.0, in: 2000, out: 2, hashes: []int{4, 5, 6, 7}}}
	rep := runYAML(t, clientSpec(1000, sharedLoopEngine, traceTraffic(t, rows, "{mode: trace}")))
	require.Len(t, rep.Records, 3)
	r1, r2, r3 := rep.Records[0], rep.Records[1], rep.Records[2]
	assert.Equal(t, int64(10_000_000), r1.ArrivalNs)
	assert.Equal(t, int64(24_600_000), r1.FirstTokenNs)
	assert.Equal(t, int64(46_600_000), r1.SecondTokenNs)
	assert.Equal(t, int64(47_300_000), r1.EndNs)
	assert.Equal(t, int64(25_600_000), r2.ArrivalNs)
	assert.Equal(t, int64(47_300_000), r2.FirstTokenNs)
	assert.Equal(t, int64(47_900_000), r2.EndNs)
	assert.Equal(t, int64(46_000_000), r3.ArrivalNs)
	assert.Equal(t, int64(74_600_000), r3.FirstTokenNs)
	assert.Equal(t, int64(76_700_000), r3.EndNs)
	// the engine is not delayed by the loop: P1 … P10 are 66.1 ms of passes
	assert.InDelta(t, 7.12+6.88+2.1+3.1+2.1+7.12*3+6.64+2.1, rep.Metadata.WorkerBusyMs[0], 1e-9)

	// the same with the intake beside the loop: r2 reaches the engine at
	// 24.2 + 1.0 and r1's second token comes with P3's own job
	rep = runYAML(t, clientSpec(1000, replaceOnce(sharedLoopEngine, "shared_event_loop: true", "shared_event_loop: false"),
		traceTraffic(t, rows, "{mode: trace}")))
	assert.Equal(t, int64(25_200_000), rep.Records[1].ArrivalNs)
	assert.Equal(t, int64(26_700_000), rep.Records[0].SecondTokenNs)
}
