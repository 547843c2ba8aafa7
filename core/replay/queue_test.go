package replay

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
)

// The service rate μ the estimate prices, by hand, on the linear engine (pass
// ms = 2.0 + 0.01 × prompt tokens + 0.1 × decodes; one worker, max_num_seqs 4,
// 512 batched tokens, 1000 blocks of 16 tokens):
//
//   - isl 100, osl 4: k = min(4 / 4, 512 / 103, 16000 / 102 / 4) = 1 request
//     admitted a pass, beside 3 decoding: 2.0 + 1.0 + 0.3 = 3.3 ms a pass,
//     μ = 1 / 3.3 ms = 303.03 req/s.
//   - isl 100, osl 8: k = 4 / 8 = 0.5, half the passes compute a prompt beside
//     3 decodes (3.3 ms), half decode 4 (2.4 ms): μ = 0.5 / 2.85 ms =
//     175.44 req/s.
//
// At λ = 1000 req/s, 5000 requests leave n·(1 − μ/λ) queued at the last
// arrival: 5000 × (1 − 0.30303) = 3484.8 → 3484, and 5000 × (1 − 0.17544) =
// 4122.8 → 4122; in flight, the 4 running and those.
func TestServiceRateAndQueueByHand(t *testing.T) {
	cases := []struct {
		osl          int
		mu           float64
		queued, inFl int64
	}{
		{4, 1 / 3.3e-3, 3484, 3488},
		{8, 0.5 / 2.85e-3, 4122, 4126},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("osl %d", tc.osl), func(t *testing.T) {
			spec := synthetic(fmt.Sprintf("num_requests: 5000, isl: 100, osl: %d", tc.osl), "mode: rate, rate_rps: 1000, arrival: constant", "")
			e := estimateYAML(t, spec)
			assert.InDelta(t, tc.mu, e.ServiceRPS, 1e-9*tc.mu)
			assert.Equal(t, tc.queued, e.Queued)
			assert.Equal(t, tc.inFl, e.InFlight)
			assert.Equal(t, e.InFlight*e.perFlight, e.Flights)

			// the replay agrees: it completes about μ a second and holds about
			// that many requests in flight at its peak
			rep := runYAML(t, spec)
			require.Len(t, rep.Records, 5000)
			rate := *rep.Summary.RequestThroughputRPS
			assert.InEpsilon(t, tc.mu, rate, 0.03, "μ priced %.2f, replay %.2f", tc.mu, rate)
			peak := peakInFlight(rep.Records)
			assert.InEpsilon(t, float64(tc.inFl), float64(peak), 0.03, "in flight priced %d, replay %d", tc.inFl, peak)
		})
	}
}

// An open loop below its service rate queues nothing: the running sets only.
func TestNoQueueBelowTheServiceRate(t *testing.T) {
	e := estimateYAML(t, synthetic("num_requests: 5000, isl: 100, osl: 4", "mode: rate, rate_rps: 300", ""))
	assert.InDelta(t, 303.03, e.ServiceRPS, 0.01)
	assert.Equal(t, int64(0), e.Queued)
	assert.Equal(t, int64(4), e.InFlight)
	// a closed loop is not priced: its clients are its requests in flight
	e = estimateYAML(t, synthetic("num_requests: 5000, isl: 100, osl: 4", "mode: concurrency, concurrency: 8", ""))
	assert.Equal(t, 0.0, e.ServiceRPS)
	assert.Equal(t, int64(8), e.InFlight)
	assert.Equal(t, 0.0, queuedAtLastArrival(100, 10, 0), "μ unknown: nothing queued")
	assert.Equal(t, 0.0, queuedAtLastArrival(100, 10, 10), "λ = μ: nothing queued")
	assert.Equal(t, 75.0, queuedAtLastArrival(100, 40, 10))
}

