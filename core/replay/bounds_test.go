package replay

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
	"github.com/aisimulate/aisimulate/core/workload"
)

// runErr decodes a YAML spec and replays it, returning the replay's error.
func runErr(t *testing.T, yml string) (*report.Report, error) {
	t.Helper()
	s, err := config.DecodeYAML([]byte(yml))
	require.NoError(t, err)
	return Run(s)
}

// withinSeconds fails the test if f takes longer than limit: the cases below
// used to spin forever, so a regression must fail, not hang the suite.
func withinSeconds(t *testing.T, limit time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("still running after %v", limit)
	}
}

// A trace row whose lengths are near int64's top used to wrap prompt + output
// to a negative number, pass the max_model_len check and be preempted and
// recomputed forever. Each is now rejected as longer than max_model_len
// (40,960 for Qwen3-32B), aggregated and P/D, as vLLM rejects it.
func TestHugeLengthsAreRejectedNotWrapped(t *testing.T) {
	for _, row := range [][2]int{{math.MaxInt64, 1}, {10, math.MaxInt64}, {1 << 62, 1 << 62}, {math.MaxInt64, math.MaxInt64}} {
		trace := writeRaw(t, fmt.Sprintf(`{"timestamp": 0, "input_length": %d, "output_length": %d, "hash_ids": [1]}`+"\n"+
			`{"timestamp": 1, "input_length": 100, "output_length": 2}`+"\n", row[0], row[1]))
		src := fmt.Sprintf("traffic:\n  source: {type: mooncake, path: %s}\n  load: {mode: trace}\n", trace)
		for name, eng := range map[string]string{"aggregated": linearEngineFor(1000), "pd": pdEngine(1000, 50, "")} {
			t.Run(fmt.Sprintf("%s/%d+%d", name, row[0], row[1]), func(t *testing.T) {
				withinSeconds(t, 20*time.Second, func() {
					rep, err := runErr(t, eng+src)
					require.NoError(t, err)
					require.Len(t, rep.Records, 2)
					r := rep.Records[0]
					assert.Equal(t, report.StatusRejected, r.Status)
					assert.Equal(t, fmt.Sprintf("prompt (%d) + output (%d) tokens exceed max_model_len (16000)", row[0], row[1]), r.Reason)
					assert.Equal(t, report.StatusCompleted, rep.Records[1].Status, "the next row still runs")
				})
			})
		}
	}
}

// oneSession is the linear engine serving one session of turns turns of isl
// new input and osl output tokens each, from one client.
func oneSession(turns, isl, osl int) string {
	return linearEngineFor(1000) + fmt.Sprintf(`
traffic:
  source: {type: sessions, num_sessions: 1, turns: %d, isl: %d, osl: %d}
  load: {mode: concurrency, concurrency: 1}
`, turns, isl, osl)
}

// A session whose conversation grows past int64 (2^61 new tokens a turn)
// used to wrap to a short prompt; its turns are rejected instead.
func TestSessionHistoryDoesNotWrap(t *testing.T) {
	withinSeconds(t, 20*time.Second, func() {
		rep, err := runErr(t, oneSession(8, 1<<61, 1))
		require.NoError(t, err)
		require.Len(t, rep.Records, 8)
		// turn k's prompt is (k + 1) · 2^61 (the rejected turns before it
		// produced nothing) until it passes 2^63 − 1 at k = 3, then stays at
		// math.MaxInt (saturated, never negative)
		for k, r := range rep.Records {
			assert.Equal(t, report.StatusRejected, r.Status)
			want := math.MaxInt
			if k < 3 {
				want = (k + 1) << 61
			}
			assert.Equal(t, want, r.InputTokens, "turn %d", k)
		}
	})
}

