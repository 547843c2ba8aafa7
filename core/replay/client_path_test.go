package replay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
)

// clientSpec is the linear engine of the worked examples plus engine-level
// extras (indented under engine:) and a traffic block.
func clientSpec(blocks int, engineExtra, traffic string) string {
	return linearEngineFor(blocks) + engineExtra + traffic
}

const detokExample2 = "  detokenization: {base_us: 500, per_token_us: 100}\n"

func example1Rows() []traceRow {
	return []traceRow{{ts: 0, in: 1000, out: 3, hashes: []int{1, 2}}, {ts: 10, in: 100, out: 2, hashes: []int{3}}}
}

func traceTraffic(t *testing.T, rows []traceRow, load string) string {
	return traceTrafficAt(writeTrace(t, rows), load)
}

// traceTrafficAt is the traffic section replaying the Mooncake file at path.
func traceTrafficAt(path, load string) string {
	return fmt.Sprintf("traffic:\n  source: {type: mooncake, path: %s}\n  load: %s\n", path, load)
}

func ttftOf(r report.Record) float64 { v, _ := r.TTFT(); return v }

// asPD turns a spec of the worked-example engine (or the stress spec) into P/D
// disaggregation with one prefill and one decode worker of the same engine.
func asPD(spec string) string {
	const pd = `    disaggregated:
      prefill: {count: 1, tp: 2, placement: least_outstanding}
      decode: {count: 1, tp: 2}
      kv_transfer: {bandwidth_gb_per_s: 50, latency_ms: 0.2}`
	if strings.Contains(spec, "    aggregated: {count: 2, tp: 2, placement: least_outstanding}") {
		return replaceOnce(spec, "    aggregated: {count: 2, tp: 2, placement: least_outstanding}", pd)
	}
	return replaceOnce(spec, "\ntraffic:\n", "\n  workers:\n"+pd+"\ntraffic:\n")
}

// bothModes runs a client-path test in aggregated and in P/D replay: the
// client path must behave the same in both.
func bothModes(t *testing.T, test func(t *testing.T, mode func(string) string)) {
	t.Run("aggregated", func(t *testing.T) { test(t, func(s string) string { return s }) })
	t.Run("disaggregated", func(t *testing.T) { test(t, asPD) })
}

// busyMs is every worker's busy time, in pool order.
func busyMs(rep *report.Report) []float64 {
	var out []float64
	for _, p := range rep.Metadata.Pools {
		out = append(out, p.WorkerBusyMs...)
	}
	return out
}

// Worked example 2: one FIFO detokenization job per pass with outputs.
//
//	pass end 14.00, 1 token: job 0.6 ms → 14.60 (r1 #1)
//	pass end 17.10, 2 tokens: 0.7 ms → 17.80 (r1 #2, r2 #1)
//	pass end 19.30, 2 tokens: 0.7 ms → 20.00 (both responses end)
func TestWorkedExample2_Detokenization(t *testing.T) {
	rep := runYAML(t, clientSpec(1000, detokExample2, traceTraffic(t, example1Rows(), "{mode: trace}")))
	r1, r2 := rep.Records[0], rep.Records[1]
	assert.InDelta(t, 14.60, ttftOf(r1), 1e-12)
	assert.InDelta(t, 20.00, r1.E2E(), 1e-12)
	assert.InDelta(t, 7.80, ttftOf(r2), 1e-12)
	assert.InDelta(t, 10.00, r2.E2E(), 1e-12)
	assert.InDelta(t, 20.00, rep.Summary.DurationMs, 1e-12)
	// the engine's passes are unchanged: 7.12 + 6.88 + 3.10 + 2.20 = 19.30 ms busy
	assert.InDelta(t, 19.30, rep.Metadata.WorkerBusyMs[0], 1e-9)
}

