package replay

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/report"
)

// GIVEN a cache of 10 blocks (160 tokens) and four requests of 64 prompt + 40
// output tokens that arrive together (each needs ⌈(64+39)/16⌉ = 7 blocks at its end),
// WHEN they decode, the cache runs out and the newest running request is preempted,
// THEN every request still completes with all its tokens, and preemptions are counted.
func TestKVStarvedPreemptsAndCompletes(t *testing.T) {
	rows := make([]traceRow, 4)
	for i := range rows {
		rows[i] = traceRow{ts: 0, in: 64, out: 40, hashes: []int{100 + i}}
	}
	rep := runYAML(t, traceSpec(t, 10, rows, ""))
	require.Equal(t, 4, rep.Summary.Completed)
	total := 0
	for _, r := range rep.Records {
		assert.Equal(t, "completed", r.Status)
		assert.Equal(t, 40, r.OutputTokens)
		total += r.Preemptions
	}
	assert.Greater(t, total, 0, "the scenario must reach preemption")
	assert.Equal(t, int64(total), rep.Summary.Preemptions)
}

// A preempted request keeps its produced tokens: the client sees exactly
// output_tokens tokens and output − 1 ITL gaps, never a token twice.
func TestPreemptionKeepsTokenCount(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 64, out: 60, hashes: []int{1}}, {ts: 0, in: 64, out: 60, hashes: []int{2}}}
	rep := runYAML(t, traceSpec(t, 8, rows, "")) // 128 tokens: both cannot grow past 64 + 64
	gaps := 0
	for _, r := range rep.Records {
		assert.Equal(t, 60, r.OutputTokens)
		gaps += r.OutputTokens - 1
	}
	require.NotNil(t, rep.Summary.ITL)
	assert.Greater(t, rep.Summary.Preemptions, int64(0))
	// the ITL pool holds n − 1 gaps per request: its mean × count is the sum of
	// (end − first token) over requests.
	sum := 0.0
	for _, r := range rep.Records {
		sum += msOf(r.EndNs - r.FirstTokenNs)
	}
	assert.InDelta(t, sum/float64(gaps), rep.Summary.ITL.Mean, 1e-9)
}

// A request longer than max_model_len is rejected at arrival with its reason;
// it ends at its arrival and gets no latency statistics.
func TestRejectLongerThanMaxModelLen(t *testing.T) {
	yml := traceSpec(t, 1000, []traceRow{
		{ts: 0, in: 1000, out: 100, hashes: []int{1, 2}},
		{ts: 5, in: 100, out: 2, hashes: []int{3}},
	}, "")
	yml = replaceOnce(yml, "max_model_len: 16000", "max_model_len: 1024")
	rep := runYAML(t, yml)
	r := rep.Records[0]
	assert.Equal(t, "rejected", r.Status)
	assert.Equal(t, "prompt (1000) + output (100) tokens exceed max_model_len (1024)", r.Reason)
	assert.Equal(t, r.ArrivalNs, r.EndNs)
	assert.Equal(t, report.NoTime, r.FirstTokenNs)
	assert.Equal(t, 0, r.OutputTokens)
	assert.Equal(t, 1, rep.Summary.Rejected)
	assert.Equal(t, 1, rep.Summary.Completed)
	// r2 is served alone: prefill 2 + 1.00, one decode 2.1 ms
	ttft, _ := rep.Records[1].TTFT()
	assert.InDelta(t, 3.00, ttft, 1e-12)
}

