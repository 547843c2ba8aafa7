package replay

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/workload"
)

// clockEngine prices every pass at 1 ms + 0.01 ms per prompt token computed
// (decodes cost nothing more), one worker, a roomy cache.
const clockEngine = `
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  perf: {source: linear, base_ms: 1, per_prefill_token_ms: %v, per_decode_seq_ms: 0}
  scheduler: {max_num_batched_tokens: 2048, max_num_seqs: 8, block_size: 16, num_gpu_blocks: 1000, max_model_len: 16000}
traffic:
  source: {type: mooncake, path: %s}
  load: %s
`

func clockSpec(t *testing.T, perToken float64, rows, load string) string {
	return fmt.Sprintf(clockEngine, perToken, writeRaw(t, rows), load)
}

// requireDataError asserts err is a *workload.DataError on line and field.
func requireDataError(t *testing.T, err error, line int, field string) *workload.DataError {
	t.Helper()
	var de *workload.DataError
	require.True(t, errors.As(err, &de), "got %v", err)
	assert.Equal(t, line, de.Line)
	assert.Equal(t, field, de.Field)
	return de
}

// Two rows of 64 in / 5 out at 60,000 ms, 1 ms per pass: both prefill in pass
// 1 (first tokens at 1 ms), then 4 decode passes: the last response at 5 ms.
// The trace's clock starts at its first row, so the window is 5 ms and the
// throughput 2 / 5 ms = 400 req/s, not 2 / 60.005 s. The same rows at 0, and
// at the epoch millisecond 1715299200000, replay the same; the metadata
// states the offset removed.
func TestTraceClock_StartsAtTheFirstRow(t *testing.T) {
	rows := func(ts string) string {
		row := `{"timestamp": ` + ts + `, "input_length": 64, "output_length": 5, "hash_ids": [%d]}` + "\n"
		return fmt.Sprintf(row, 1) + fmt.Sprintf(row, 2)
	}
	base := runYAML(t, clockSpec(t, 0, rows("0"), "{mode: trace}"))
	for _, ts := range []string{"60000", "1715299200000"} {
		rep := runYAML(t, clockSpec(t, 0, rows(ts), "{mode: trace}"))
		assert.Equal(t, 5.0, rep.Summary.DurationMs, ts)
		assert.Equal(t, 400.0, *rep.Summary.RequestThroughputRPS, ts)
		assert.Equal(t, base.Records, rep.Records, ts)
		assert.Equal(t, base.Summary, rep.Summary, ts)
		assert.Equal(t, ts, string(rep.Metadata.TraceTimeOriginMs))
		assert.Equal(t, 0.0, rep.Metadata.WindowStartMs)
	}
}

// A real overflow (rows 1.2e9 ms apart replayed at speedup 1e-6: 1.2e15 ms,
// past the 2^60 ns clock) names the time origin, not a raw epoch timestamp.
func TestTraceClock_OverflowNamesTheOrigin(t *testing.T) {
	rows := `{"timestamp": 1715299200000, "input_length": 8, "output_length": 1}` + "\n" +
		`{"timestamp": 1716499200000, "input_length": 8, "output_length": 1}` + "\n"
	de := requireDataError(t, startErr(t, clockSpec(t, 0, rows, "{mode: trace, speedup: 0.000001}")), 2, "timestamp")
	assert.Contains(t, de.Msg, "1.2e+06 s after the time origin (the trace's first timestamp, 1715299200000 ms)")
	assert.Contains(t, de.Msg, "at speedup 1e-06")
}

// The window runs from the first request sent (AIPerf's benchmark duration):
// a Poisson load sends its first request after a random gap, which the
// window leaves out.
func TestTraceClock_WindowFromFirstSend(t *testing.T) {
	rep := runYAML(t, linearEngineFor(2000)+`
traffic:
  source: {type: synthetic, num_requests: 20, isl: 100, osl: 4}
  load: {mode: rate, rate_rps: 50, arrival: poisson}
`)
	first, last := rep.Records[0].SendNs, int64(0)
	for _, r := range rep.Records {
		first, last = min(first, r.SendNs), max(last, r.EndNs)
	}
	require.Positive(t, first)
	assert.Equal(t, msOf(last-first), rep.Summary.DurationMs)
	assert.Equal(t, msOf(first), rep.Metadata.WindowStartMs)
	assert.InDelta(t, 20/(float64(last-first)/1e9), *rep.Summary.RequestThroughputRPS, 1e-9)
}