// Queueing: with 2,000 µs per token P3's job takes 4.5 ms (17.10 → 21.60) and
// P4's job waits for it, running 21.60 → 26.10. P2's job: 14.00 → 16.50.
// The engine is not delayed: its passes still end at 19.30.
func TestWorkedExample2_DetokenizationQueues(t *testing.T) {
	rep := runYAML(t, clientSpec(1000, "  detokenization: {base_us: 500, per_token_us: 2000}\n",
		traceTraffic(t, example1Rows(), "{mode: trace}")))
	r1, r2 := rep.Records[0], rep.Records[1]
	assert.InDelta(t, 16.50, ttftOf(r1), 1e-12)
	assert.InDelta(t, 26.10, r1.E2E(), 1e-12)
	assert.InDelta(t, 21.60-10, ttftOf(r2), 1e-12)
	assert.InDelta(t, 26.10-10, r2.E2E(), 1e-12)
	assert.InDelta(t, 19.30, rep.Metadata.WorkerBusyMs[0], 1e-9)
}

// Worked example 3: concurrency 1, r1 alone then r3, detokenization of example 2
// and response_overhead {base 1.0 ms, 100 µs per output token}.
// r1 alone: P1 0 → 7.12, P2 → 14.00 (#1, job → 14.60), P3 decode 2.1 → 16.10
// (#2 → 16.70), P4 → 18.20 (#3 → 18.80). Release = 18.80 + 1.0 + 0.1 × 3 = 20.10,
// and r3 is sent then.
func TestWorkedExample3_ResponseOverheadClosedLoop(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 1000, out: 3, hashes: []int{1, 2}}, {ts: 0, in: 100, out: 2, hashes: []int{3}}}
	rep := runYAML(t, clientSpec(1000, detokExample2, traceTraffic(t, rows,
		"{mode: concurrency, concurrency: 1, response_overhead: {base_ms: 1.0, per_output_token_us: 100}}")))
	r1, r3 := rep.Records[0], rep.Records[1]
	assert.Equal(t, int64(14_600_000), r1.FirstTokenNs)
	assert.Equal(t, int64(18_800_000), r1.EndNs)
	assert.Equal(t, int64(20_100_000), r1.ReleaseNs)
	assert.Equal(t, r1.ReleaseNs, r3.SendNs)
	// r3 alone on an idle worker: prefill 3.00 ms (job 0.6), decode 2.1 (job 0.6)
	assert.Equal(t, int64(20_100_000+3_000_000+600_000), r3.FirstTokenNs)
	assert.Equal(t, int64(20_100_000+5_100_000+600_000), r3.EndNs)
	assert.Equal(t, r3.EndNs+1_200_000, r3.ReleaseNs) // 1.0 + 0.1 × 2
	// duration ends with the last response received, not its overhead
	assert.Equal(t, msOf(r3.EndNs), rep.Summary.DurationMs)
}

// A longer response has a longer overhead: release − end = base + per × tokens.
func TestLongerResponseLongerOverhead(t *testing.T) {
	bothModes(t, func(t *testing.T, mode func(string) string) {
		rows := []traceRow{{ts: 0, in: 100, out: 2, hashes: []int{1}}, {ts: 0, in: 100, out: 40, hashes: []int{2}}}
		rep := runYAML(t, mode(clientSpec(1000, "", traceTraffic(t, rows,
			"{mode: trace, response_overhead: {base_ms: 1.40, per_output_token_us: 3.65}}"))))
		short, long := rep.Records[0], rep.Records[1]
		assert.Equal(t, int64(1_400_000+2*3_650), short.ReleaseNs-short.EndNs)
		assert.Equal(t, int64(1_400_000+40*3_650), long.ReleaseNs-long.EndNs)
	})
}

// A rejected request reaches the client when it ends (at arrival) and waits
// base_ms; its slot stays held until then: at concurrency 2 the third request
// starts only at the rejection's release.
func TestRejectionHoldsSlotUntilOverhead(t *testing.T) {
	bothModes(t, func(t *testing.T, mode func(string) string) {
		rows := []traceRow{
			{ts: 0, in: 2000, out: 10, hashes: []int{1}}, // > max_model_len 1024: rejected
			{ts: 0, in: 100, out: 50, hashes: []int{2}},
			{ts: 0, in: 100, out: 2, hashes: []int{3}},
		}
		spec := clientSpec(1000, "  tokenization: {send_ms: 0.25}\n", traceTraffic(t, rows,
			"{mode: concurrency, concurrency: 2, response_overhead: {base_ms: 1.5, per_output_token_us: 10}}"))
		spec = replaceOnce(spec, "max_model_len: 16000", "max_model_len: 1024")
		rep := runYAML(t, mode(spec))
		rej, third := rep.Records[0], rep.Records[2]
		require.Equal(t, "rejected", rej.Status)
		assert.Equal(t, int64(250_000), rej.ArrivalNs) // send leg 0.25 ms
		assert.Equal(t, rej.ArrivalNs, rej.EndNs)
		assert.Equal(t, rej.EndNs+1_500_000, rej.ReleaseNs) // base only: no output
		assert.Equal(t, rej.ReleaseNs, third.SendNs)
		assert.Equal(t, third.SendNs+250_000, third.ArrivalNs)
		assert.Equal(t, 1, rep.Summary.Rejected)
	})
}

