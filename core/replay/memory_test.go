package replay

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
)

// estimateYAML decodes a spec and returns its memory estimate.
func estimateYAML(t *testing.T, yml string) *MemoryEstimate {
	t.Helper()
	s, err := config.DecodeYAML([]byte(yml))
	require.NoError(t, err)
	e, err := EstimateMemory(s)
	require.NoError(t, err)
	return e
}

// synthetic is the linear engine (1000 blocks of 16 tokens, max_num_seqs 4)
// serving a synthetic source with the given source, load and stop fields.
func synthetic(source, load, stop string) string {
	return linearEngineFor(1000) + fmt.Sprintf(`
traffic:
  source: {type: synthetic, %s}
  load: {%s}
  stop: {%s}
`, source, load, stop)
}

// The requests and requests in flight an estimate counts, by hand.
func TestEstimateCounts(t *testing.T) {
	trace := writeTrace(t, []traceRow{{0, 10, 1, nil}, {1, 10, 1, nil}, {2, 10, 1, nil}})
	cases := []struct {
		name           string
		spec           string
		requests, inFl int64
		exact          bool
	}{
		{"a synthetic count", synthetic("num_requests: 5000, isl: 100, osl: 4", "mode: concurrency, concurrency: 8", ""), 5000, 8, true},
		{"capped by max_requests", synthetic("num_requests: 5000, isl: 100, osl: 4", "mode: concurrency, concurrency: 8", "max_requests: 300"), 300, 8, true},
		// 1e9 requests at 10/s stopped after 1 s: λT = 10, 10 + 5·√10 + 16 =
		// 41.8 → 42 (this spec preallocated 2^24 records, 2.7 GB, for ~10); an
		// open loop counts the workers' running sets in flight: 1 × 4
		{"a rate stopped by duration", synthetic("num_requests: 1000000000, isl: 100, osl: 4", "mode: rate, rate_rps: 10", "max_duration_s: 1"), 42, 4, true},
		// a closed loop stopped by duration: only its 8 first requests are
		// certain; the rest is watched as it runs
		{"a closed loop stopped by duration", synthetic("num_requests: 1000000000, isl: 100, osl: 4", "mode: concurrency, concurrency: 8", "max_duration_s: 1"), 8, 8, false},
		// 200 sessions of uniform 2..8 turns: mean 5, 1000 requests expected
		{"sessions", linearEngineFor(1000) + `
traffic:
  source: {type: sessions, num_sessions: 200, turns: {kind: uniform, min: 2, max: 8}, isl: 10, osl: 2}
  load: {mode: concurrency, concurrency: 16}
`, 1000, 16, false},
		// a trace of 3 lines: at most 3 requests
		{"a trace", linearEngineFor(1000) + traceTrafficAt(trace, "{mode: trace}"), 3, 3, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := estimateYAML(t, tc.spec)
			assert.Equal(t, tc.requests, e.Requests)
			assert.Equal(t, tc.inFl, e.InFlight)
			assert.Equal(t, tc.exact, e.Exact)
			assert.Equal(t, e.Base+e.Records+e.Flights+e.Held+e.KVIndex+e.Dataset, e.Total)
			assert.Equal(t, e.Requests*e.perRecord, e.Records)
		})
	}
	// the preallocation follows the count: 42 records for the rate stopped by duration
	rep := runYAML(t, cases[2].spec)
	assert.Equal(t, 42, cap(rep.Records))
	assert.LessOrEqual(t, len(rep.Records), 42)
}

// A replay whose estimate passes its budget is refused before it runs, with
// the budget's field and the part that does not fit named.
func TestBudgetRefusesUpFront(t *testing.T) {
	spec := synthetic("num_requests: 10000000, isl: 16, osl: 1", "mode: concurrency, concurrency: 64", "") + "execution: {max_memory_gb: 1}\n"
	start := time.Now()
	_, err := runErr(t, spec)
	assert.Less(t, time.Since(start), 5*time.Second, "refused before simulating")
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "execution.max_memory_gb", ce.Field)
	assert.Contains(t, ce.Msg, "(10000000 request records: ")
	assert.Contains(t, ce.Msg, "more than its budget of 1 GB (execution.max_memory_gb): lower traffic.stop.max_requests")
	// a Go Run keeps a Record (168 bytes) and the summary's samples (48) per
	// request: 10M records need 2.16 GB
	e := estimateYAML(t, spec)
	assert.Equal(t, int64(10_000_000*(168+48)), e.Records)
	assert.Equal(t, int64(1e9), e.Budget)
}