// The block hashes of a prompt are built only for a request that can run:
// a sessions source of one billion-token prompt used to hash 62.5M blocks
// (1 GB) before rejecting it. Rejected at once, with no hashes.
func TestNoHashesForARequestThatCannotRun(t *testing.T) {
	spec := oneSession(1, 1_000_000_000, 1)
	withinSeconds(t, 10*time.Second, func() {
		rep, err := runErr(t, spec)
		require.NoError(t, err)
		require.Len(t, rep.Records, 1)
		assert.Equal(t, report.StatusRejected, rep.Records[0].Status)
	})
	// canRun, which gates the hashing, says no to it (and yes to 100 tokens).
	s, err := config.DecodeYAML([]byte(spec))
	require.NoError(t, err)
	m := buildSim(t, s)
	r := workload.Request{InputTokens: 1_000_000_000, OutputTokens: 1, ContentKey: 7, SessionID: 0}
	assert.False(t, m.canRun(&r))
	r.InputTokens = 100
	assert.True(t, m.canRun(&r))
}

// buildSim makes the sim of a spec without running it.
func buildSim(t *testing.T, s *config.Spec) *sim {
	t.Helper()
	dep, err := buildDeployment(s, nil)
	require.NoError(t, err)
	m := &sim{spec: s, dep: dep}
	for _, p := range dep.pools {
		rt := &poolRT{pool: p, first: len(m.workers)}
		w, err := dep.family.NewWorker(p.cfg, p.perf)
		require.NoError(t, err)
		m.workers = append(m.workers, w)
		m.pools = append(m.pools, rt)
	}
	return m
}

// Costs each within its documented limit can still carry the clock past its
// range (int64 ns) over a long run: the replay stops with an error naming the
// field, instead of wrapping the clock and panicking "INV-3 clock went back".
func TestClockHorizon(t *testing.T) {
	linear := func(base, perToken, perDecode string) string {
		return fmt.Sprintf(`
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  perf: {source: linear, base_ms: %s, per_prefill_token_ms: %s, per_decode_seq_ms: %s}
  scheduler: {num_gpu_blocks: 100000}
`, base, perToken, perDecode)
	}
	cases := []struct {
		name, spec, field, msg string
	}{
		// 1e9 ms = 1e15 ns a pass; 2^60 ns = 1,152,921,504,606,846,976 ns holds
		// 1152 passes (1.152e18 ns); the 1153rd would end past it.
		{"a pass", linear("1e9", "0", "0") + `
traffic:
  source: {type: synthetic, num_requests: 1, isl: 10, osl: 10000}
  load: {mode: concurrency, concurrency: 1}
`, "engine.perf", "at 1.152e+09 s (36.5 years): a pass of worker 0 lasts 1e+06 s"},
		// each turn waits 1e9 ms = 1e15 ns after the previous release, so turn
		// k is sent at k·1e15 ns plus k passes of 2.01 ms: turn 1152 at
		// 1.152e18 < 2^60 ≈ 1.1529e18, turn 1153 at 1.153e18 past it
		{"inter-turn delays", linear("2", "0.01", "0.1") + `
traffic:
  source: {type: sessions, num_sessions: 1, turns: 2000, isl: 1, osl: 1}
  load: {mode: concurrency, concurrency: 1, inter_turn_delay_ms: 1e9}
`, "traffic.load.inter_turn_delay_ms", "session 0's turn 1153 is sent 1e+06 s after the previous turn's release"},
		{"response overheads", linear("2", "0.01", "0.1") + `
traffic:
  source: {type: synthetic, num_requests: 2000, isl: 1, osl: 1}
  load: {mode: concurrency, concurrency: 1, response_overhead: {base_ms: 1e9, per_output_token_us: 0}}
`, "traffic.load.response_overhead", "a response's overhead ends 1e+06 s after it"},
		{"send legs", linear("2", "0.01", "0.1") + `  tokenization: {send_ms: 1e9}
traffic:
  source: {type: sessions, num_sessions: 1, turns: 2000, isl: 1, osl: 1}
  load: {mode: concurrency, concurrency: 1}
`, "engine.tokenization.send_ms", "a request's send leg lasts 1e+06 s"},
		// one request per 1e6 s, request k at k·1e15 ns: k = 1153 passes 2^60 ns
		{"arrivals", linear("2", "0.01", "0.1") + `
traffic:
  source: {type: synthetic, num_requests: 100000, isl: 1, osl: 1}
  load: {mode: rate, rate_rps: 1e-6, arrival: constant}
`, "traffic.load.rate_rps", "the next request is sent at 1.153e+09 s (36.5 years)"},
		{"KV transfers", linear("2", "0.01", "0.1") + `  workers:
    disaggregated:
      prefill: {count: 1}
      decode: {count: 1}
      kv_transfer: {bandwidth_gb_per_s: 50, latency_ms: 1e9, kv_bytes_per_token: 1000}
traffic:
  source: {type: synthetic, num_requests: 2000, isl: 1, osl: 2}
  load: {mode: concurrency, concurrency: 1}
`, "engine.workers.disaggregated.kv_transfer", "a KV transfer lasts 1e+06 s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			withinSeconds(t, 30*time.Second, func() {
				_, err := runErr(t, tc.spec)
				var ce *config.Error
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, tc.field, ce.Field)
				assert.Contains(t, ce.Msg, "the replay would run past the end of the virtual clock (2^60 ns, 36.5 years of simulated time)")
				assert.Contains(t, ce.Msg, tc.msg)
			})
		})
	}
}