// AIPerf's trace forms, 1 ms + 0.01 ms per prompt token.
//
// Without timestamps, a closed loop of one client: request 0 (100 in, 2 out)
// is sent at 0, prefills in 1 + 1.00 ms and decodes once: ends at 3 ms;
// request 1 (50 in, 3 out) is sent at 3, prefills in 1.5 ms (4.5) and decodes
// twice: ends at 6.5 ms. At a constant 100 req/s the sends are 0 and 10 ms.
// In trace mode the same file is refused, naming its line.
func TestTraceForms_NoTimestamp(t *testing.T) {
	rows := `{"input_length": 100, "output_length": 2}` + "\n" + `{"input_length": 50, "output_length": 3}` + "\n"
	rep := runYAML(t, clockSpec(t, 0.01, rows, "{mode: concurrency, concurrency: 1}"))
	require.Len(t, rep.Records, 2)
	assert.Equal(t, []float64{0, 3}, []float64{msOf(rep.Records[0].SendNs), msOf(rep.Records[1].SendNs)})
	assert.InDelta(t, 3.0, msOf(rep.Records[0].EndNs), 1e-9)
	assert.InDelta(t, 6.5, msOf(rep.Records[1].EndNs), 1e-9)
	assert.Empty(t, rep.Metadata.TraceTimeOriginMs, "no timestamp, no origin")

	rep = runYAML(t, clockSpec(t, 0.01, rows, "{mode: rate, rate_rps: 100, arrival: constant}"))
	assert.Equal(t, []float64{0, 10}, []float64{msOf(rep.Records[0].SendNs), msOf(rep.Records[1].SendNs)})

	de := requireDataError(t, startErr(t, clockSpec(t, 0.01, rows, "{mode: trace}")), 1, "timestamp")
	assert.Contains(t, de.Msg, "missing: load mode trace sends each request at its timestamp")
}

// String session ids and a later turn with only a delay, in trace mode.
// chat-1 turn 0 is sent at 0 (its timestamp 1000 is the origin): prefill of
// 100 tokens 1 + 1 ms, one decode: ends at 3 ms. chat-2 is sent at 4 ms
// (1004 − 1000): 50 tokens, 1.5 ms, one output token: ends at 5.5 ms. chat-1
// turn 1 has no timestamp: it is sent at chat-1's end (3 ms, no response
// overhead) + its delay of 10 ms = 13 ms; 300 new-content tokens, 1 + 3 ms,
// one decode: ends at 18 ms. Sessions are numbered in order of appearance.
func TestTraceForms_StringSessionsAndDelayOnlyTurns(t *testing.T) {
	rows := `{"timestamp": 1000, "input_length": 100, "output_length": 2, "session_id": "chat-1"}` + "\n" +
		`{"timestamp": 1004, "input_length": 50, "output_length": 1, "session_id": "chat-2"}` + "\n" +
		`{"input_length": 300, "output_length": 2, "session_id": "chat-1", "delay": 10}` + "\n"
	rep := runYAML(t, clockSpec(t, 0.01, rows, "{mode: trace}"))
	require.Len(t, rep.Records, 3)
	type send struct {
		id, session   int64
		turn          int
		sendMs, endMs float64
	}
	var got []send
	for _, r := range rep.Records {
		got = append(got, send{r.RequestID, r.SessionID, r.Turn, msOf(r.SendNs), msOf(r.EndNs)})
	}
	assert.Equal(t, []send{{0, 0, 0, 0, 3}, {1, 1, 0, 4, 5.5}, {2, 0, 1, 13, 18}}, got)
	assert.Equal(t, []string{"chat-1", "chat-2"}, rep.Metadata.TraceSessionIDs)
	assert.Equal(t, 18.0, rep.Summary.DurationMs)
}