// Zero detokenization cost and zero overhead give exactly pass-end delivery:
// on the Mooncake trace every record equals that of a replay without the blocks.
func TestZeroClientCostsEqualNoClientPath(t *testing.T) {
	bothModes(t, func(t *testing.T, mode func(string) string) {
		base := mode(stressSpec(t))
		off := runYAML(t, base)
		zero := base + "" // engine extras go under engine:, load extras under traffic.load
		zero = replaceOnce(zero, "  scheduler:", "  tokenization: {send_ms: 0}\n  detokenization: {base_us: 0, per_token_us: 0}\n  scheduler:")
		zero = replaceOnce(zero, "load: {mode: trace, speedup: 4}", "load: {mode: trace, speedup: 4, response_overhead: {base_ms: 0, per_output_token_us: 0}}")
		on := runYAML(t, zero)
		require.Equal(t, len(off.Records), len(on.Records))
		for i := range off.Records {
			require.Equal(t, off.Records[i], on.Records[i], "request %d", i)
		}
		assert.Equal(t, off.Summary, on.Summary)
	})
}

// Detokenization delays the client, never the engine: with an expensive output
// processor every token arrives no earlier, and the workers do the same passes.
func TestDetokenizationNeverDelaysEngine(t *testing.T) {
	bothModes(t, func(t *testing.T, mode func(string) string) {
		base := mode(stressSpec(t))
		off := runYAML(t, base)
		on := runYAML(t, replaceOnce(base, "  scheduler:", "  detokenization: {base_us: 800, per_token_us: 40}\n  scheduler:"))
		assert.Equal(t, busyMs(off), busyMs(on))
		later := 0
		for i := range off.Records {
			a, b := off.Records[i], on.Records[i]
			require.Equal(t, a.Status, b.Status)
			require.Equal(t, a.ArrivalNs, b.ArrivalNs)
			assert.GreaterOrEqual(t, b.EndNs, a.EndNs)
			if b.EndNs > a.EndNs {
				later++
			}
		}
		assert.Positive(t, later)
	})
}

// Sessions: turn k+1 is sent at turn k's release + inter_turn_delay_ms; its
// prompt holds the whole conversation so the prefix cache reuses it.
func TestSessionsTurnsChainAndReuse(t *testing.T) {
	bothModes(t, func(t *testing.T, mode func(string) string) {
		rep := runYAML(t, mode(clientSpec(4000, "", `traffic:
  source: {type: sessions, num_sessions: 6, turns: 3, isl: 200, osl: 20}
  load: {mode: concurrency, concurrency: 2, inter_turn_delay_ms: 5, response_overhead: {base_ms: 1, per_output_token_us: 0}}
`)))
		require.Len(t, rep.Records, 18)
		bySession := map[int64][]report.Record{}
		for _, r := range rep.Records {
			bySession[r.SessionID] = append(bySession[r.SessionID], r)
		}
		require.Len(t, bySession, 6)
		for s, turns := range bySession {
			require.Len(t, turns, 3, "session %d", s)
			for k := range turns {
				assert.Equal(t, k, turns[k].Turn)
				// input_k = k × (200 + 20) + 200
				assert.Equal(t, k*220+200, turns[k].InputTokens)
				if k > 0 {
					assert.Equal(t, turns[k-1].ReleaseNs+5_000_000, turns[k].SendNs)
					// the previous prompt and all but the last output token are cached,
					// in whole 16-token blocks, less the block recomputed at the end.
					// In P/D the prefill worker never held the output: its prompt only.
					prevKV := turns[k-1].InputTokens + 19
					if pd := mode("\ntraffic:\n") != "\ntraffic:\n"; pd {
						prevKV = turns[k-1].InputTokens
					}
					assert.Equal(t, min(prevKV/16, (turns[k].InputTokens-1)/16)*16, turns[k].CachedTokens)
				}
			}
		}
		// a closed-loop client runs one session's turns, then the next session:
		// never more than 2 requests in flight
		for _, r := range rep.Records {
			inFlight := 0
			for _, o := range rep.Records {
				if o.SendNs <= r.SendNs && r.SendNs < o.ReleaseNs {
					inFlight++
				}
			}
			assert.LessOrEqual(t, inFlight, 2)
		}
	})
}

