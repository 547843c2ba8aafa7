package replay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aisimulate/aisimulate/core/config"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// warmupSpec: the linear engine (2 ms + 0.01 ms per prompt token + 0.1 ms per
// decode), a closed loop of 2 clients, requests of 100 in / 2 out: one
// warm-up request, then num_requests 2 measured ones (AIPerf's
// --warmup-request-count 1 --request-count 2), three sent.
func warmupSpec(dataset string) string {
	return linearEngineFor(1000) + `
traffic:
  source: {type: synthetic, num_requests: 2, isl: 100, osl: 2` + dataset + `}
  load: {mode: concurrency, concurrency: 2, warmup_requests: 1}
`
}

// GIVEN one warm-up request W and two clients, WHEN W runs alone (client 1
// waits: AIPerf starts profiling only after every warm-up response), THEN
// both measured requests start when W is acted on:
//
//	W: prefill [0, 3.0] (2 + 1.0), decode [3.0, 5.1] (2 + 0.1); window starts at 5.1
//	A, B: prefill together [5.1, 9.1] (2 + 2.0), decode [9.1, 11.3] (2 + 0.2)
//
// so TTFT 4.0 ms, E2E 6.2 ms each, the window 6.2 ms; W is not reported.
func TestWarmupPhaseThenAllClientsAtOnce(t *testing.T) {
	rep := runYAML(t, warmupSpec(""))
	require.Len(t, rep.Records, 2)
	for _, r := range rep.Records {
		assert.InDelta(t, 5.1, msOf(r.SendNs), 1e-9)
		ttft, _ := r.TTFT()
		assert.InDelta(t, 4.0, ttft, 1e-9)
		assert.InDelta(t, 6.2, r.E2E(), 1e-9)
	}
	assert.Equal(t, int64(1), rep.Records[0].RequestID)
	assert.Equal(t, 2, rep.Summary.Completed)
	assert.InDelta(t, 6.2, rep.Summary.DurationMs, 1e-9)
	assert.InDelta(t, 2/6.2e-3, *rep.Summary.RequestThroughputRPS, 1e-6)
	assert.Equal(t, 1, rep.Metadata.WarmupRequests)
	require.NotNil(t, rep.Metadata.WarmupEndMs)
	assert.InDelta(t, 5.1, *rep.Metadata.WarmupEndMs, 1e-9)
}

// The warm-up fills the prefix cache: with one dataset entry every request
// sends the same prompt, so A and B find W's 6 full blocks (96 tokens) and
// compute 4 tokens each: prefill [5.1, 7.18] (2 + 0.08), TTFT 2.08 ms.
func TestWarmupFillsThePrefixCache(t *testing.T) {
	rep := runYAML(t, warmupSpec(", dataset: {entries: 1}"))
	require.Len(t, rep.Records, 2)
	for _, r := range rep.Records {
		assert.Equal(t, 96, r.CachedTokens)
		ttft, _ := r.TTFT()
		assert.InDelta(t, 2.08, ttft, 1e-9)
	}
}

// warmup_requests belongs to a closed loop or a rate (before it, from a
// synthetic source), not to a trace's timestamps.
func TestWarmupNeedsConcurrencyOrARate(t *testing.T) {
	yml := replaceOnce(warmupSpec(""), "load: {mode: concurrency, concurrency: 2, warmup_requests: 1}",
		"load: {mode: trace, warmup_requests: 1}")
	_, err := decodeForTest(yml)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "traffic.load.warmup_requests: belongs to mode rate or concurrency, not trace")
	yml = replaceOnce(linearEngineFor(100)+"traffic:\n  source: {type: sessions, num_sessions: 2, turns: 2, isl: 10, osl: 2}\n  load: {mode: rate, rate_rps: 1, warmup_requests: 1}\n",
		"", "")
	_, err = decodeForTest(yml)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "traffic.load.warmup_requests: a warm-up before a rate belongs to a synthetic source")
}

