package replay

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
)

// A closed loop of 4 clients sending 3000 requests (linear perf): long
// enough for several progress looks (checkEvery timestamps apart).
func controlSpec(t *testing.T) *config.Spec {
	s, err := config.DecodeYAML([]byte(linearEngineFor(1000) + `
traffic:
  source: {type: synthetic, num_requests: 3000, isl: 100, osl: 4}
  load: {mode: concurrency, concurrency: 4}
  stop: {max_duration_s: 3600}
`))
	require.NoError(t, err)
	return s
}

// Progress is reported while the loop runs and once at its end, when every
// request has been sent and finished; the report does not depend on it.
func TestProgressReports(t *testing.T) {
	var seen []Progress
	rep, err := Run(controlSpec(t), WithProgress(func(p Progress) { seen = append(seen, p) }))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(seen), 3, "a look before the loop, some during it, one at its end")
	for i := 1; i < len(seen); i++ {
		assert.GreaterOrEqual(t, seen[i].Sent, seen[i-1].Sent)
		assert.GreaterOrEqual(t, seen[i].Finished, seen[i-1].Finished)
		assert.GreaterOrEqual(t, seen[i].NowNs, seen[i-1].NowNs)
		assert.LessOrEqual(t, seen[i].Finished, seen[i].Sent)
	}
	lastRelease := int64(0) // the loop's last event: the client acting on the last response
	for _, r := range rep.Records {
		lastRelease = max(lastRelease, r.ReleaseNs)
	}
	// Expected is 0: with stop.max_duration_s the 3000 requests are only an upper
	// bound (the memory estimate's count is not exact); pybind's TestRunControl
	// sees an exact count.
	assert.Equal(t, Progress{Sent: 3000, Finished: 3000, Expected: 0, NowNs: lastRelease, StopNs: 3600e9},
		seen[len(seen)-1])

	plain, err := Run(controlSpec(t))
	require.NoError(t, err)
	assert.Equal(t, plain.Records, rep.Records)
}

// A context canceled before the replay stops it at its first look: the 4
// clients' first requests are sent (at time 0), none finished.
func TestRunContextCanceledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := RunContext(ctx, controlSpec(t))
	assert.Nil(t, rep)
	var st *Stopped
	require.ErrorAs(t, err, &st)
	assert.True(t, errors.Is(err, context.Canceled))
	assert.Equal(t, int64(4), st.Sent)
	assert.Equal(t, int64(0), st.Finished)
	assert.Contains(t, err.Error(), "replay stopped after 4 of its requests were sent (0 finished)")
}

// A cancel during the run stops the loop at its next look: some requests
// sent, not all.
func TestRunContextCanceledWhileRunning(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	looks := 0
	_, err := RunContext(ctx, controlSpec(t), WithProgress(func(p Progress) {
		if looks++; looks == 2 { // the first look during the loop
			cancel()
		}
	}))
	var st *Stopped
	require.ErrorAs(t, err, &st)
	assert.Greater(t, st.Sent, int64(4))
	assert.Less(t, st.Sent, int64(3000))
	assert.Greater(t, st.NowNs, int64(0))
}

// An SLO reaches the summary; a bad bound is a config error naming it.
// Worked example 1 (TestWorkedExample1_TwoRequestsOneWorker): r1 ttft 14.00,
// tpot 2.65; r2 ttft 7.10, tpot 2.20. Under tpot ≤ 2.5 ms only r2 is good:
// 1 / 0.0193 s = 51.8 req/s. TTST: r1 3.10 (17.10 − 14.00), r2 2.20.
func TestSLOAndTTSTOfWorkedExample1(t *testing.T) {
	spec := func() *config.Spec {
		s, err := config.DecodeYAML([]byte(traceSpec(t, 1000, []traceRow{
			{ts: 0, in: 1000, out: 3, hashes: []int{1, 2}},
			{ts: 10, in: 100, out: 2, hashes: []int{3}},
		}, "")))
		require.NoError(t, err)
		return s
	}
	bound := 2.5
	rep, err := Run(spec(), WithSLO(report.SLO{TPOTMs: &bound}))
	require.NoError(t, err)
	g := rep.Summary.Goodput
	require.NotNil(t, g)
	assert.Equal(t, 1, g.GoodRequests)
	assert.InDelta(t, 1/0.0193, *g.GoodputRPS, 1e-9)
	assert.InDelta(t, 0.5, *g.SLOAttainment, 1e-12)
	ttst0, _ := rep.Records[0].TTST()
	ttst1, _ := rep.Records[1].TTST()
	assert.InDelta(t, 3.10, ttst0, 1e-12)
	assert.InDelta(t, 2.20, ttst1, 1e-12)

	bad := -1.0
	_, err = Run(spec(), WithSLO(report.SLO{TTFTMs: &bad}))
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "slo.ttft_ms", ce.Field)
	_, err = Run(spec(), WithSLO(report.SLO{}))
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "slo", ce.Field)
}

// Chosen percentiles reach every statistic and the metadata; a bad one is a
// config error naming percentiles. Worked example 1 (as above): TTFTs 7.10
// and 14.00 ms, so with numpy's linear rule (v = (n − 1)·p/100)
// p25 = 7.10 + 6.90·0.25 = 8.825 and p99.9 = 7.10 + 6.90·0.999 = 13.9931;
// the client's gaps are r1's 3.10 and 2.20 and r2's 2.20 ms, sorted
// 2.2, 2.2, 3.1: p25 at v = 0.5 is 2.2, p99.9 at v = 1.998 is
// 2.2 + 0.9·0.998 = 3.0982.
func TestChosenPercentilesOfWorkedExample1(t *testing.T) {
	s, err := config.DecodeYAML([]byte(traceSpec(t, 1000, []traceRow{
		{ts: 0, in: 1000, out: 3, hashes: []int{1, 2}},
		{ts: 10, in: 100, out: 2, hashes: []int{3}},
	}, "")))
	require.NoError(t, err)
	rep, err := Run(s, WithPercentiles([]float64{99.9, 25, 90}))
	require.NoError(t, err)
	assert.Equal(t, []float64{25, 90, 99.9}, rep.Metadata.Percentiles)
	sum := rep.Summary
	require.Len(t, sum.TTFT.More, 2) // 90 is always there
	assert.InDelta(t, 8.825, sum.TTFT.More[0].V, 1e-9)
	assert.InDelta(t, 13.9931, sum.TTFT.More[1].V, 1e-9)
	assert.InDelta(t, 2.2, sum.ITL.More[0].V, 1e-9)
	assert.InDelta(t, 3.0982, sum.ITL.More[1].V, 1e-9)

	plain, err := Run(s)
	require.NoError(t, err)
	assert.Nil(t, plain.Metadata.Percentiles)
	assert.Nil(t, plain.Summary.TTFT.More)
	for _, bad := range [][]float64{{}, {0}, {101}, {math.NaN()}} {
		_, err = Run(s, WithPercentiles(bad))
		var ce *config.Error
		require.ErrorAs(t, err, &ce, "%v", bad)
		assert.Equal(t, "percentiles", ce.Field)
	}
}