// A later session turn with a timestamp, in trace mode, is sent as AIPerf's
// fixed schedule sends it: at its timestamp, or at once when the previous
// turn's response is acted on later than that (1 ms + 0.01 ms per prompt
// token, no response overhead). Turn 0 (ts 1000, the origin) is sent at 0:
// 100 tokens prefill in 2 ms, one decode: ends at 3 ms. Turn 1 (ts 1020, and a
// delay of 10 ms, which the timestamp overrides) is sent at 20 ms, not at
// 3 + 10 = 13: 300 tokens in 4 ms, one decode: ends at 25 ms. Turn 2 (ts
// 1021) is due at 21 ms, before turn 1 ended: sent at 25 ms; 50 tokens in
// 1.5 ms: ends at 26.5 ms. A lone row at 1030 is sent at 30 ms and ends at
// 30 + 1.5 = 31.5 ms.
func TestTraceForms_LaterTurnTimestamp(t *testing.T) {
	rows := `{"timestamp": 1000, "input_length": 100, "output_length": 2, "session_id": 7}` + "\n" +
		`{"timestamp": 1020, "delay": 10, "input_length": 300, "output_length": 2, "session_id": 7}` + "\n" +
		`{"timestamp": 1021, "input_length": 50, "output_length": 1, "session_id": 7}` + "\n" +
		`{"timestamp": 1030, "input_length": 50, "output_length": 1}` + "\n"
	rep := runYAML(t, clockSpec(t, 0.01, rows, "{mode: trace}"))
	require.Len(t, rep.Records, 4)
	got := map[int64][2]float64{}
	for _, r := range rep.Records {
		got[r.RequestID] = [2]float64{msOf(r.SendNs), msOf(r.EndNs)}
	}
	assert.Equal(t, map[int64][2]float64{0: {0, 3}, 1: {20, 25}, 2: {25, 26.5}, 3: {30, 31.5}}, got)
	assert.Equal(t, 31.5, rep.Summary.DurationMs)

	// Outside trace mode a timestamp does not send: turn 1 waits its delay
	// after turn 0's end (3 + 10 = 13 ms, ends 18), turn 2 goes at once (18,
	// ends 19.5).
	rep = runYAML(t, clockSpec(t, 0.01, rows, "{mode: concurrency, concurrency: 1}"))
	got = map[int64][2]float64{}
	for _, r := range rep.Records {
		got[r.RequestID] = [2]float64{msOf(r.SendNs), msOf(r.EndNs)}
	}
	assert.Equal(t, [2]float64{13, 18}, got[1])
	assert.Equal(t, [2]float64{18, 19.5}, got[2])
}

// Azure traces of both releases replay from their first row: the 2024 form
// (UTC offset, fraction optional) 00:00:00+00:00 then 00:00:00.041683+00:00
// is sent at 0 and 41.683 ms; the 2023 form 18:15:46.6805900 then
// 18:15:47.0000000 at 0 and 319.41 ms.
func TestTraceClock_AzureBothReleases(t *testing.T) {
	for _, c := range []struct {
		rows string
		want float64
	}{
		{"2024-05-12 00:00:00+00:00,374,4\n2024-05-12 00:00:00.041683+00:00,396,4\n", 41.683},
		{"2023-11-16 18:15:46.6805900,374,4\n2023-11-16 18:15:47.0000000,396,4\n", 319.41},
	} {
		yml := fmt.Sprintf(`
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  perf: {source: linear, base_ms: 1, per_prefill_token_ms: 0, per_decode_seq_ms: 0}
  scheduler: {num_gpu_blocks: 1000, max_model_len: 16000}
traffic:
  source: {type: azure, path: %s}
  load: {mode: trace}
`, writeRaw(t, "TIMESTAMP,ContextTokens,GeneratedTokens\n"+c.rows))
		rep := runYAML(t, yml)
		require.Len(t, rep.Records, 2)
		assert.Equal(t, 0.0, msOf(rep.Records[0].SendNs))
		assert.InDelta(t, c.want, msOf(rep.Records[1].SendNs), 1e-9)
	}
}

// traffic.source.isl_block_size (AIPerf's --isl-block-size) sets the tokens
// one hash id covers. Two 40-token prompts, one after the other, with ids
// [1, 2, 3] and [1, 2, 9]: at 16 tokens an id, the second shares tokens
// [0, 32), two full engine blocks of 16: 32 cached tokens. At Mooncake's 512
// the same rows are refused: 3 ids for ⌈40 / 512⌉ = 1 block.
func TestTraceISLBlockSize(t *testing.T) {
	rows := `{"timestamp": 0, "input_length": 40, "output_length": 1, "hash_ids": [1, 2, 3]}` + "\n" +
		`{"timestamp": 10, "input_length": 40, "output_length": 1, "hash_ids": [1, 2, 9]}` + "\n"
	yml := replaceOnce(clockSpec(t, 0.01, rows, "{mode: trace}"), "path: ", "isl_block_size: 16, path: ")
	rep := runYAML(t, yml)
	require.Len(t, rep.Records, 2)
	assert.Equal(t, []int{0, 32}, []int{rep.Records[0].CachedTokens, rep.Records[1].CachedTokens})

	requireDataError(t, startErr(t, clockSpec(t, 0.01, rows, "{mode: trace}")), 1, "hash_ids")
}