// Trace rows with session_id form sessions; a later turn without a timestamp
// waits its row's own delay, which wins over inter_turn_delay_ms (a later
// turn with a timestamp: TestTraceForms_LaterTurnTimestamp).
func TestTraceSessionsWithDelay(t *testing.T) {
	bothModes(t, func(t *testing.T, mode func(string) string) {
		path := writeRaw(t, `{"timestamp": 0, "input_length": 100, "output_length": 2, "session_id": 7}
{"timestamp": 1, "input_length": 50, "output_length": 2}
{"input_length": 150, "output_length": 2, "session_id": 7, "delay": 3.5}
{"input_length": 200, "output_length": 2, "session_id": 7}
`)
		rep := runYAML(t, mode(clientSpec(1000, "", fmt.Sprintf(`traffic:
  source: {type: mooncake, path: %s}
  load: {mode: trace, inter_turn_delay_ms: 1}
`, path))))
		require.Len(t, rep.Records, 4)
		var turns []report.Record
		for _, r := range rep.Records {
			if r.SessionID == 7 {
				turns = append(turns, r)
			}
		}
		require.Len(t, turns, 3)
		assert.Equal(t, int64(0), turns[0].SendNs)
		assert.Equal(t, turns[0].ReleaseNs+3_500_000, turns[1].SendNs) // the row's delay
		assert.Equal(t, turns[1].ReleaseNs+1_000_000, turns[2].SendNs) // inter_turn_delay_ms
		assert.Equal(t, []int{0, 1, 2}, []int{turns[0].Turn, turns[1].Turn, turns[2].Turn})
	})
}

// Go users set the client path with options; bad values are config errors.
func TestOptionsSetClientPath(t *testing.T) {
	s, err := config.DecodeYAML([]byte(clientSpec(1000, "", traceTraffic(t, example1Rows(), "{mode: trace}"))))
	require.NoError(t, err)
	rep, err := Run(s, WithDetokenization(500, 100), WithResponseOverhead(1, 100))
	require.NoError(t, err)
	assert.InDelta(t, 20.00, rep.Summary.DurationMs, 1e-12)
	assert.Equal(t, rep.Records[0].EndNs+1_300_000, rep.Records[0].ReleaseNs)
	_, err = Run(s, WithResponseOverhead(-1, 0))
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "traffic.load.response_overhead.base_ms", ce.Field)
}

// The API server's input processing (engine.tokenization.per_token_us) delays
// a request's arrival by its prompt: with send_ms 0.25 and 2 µs per prompt
// token, the 1,000-token prompt of example 1 (sent at 0) arrives at
// 0.25 + 2·1000/1000 = 2.25 ms and the 100-token one (sent at 10 ms) at
// 10 + 0.25 + 0.2 = 10.45 ms; the send times do not move, so both TTFTs
// include the processing.
func TestInputProcessingDelaysArrivalByPrompt(t *testing.T) {
	bothModes(t, func(t *testing.T, mode func(string) string) {
		rep := runYAML(t, mode(clientSpec(1000, "  tokenization: {send_ms: 0.25, per_token_us: 2}\n",
			traceTraffic(t, example1Rows(), "{mode: trace}"))))
		r1, r2 := rep.Records[0], rep.Records[1]
		assert.Equal(t, int64(0), r1.SendNs)
		assert.Equal(t, int64(2_250_000), r1.ArrivalNs)
		assert.Equal(t, int64(10_000_000), r2.SendNs)
		assert.Equal(t, int64(10_450_000), r2.ArrivalNs)
		assert.GreaterOrEqual(t, r1.FirstTokenNs, r1.ArrivalNs)
	})
}