// The warm-up requests are sent besides the measured ones, as AIPerf's
// --warmup-request-count W --request-count N sends W, then N: num_requests 2
// with 3 warm-ups generates 5 requests, ids 0-2 the warm-up, 3 and 4
// reported; stop.max_requests 1 counts measured requests: 3 warm-ups, then
// request 3 alone.
func TestWarmupIsSentBesidesTheMeasuredCount(t *testing.T) {
	three := replaceOnce(warmupSpec(""), "warmup_requests: 1}", "warmup_requests: 3}")
	rep := runYAML(t, three)
	require.Len(t, rep.Records, 2)
	assert.Equal(t, []int64{3, 4}, []int64{rep.Records[0].RequestID, rep.Records[1].RequestID})
	assert.Equal(t, 3, rep.Metadata.WarmupRequests)
	assert.Equal(t, 2, rep.Summary.Completed)

	rep = runYAML(t, three+"  stop: {max_requests: 1}\n")
	require.Len(t, rep.Records, 1)
	assert.Equal(t, int64(3), rep.Records[0].RequestID)
	assert.Equal(t, 3, rep.Metadata.WarmupRequests)
}

// A trace's rows are counted only as it is read: two rows and a warm-up of
// two (or more) end in the same error at the end of the replay, naming the
// trace.
func TestWarmupTakingAWholeTraceIsAnError(t *testing.T) {
	trace := writeRaw(t, `{"input_length": 100, "output_length": 2}`+"\n"+`{"input_length": 100, "output_length": 2}`+"\n")
	for _, w := range []string{"2", "5"} {
		yml := linearEngineFor(1000) + `
traffic:
  source: {type: mooncake, path: ` + trace + `}
  load: {mode: concurrency, concurrency: 2, warmup_requests: ` + w + `}
`
		s, err := config.DecodeYAML([]byte(yml))
		require.NoError(t, err)
		_, err = Run(s)
		require.Error(t, err)
		var cerr *config.Error
		require.ErrorAs(t, err, &cerr)
		assert.Equal(t, "traffic.load.warmup_requests", cerr.Field)
		assert.Equal(t, "all 2 requests the replay sent were warm-up requests (the trace "+trace+
			" has no more rows), leaving none to measure: lower it below the request count", cerr.Msg)
	}
}

func decodeForTest(yml string) (any, error) {
	return config.DecodeYAML([]byte(yml))
}

// GIVEN one warm-up request W of 5 output tokens and two measured ones, A
// and B, WHEN the replay pools the gaps between tokens, THEN W's gaps are not
// in itl_ms, whether its tokens come one by one or steadily in aggregate
// (tokens 3 and 4 of each request, engine/steady.go):
//
//	W: prefill [0, 3.0] (2 + 1.0), 4 decodes of 2.1 ms (2 + 0.1): tokens at
//	   3.0, 5.1, 7.2, 9.3, 11.4; acted on at 11.4 (gaps 2.1 ms: not measured)
//	A, B: prefill together [11.4, 15.4] (2 + 2.0), 4 decodes of 2.2 ms
//	   (2 + 0.2): tokens at 15.4, 17.6, 19.8, 22.0, 24.2
//
// so itl_ms is 8 gaps of 2.2 ms (mean, min, max, every percentile 2.2, std
// 0), and TPOT is (24.2 − 15.4) / 4 = 2.2 ms for both. Pooling W's two steady
// gaps would make the minimum 2.1 and the mean (8·2.2 + 2·2.1) / 10 = 2.18.
func TestWarmupGapsAreNotInITL(t *testing.T) {
	yml := replaceOnce(warmupSpec(""), "osl: 2", "osl: 5")
	for _, opts := range [][]Option{nil, {WithPerTokenDecode()}} {
		s, err := config.DecodeYAML([]byte(yml))
		require.NoError(t, err)
		rep, err := Run(s, opts...)
		require.NoError(t, err)
		require.Len(t, rep.Records, 2)
		for _, r := range rep.Records {
			assert.InDelta(t, 11.4, msOf(r.SendNs), 1e-9)
			assert.InDelta(t, 15.4, msOf(r.FirstTokenNs), 1e-9)
			assert.InDelta(t, 24.2, msOf(r.EndNs), 1e-9)
		}
		itl := rep.Summary.ITL
		require.NotNil(t, itl)
		for name, v := range map[string]float64{"mean": itl.Mean, "min": itl.Min, "max": itl.Max, "p50": itl.P50, "p99": itl.P99} {
			assert.InDelta(t, 2.2, v, 1e-9, "itl_ms %s (per-token decode: %v)", name, opts != nil)
		}
		assert.InDelta(t, 0, itl.Std, 1e-9)
		assert.InDelta(t, 2.2, rep.Summary.TPOT.Mean, 1e-9)
	}
}