// Prefill/decode disaggregation: μ is the slower pool's. Prefill ranks
// compute prompts only, min(max_num_seqs 4, 512 / 100) = 4 a pass (2.0 + 4.0
// = 6.0 ms): 4 / 6 ms = 666.7 req/s. Decode ranks produce all 4 output tokens
// by decoding, 4 requests a pass (2.4 ms), so 4 / 4 finish a pass: 1 / 2.4 ms
// = 416.7 req/s, the slower; the replay completes about that many.
func TestServiceRateDisaggregated(t *testing.T) {
	spec := linearEngineFor(1000) + `  workers:
    disaggregated:
      prefill: {count: 1}
      decode: {count: 1}
      kv_transfer: {bandwidth_gb_per_s: 50, latency_ms: 0.2}
traffic:
  source: {type: synthetic, num_requests: 5000, isl: 100, osl: 4}
  load: {mode: rate, rate_rps: 1000}
`
	e := estimateYAML(t, spec)
	assert.InDelta(t, 1/2.4e-3, e.ServiceRPS, 1e-6)
	s, err := config.DecodeYAML([]byte(spec))
	require.NoError(t, err)
	require.NoError(t, s.Validate())
	dep, err := buildDeployment(s, nil)
	require.NoError(t, err)
	assert.InDelta(t, 4/6e-3, poolRate(dep.pools[0], steadyWorkload{isl: 100, osl: 4}, true, false), 1e-6)
	rep := runYAML(t, spec)
	assert.InEpsilon(t, e.ServiceRPS, *rep.Summary.RequestThroughputRPS, 0.03)
}

// The queue is an expectation, so a budget it would pass does not refuse the
// run up front: a run that fits is not refused. The osl 4 case above holds
// about 3,488 requests in flight; a budget of the estimate without its queue
// plus 2,000 flights refuses nothing before running and lets the run go on
// until what it holds passes the budget, which the run-time guard stops.
func TestTheQueueIsNotRefusedUpFront(t *testing.T) {
	spec := synthetic("num_requests: 5000, isl: 100, osl: 4", "mode: rate, rate_rps: 1000, arrival: constant", "")
	e := estimateYAML(t, spec)
	require.Equal(t, int64(3484), e.Queued)
	withoutQueue := e.Total - e.Queued*e.perFlight
	// fits without the queue, not with it: still not refused, and it completes
	fits := spec + fmt.Sprintf("execution: {max_memory_gb: %.9f}\n", float64(e.Total-1)/1e9)
	rep, err := runErr(t, fits)
	require.NoError(t, err)
	assert.Len(t, rep.Records, 5000)
	// a budget below what it holds besides the queue is refused up front,
	// naming the records (the largest part then)
	_, err = runErr(t, spec+fmt.Sprintf("execution: {max_memory_gb: %.9f}\n", float64(withoutQueue-1)/1e9))
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Msg, "more than its budget of")
	assert.Contains(t, ce.Msg, "(5000 request records: ")
}

// peakInFlight is the most requests between their arrival at the engine and
// their end at once (an end before an arrival at the same instant).
func peakInFlight(recs []report.Record) int {
	type edge struct {
		t int64
		d int
	}
	edges := make([]edge, 0, 2*len(recs))
	for _, r := range recs {
		edges = append(edges, edge{r.ArrivalNs, 1}, edge{r.EndNs, -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		return edges[i].t < edges[j].t || edges[i].t == edges[j].t && edges[i].d < edges[j].d
	})
	n, peak := 0, 0
	for _, e := range edges {
		n += e.d
		peak = max(peak, n)
	}
	return peak
}

// A synthetic dataset's prompts come from the prefix cache; μ prices each
// as one token computed, a bound above the replay's rate: k = min(4 / 4,
// 512 / (1 + 3)) = 1, a pass of 1 prompt token and 3 decodes, 2.0 + 0.01 +
// 0.3 = 2.31 ms, μ = 432.9 req/s. The replay computes the 4 tokens past the
// 6 cached blocks of each 100-token prompt (2.34 ms a pass): 427 req/s.
func TestServiceRateOfCachedPrompts(t *testing.T) {
	spec := synthetic("num_requests: 5000, isl: 100, osl: 4, dataset: {entries: 10}", "mode: rate, rate_rps: 1000, arrival: constant", "")
	e := estimateYAML(t, spec)
	assert.InDelta(t, 1/2.31e-3, e.ServiceRPS, 1e-6)
	rate := *runYAML(t, spec).Summary.RequestThroughputRPS
	assert.Less(t, rate, e.ServiceRPS)
	assert.InEpsilon(t, 1/2.34e-3, rate, 0.03)
}