// A trace row's own delay is named by file and line.
func TestTraceDelayPastTheClock(t *testing.T) {
	// 9.2e12 ms = 9.2e18 ns, past 2^60 on its own (and past 2^62: saturated)
	trace := writeRaw(t, `{"timestamp": 0, "input_length": 10, "output_length": 1, "session_id": 0}`+"\n"+
		`{"timestamp": 0, "input_length": 10, "output_length": 1, "session_id": 0, "delay": 9.2e12}`+"\n")
	_, err := runErr(t, linearEngineFor(1000)+fmt.Sprintf(`
traffic:
  source: {type: mooncake, path: %s}
  load: {mode: concurrency, concurrency: 1}
`, trace))
	var de *workload.DataError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, 2, de.Line)
	assert.Equal(t, "delay", de.Field)
	assert.Contains(t, de.Msg, "session 0's turn 1 would be sent at")
}

// A deployment whose GPU memory leaves no KV block names the setting to
// change: a tiny gpu_memory_utilization used to be blamed on tp.
func TestMemoryErrorNamesTheCulprit(t *testing.T) {
	spec := func(model, scheduler string) string {
		return fmt.Sprintf(`
engine:
  model: %s
  system: h100_sxm
  scheduler: {%s}
traffic:
  source: {type: synthetic, num_requests: 1, isl: 10, osl: 1}
  load: {mode: concurrency, concurrency: 1}
`, model, scheduler)
	}
	cases := []struct{ name, model, scheduler, field string }{
		// 1e-9 × 80 GiB = 86 bytes usable; Qwen3-8B fits in the whole 80 GiB
		{"utilization", "Qwen/Qwen3-8B", "gpu_memory_utilization: 1.0e-9", "engine.scheduler.gpu_memory_utilization"},
		// Llama-3.1-70B in bf16: ≈ 141 GB of weights on one 80 GiB GPU
		{"weights", "meta-llama/Llama-3.1-70B-Instruct", "", "engine.workers.aggregated.tp"},
		// Qwen3-32B: 65.5 GB of weights + 3.5 GiB reserved fit in 80 GiB with the
		// 70 MiB activation floor, but 2^24 batched tokens need 2 · 2^24 · 8192 ·
		// 11 bytes ≈ 3.0 TB of activations
		{"activations", "Qwen/Qwen3-32B", "max_num_batched_tokens: 16777216", "engine.scheduler.max_num_batched_tokens"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runErr(t, spec(tc.model, tc.scheduler))
			var ce *config.Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.field, ce.Field)
			assert.Contains(t, ce.Msg, "does not fit")
		})
	}
}