// traffic.stop.max_duration_s counts the measured phase only, as AIPerf's
// --benchmark-duration is the profiling phase's: with 100 requests to send,
// one warm-up W and a limit of 7 ms (warmupSpec's times):
//
//	W: [0, 5.1]; the measured phase starts at 5.1, no send from 12.1 on
//	A, B: sent at 5.1, prefill [5.1, 9.1], decode [9.1, 11.3]
//	C, D: sent at 11.3 (< 12.1), prefill [11.3, 15.3], decode [15.3, 17.5]
//	the next two would be sent at 17.5 ≥ 12.1: not sent
//
// so 4 measured requests (counting from 0, the limit would end at 7 ms and
// leave A and B only).
func TestMaxDurationCountsFromTheWarmupsEnd(t *testing.T) {
	yml := replaceOnce(warmupSpec(""), "num_requests: 2", "num_requests: 100") + "  stop: {max_duration_s: 0.007}\n"
	rep := runYAML(t, yml)
	require.Len(t, rep.Records, 4)
	for i, want := range []float64{5.1, 5.1, 11.3, 11.3} {
		assert.InDelta(t, want, msOf(rep.Records[i].SendNs), 1e-9)
	}
	assert.InDelta(t, 17.5, msOf(rep.Records[3].EndNs), 1e-9)
	require.NotNil(t, rep.Metadata.WarmupEndMs)
	assert.InDelta(t, 5.1, *rep.Metadata.WarmupEndMs, 1e-9)
	assert.Equal(t, 4, rep.Summary.Completed)
}

// A trace's first W rows are the warm-up, and a multi-turn session cannot be
// split between the warm-up and the measured requests: three sessions of two
// turns (rows 1-3 the first turns, 4-6 the second) and warmup_requests 1
// are refused, naming the field (the replay reported only row 4 before,
// dropping 4 of the 5 measured rows). Without the warm-up all 6 run; with
// one-turn sessions the warm-up is row 1 and the other 5 are reported.
func TestWarmupOnATraceWithMultiTurnSessionsIsRefused(t *testing.T) {
	var rows, single strings.Builder
	for turn := 0; turn < 2; turn++ {
		for s := 0; s < 3; s++ {
			when := `"timestamp": 0`
			if turn > 0 {
				when = `"delay": 10`
			}
			fmt.Fprintf(&rows, `{"session_id": %d, %s, "input_length": 100, "output_length": 5}`+"\n", s, when)
			fmt.Fprintf(&single, `{"session_id": %d, "timestamp": 0, "input_length": 100, "output_length": 5}`+"\n", 3*turn+s)
		}
	}
	spec := func(trace string, w int) string {
		return linearEngineFor(1000) + fmt.Sprintf(`
traffic:
  source: {type: mooncake, path: %s}
  load: {mode: concurrency, concurrency: 3, warmup_requests: %d}
`, trace, w)
	}
	trace := writeRaw(t, rows.String())
	assert.Equal(t, 6, runYAML(t, spec(trace, 0)).Summary.Completed)
	_, err := runErr(t, spec(trace, 1))
	var cerr *config.Error
	require.ErrorAs(t, err, &cerr)
	assert.Equal(t, "traffic.load.warmup_requests", cerr.Field)
	assert.Contains(t, cerr.Msg, "warm-up request 0 ("+trace+" line 1) starts a session with later turns (line 4)")

	rep := runYAML(t, spec(writeRaw(t, single.String()), 1))
	assert.Equal(t, 5, rep.Summary.Completed)
	assert.Equal(t, 1, rep.Metadata.WarmupRequests)
}