// TPOT, ITL and percentiles of a closed loop, checked against the records:
// summary statistics equal those computed independently from the records.
func TestSummaryMatchesRecords(t *testing.T) {
	rep := runYAML(t, linearEngineFor(2000)+`
traffic:
  source: {type: synthetic, num_requests: 60, isl: {kind: uniform, min: 50, max: 700}, osl: {kind: uniform, min: 1, max: 30}}
  load: {mode: concurrency, concurrency: 5}
execution: {seed: 7}
`)
	var ttft, tpot []float64
	itl := 0
	for _, r := range rep.Records {
		require.Equal(t, "completed", r.Status)
		if v, ok := r.TTFT(); ok {
			ttft = append(ttft, v)
		}
		if v, ok := r.TPOT(); ok {
			tpot = append(tpot, v)
			// TPOT is the mean of the request's n − 1 gaps
			assert.InDelta(t, msOf(r.EndNs-r.FirstTokenNs)/float64(r.OutputTokens-1), v, 1e-12)
		}
		itl += max(r.OutputTokens-1, 0)
	}
	sort.Float64s(ttft)
	// numpy linear percentile by hand: p90 of n values sits at index 0.9·(n − 1)
	n := len(ttft)
	v := 0.9 * float64(n-1)
	lo := int(v)
	want := ttft[lo] + (ttft[lo+1]-ttft[lo])*(v-float64(lo))
	assert.InDelta(t, want, rep.Summary.TTFT.P90, 1e-9)
	assert.InDelta(t, ttft[n/2-1]/2+ttft[n/2]/2, rep.Summary.TTFT.P50, 1e-9) // n = 60 is even
	assert.Equal(t, ttft[0], rep.Summary.TTFT.Min)
	assert.Len(t, tpot, countWhere(rep.Records, func(r report.Record) bool { return r.OutputTokens >= 2 }))
	assert.Equal(t, int64(itl), rep.Summary.TotalOutputTokens-int64(len(rep.Records)))
}

func countWhere(rs []report.Record, f func(report.Record) bool) int {
	n := 0
	for _, r := range rs {
		if f(r) {
			n++
		}
	}
	return n
}

// A closed loop of c clients never has more than c requests in flight (sent,
// not yet acted on), and each client's next request is sent when the previous
// is released.
func TestClosedLoopNeverExceedsConcurrency(t *testing.T) {
	const c = 3
	rep := runYAML(t, linearEngineFor(2000)+fmt.Sprintf(`
traffic:
  source: {type: synthetic, num_requests: 40, isl: {kind: uniform, min: 10, max: 900}, osl: {kind: uniform, min: 1, max: 20}}
  load: {mode: concurrency, concurrency: %d}
`, c))
	type edge struct {
		t  int64
		up int
	}
	var edges []edge
	for _, r := range rep.Records {
		edges = append(edges, edge{r.SendNs, 1}, edge{r.ReleaseNs, -1})
	}
	// at equal times a release comes before the send it frees
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].t != edges[j].t {
			return edges[i].t < edges[j].t
		}
		return edges[i].up < edges[j].up
	})
	inFlight, peak := 0, 0
	for _, e := range edges {
		inFlight += e.up
		peak = max(peak, inFlight)
	}
	assert.Equal(t, c, peak)
	// the first c requests are sent at 0, every later one at some release time
	releases := map[int64]int{}
	for _, r := range rep.Records {
		releases[r.ReleaseNs]++
	}
	for i, r := range rep.Records {
		if i < c {
			assert.Equal(t, int64(0), r.SendNs)
			continue
		}
		assert.Positive(t, releases[r.SendNs], "request %d sent at %d, not at a release", i, r.SendNs)
	}
}

// Two runs of the same spec give byte-identical reports (INV-5).
func TestINV5_Deterministic(t *testing.T) {
	spec := linearEngineFor(300) + `
  workers:
    aggregated: {count: 3, tp: 1, placement: least_outstanding}
traffic:
  source: {type: synthetic, num_requests: 200, isl: {kind: lognormal, mean: 400, std: 300, min: 1, max: 4000}, osl: {kind: uniform, min: 1, max: 60}}
  load: {mode: rate, rate_rps: 300, arrival: poisson}
execution: {seed: 3}
`
	a, err := runYAML(t, spec).JSON()
	require.NoError(t, err)
	b, err := runYAML(t, spec).JSON()
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b))
}