// A replay that grows past its budget as it runs (a closed loop stopped by
// duration, whose count is not known up front) is stopped, not let run out
// of memory.
func TestBudgetStopsARunThatGrows(t *testing.T) {
	// 70 MB: the 64 MiB base and 8 clients fit; (70e6 − 2^26) / 216 bytes ≈
	// 13,400 records more do not, and the first look past them is the
	// second, after 2 × 8,192 records
	spec := synthetic("num_requests: 100000000, isl: 16, osl: 1", "mode: concurrency, concurrency: 8", "max_duration_s: 1000000") +
		"execution: {max_memory_gb: 0.07}\n"
	_, err := runErr(t, spec)
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "execution.max_memory_gb", ce.Field)
	assert.Contains(t, ce.Msg, "the replay passed its memory budget of 0.07 GB (execution.max_memory_gb) after 16384 requests")
}

// A closed loop over sessions of up to 2^62 turns (1e9 in the battery) read
// the first session's turns ahead forever to start the second client's
// session, whatever stop.max_requests said: the read-ahead is estimated up
// front (min(clients, sessions) × (mean turns − 1) rows) and refused.
func TestSessionsReadAheadIsBounded(t *testing.T) {
	for _, turns := range []string{"{kind: uniform, min: 1, max: 4611686018427387904}", "1000000000"} {
		spec := linearEngineFor(1000) + `
traffic:
  source: {type: sessions, num_sessions: 2, turns: ` + turns + `, isl: 10, osl: 1}
  load: {mode: concurrency, concurrency: 4}
  stop: {max_requests: 50}
`
		withinSeconds(t, 10*time.Second, func() {
			_, err := runErr(t, spec)
			var ce *config.Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "execution.max_memory_gb", ce.Field)
			assert.Contains(t, ce.Msg, "(the later turns of the sessions its 4 clients start, read ahead since sessions are generated one after another: ")
			assert.Contains(t, ce.Msg, "lower traffic.source.turns or traffic.load.concurrency")
		})
	}
	// 2 sessions × (1e9 − 1) later turns × requestB (a workload.Request, 120
	// bytes) ≈ 240 GB
	e := estimateYAML(t, linearEngineFor(1000)+`
traffic:
  source: {type: sessions, num_sessions: 2, turns: 1000000000, isl: 10, osl: 1}
  load: {mode: concurrency, concurrency: 4}
  stop: {max_requests: 50}
`)
	assert.Equal(t, int64(2*(1e9-1))*requestB, e.Held)
	assert.Equal(t, int64(50), e.Requests)
}

// A trace's sessions end only where the file says so, so the estimate holds
// nothing for them; the feed's read-ahead is bounded at run time by what the
// budget leaves. Session 0 has 5000 turns before session 1's first row: the
// second client's start needs 4999 rows held. A budget of the estimate plus
// 1000 rows (1000 × requestB bytes) stops it at 1000 held rows.
func TestTraceReadAheadStopsAtTheBudget(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, `{"timestamp": 0, "input_length": 10, "output_length": 1, "session_id": 0}`+"\n")
	}
	b.WriteString(`{"timestamp": 0, "input_length": 10, "output_length": 1, "session_id": 1}` + "\n")
	path := writeRaw(t, b.String())
	spec := linearEngineFor(1000) + fmt.Sprintf(`
traffic:
  source: {type: mooncake, path: %s}
  load: {mode: concurrency, concurrency: 2}
`, path)
	e := estimateYAML(t, spec)
	assert.Equal(t, int64(0), e.Held)
	assert.Equal(t, int64(5001), e.Requests)
	budget := e.Total + 1000*requestB
	_, err := runErr(t, spec+fmt.Sprintf("execution: {max_memory_gb: %.9f}\n", float64(budget)/1e9))
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "execution.max_memory_gb", ce.Field)
	assert.Equal(t, "the workload would be read 1000 rows ahead (later turns of open sessions) to reach the next session, "+
		"which would pass the memory budget: lower the trace's rows between one session's start and the next ("+path+
		") or traffic.load.concurrency, or raise execution.max_memory_gb", ce.Msg)
}

// The default budget is half of the machine's memory.
func TestDefaultBudget(t *testing.T) {
	e := estimateYAML(t, synthetic("num_requests: 10, isl: 16, osl: 1", "mode: concurrency, concurrency: 1", ""))
	if m := machineMemory(); m > 0 {
		assert.Equal(t, m/2, e.Budget)
	} else {
		assert.Equal(t, int64(defaultBudgetUnknown), e.Budget)
	}
	assert.Equal(t, "the default, half of this machine's memory", e.BudgetSource)
	assert.False(t, math.IsNaN(float64(e.Total)))
}
