package search

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/replay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomQuestion is a small question drawn from rng: a built-in model on
// H100s priced by the roofline, a Poisson load of 150 requests, an SLO near
// what one or two GPUs serve, a memory utilization that leaves some layouts
// unable to start; a space of 1 or 2 GPUs, TP 1 or 2, both modes.
func randomQuestion(t *testing.T, rng *rand.Rand) *Question {
	t.Helper()
	models := []string{"meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-32B"}
	m := models[rng.IntN(len(models))]
	isl := 200 + rng.IntN(3000)
	osl := 2 + rng.IntN(300)
	yml := fmt.Sprintf(`
engine:
  model: %s
  system: h100_sxm
  scheduler: {gpu_memory_utilization: %.2f, max_model_len: 8192}
traffic:
  source: {type: synthetic, num_requests: 150, isl: {kind: uniform, min: %d, max: %d}, osl: {kind: uniform, min: %d, max: %d}}
  load: {mode: rate, rate_rps: %.1f}
execution: {seed: %d}
`, m, 0.55+0.4*rng.Float64(), isl/2, isl, osl/2+1, osl, 2+60*rng.Float64(), rng.IntN(1000))
	s, err := config.DecodeYAML([]byte(yml))
	require.NoError(t, err, yml)
	slo := SLO{Percentile: []float64{50, 90, 99}[rng.IntN(3)]}
	switch rng.IntN(3) {
	case 0:
		slo.TTFTMs, slo.TPOTMs = 20+2000*rng.Float64(), 5+60*rng.Float64()
	case 1:
		slo.E2EMs = 500 + 20000*rng.Float64()
	default:
		slo.TTFTMs, slo.TPOTMs, slo.E2EMs = 20+2000*rng.Float64(), 5+60*rng.Float64(), 500+20000*rng.Float64()
	}
	sp := Space{GPUs: []int{1, 2}, TP: []int{1, 2}, MaxNumSeqs: []int{16, 128}, MaxNumBatchedTokens: []int{1024},
		Weights: []string{""}, KVCache: []string{""}}
	q, err := NewQuestion(s, sp, slo)
	require.NoError(t, err)
	return q
}

func runAll(t *testing.T, q *Question, prune, early bool) []Result {
	t.Helper()
	q.Prune, q.EarlyStop = prune, early
	cands, _ := q.Candidates()
	var out []Result
	require.NoError(t, q.Run(context.Background(), cands, Options{Jobs: 2}, func(r Result) error {
		out = append(out, r)
		return nil
	}))
	return out
}

// The property of the analytic prunes: on random small questions, a
// candidate pruned (it cannot start, a decode step is over the TPOT bound,
// the load outruns its decode rate) is one that a full replay shows missing
// the SLO; every other candidate's result is the full replay's.
func TestPruningNeverDropsACandidateThatMeetsTheSLO(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	kinds := map[string]int{}
	for i := 0; i < 24; i++ {
		q := randomQuestion(t, rng)
		full, pruned := runAll(t, q, false, false), runAll(t, q, true, false)
		require.Equal(t, len(full), len(pruned))
		for j := range full {
			f, p := full[j], pruned[j]
			if p.Fate == FatePruned {
				kinds[p.Kind]++
				require.NotNil(t, f.Meets, "%s: the full run settles it", f.Key)
				assert.False(t, *f.Meets, "question %d, %s pruned (%s: %s) but meets the SLO when replayed", i, p.Key, p.Kind, p.Reason)
				continue
			}
			assert.Equal(t, f, p, "question %d, %s", i, p.Key)
		}
	}
	t.Logf("prunes by kind: %v", kinds)
	// the property is only tested where prunes happen
	for _, k := range []string{KindMemory, KindTPOTFloor, KindThroughput} {
		assert.Positive(t, kinds[k], "no %s prune in the sample", k)
	}
}

// Early stopping changes no verdict: a replay stopped once its miss is
// certain is one the full replay shows missing, and every replay not stopped
// gives the full replay's result.
func TestEarlyStopChangesNoVerdict(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	stopped := 0
	for i := 0; i < 16; i++ {
		q := randomQuestion(t, rng)
		full, early := runAll(t, q, false, false), runAll(t, q, false, true)
		for j := range full {
			f, e := full[j], early[j]
			if e.Fate == FateStopped {
				stopped++
				require.NotNil(t, f.Meets)
				assert.False(t, *f.Meets, "question %d, %s stopped (%s) but meets the SLO when replayed", i, e.Key, e.Reason)
				assert.Equal(t, FateSimulated, f.Fate)
				continue
			}
			assert.Equal(t, f, e, "question %d, %s", i, e.Key)
		}
	}
	assert.Positive(t, stopped, "no replay stopped in the sample")
}

// encoded is every candidate's result of q on jobs goroutines, as JSON.
func encoded(t *testing.T, q *Question, jobs int) string {
	t.Helper()
	cands, _ := q.Candidates()
	var rs []Result
	require.NoError(t, q.Run(context.Background(), cands, Options{Jobs: jobs}, func(r Result) error {
		rs = append(rs, r)
		return nil
	}))
	b, err := json.Marshal(rs)
	require.NoError(t, err)
	return string(b)
}

// The same search gives the same results whatever the goroutines.
func TestRunIsDeterministic(t *testing.T) {
	q := randomQuestion(t, rand.New(rand.NewPCG(1, 2)))
	one := encoded(t, q, 1)
	assert.Equal(t, one, encoded(t, q, 3))
	assert.Equal(t, one, encoded(t, q, 2))
}

// mustExceed by hand: of 2,000 values the p90 (numpy's linear interpolation)
// sits between sorted positions 1799 and 1800, so 2000 − 1799 = 201 values
// over a bound put it over the bound; the p50 of 4 values is between
// positions 1 and 2: 3 values suffice; p100 is the maximum: one.
func TestMustExceed(t *testing.T) {
	assert.Equal(t, 201, mustExceed(2000, 90))
	assert.Equal(t, 3, mustExceed(4, 50))
	assert.Equal(t, 1, mustExceed(10, 100))
	assert.Equal(t, 10, mustExceed(10, 0.01))
	// Percentile is numpy's: p50 of 1..4 is 2.5, p90 of 1..10 is 9.1
	assert.InDelta(t, 2.5, Percentile([]float64{4, 1, 3, 2}, 50), 1e-12)
	assert.InDelta(t, 9.1, Percentile([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90), 1e-12)
	assert.True(t, math.IsInf(Percentile([]float64{1, 2, math.Inf(1)}, 90), 1))
	assert.Equal(t, 2.0, Percentile([]float64{1, 2, math.Inf(1)}, 50))
}

// With aic, the candidates share their measured perf models (replay.PerfCache)
// across goroutines: the results are the same as one at a time (go test -race
// checks the sharing).
func TestSharedMeasuredModelsGiveTheSameResults(t *testing.T) {
	const db = "../../../shared/data/aic/systems"
	if _, err := os.Stat(db); err != nil {
		t.Skip("no aic tables at " + db)
	}
	s, err := config.DecodeYAML([]byte(`
engine: {model: meta-llama/Llama-3.1-8B-Instruct, system: h100_sxm, perf: {source: aic, database: ` + db + `}}
traffic:
  source: {type: synthetic, num_requests: 100, isl: {kind: uniform, min: 500, max: 1500}, osl: {kind: uniform, min: 20, max: 200}}
  load: {mode: rate, rate_rps: 20}
`))
	require.NoError(t, err)
	sp := Space{GPUs: []int{1, 2}, MaxNumSeqs: []int{32, 256}, MaxNumBatchedTokens: []int{2048}, Weights: []string{"", "fp8"},
		KVCache: []string{""}, Modes: []string{Aggregated}}
	// two questions: two caches, the first filled one candidate at a time
	ask := func() *Question {
		q, err := NewQuestion(s, sp, SLO{TTFTMs: 200, TPOTMs: 15, Percentile: 90})
		require.NoError(t, err)
		return q
	}
	assert.Equal(t, encoded(t, ask(), 1), encoded(t, ask(), 4))
}

// Stopping a search (its context canceled, as pybind's Stop does on Ctrl-C)
// returns the error once the candidates in flight return; the results
// handed over before it stand, in candidate order, and none after.
func TestRunStopsAndKeepsWhatItHanded(t *testing.T) {
	q := randomQuestion(t, rand.New(rand.NewPCG(1, 2)))
	q.Prune = false
	cands, _ := q.Candidates()
	require.Greater(t, len(cands), 4)
	ctx, cancel := context.WithCancel(context.Background())
	var got []int
	err := q.Run(ctx, cands, Options{Jobs: 2}, func(r Result) error {
		got = append(got, r.Index)
		if len(got) == 3 {
			cancel()
		}
		return nil
	})
	require.Error(t, err)
	assert.Equal(t, []int{0, 1, 2}, got)
}

func TestMaxOutputTPS(t *testing.T) {
	// ten requests one second apart of 100 output tokens each; at p90 two
	// misses settle the SLO (mustExceed(10, 90) = 2), so a deployment that
	// meets it completes at least 9, whose sends span at least 8 s: its
	// window holds at most the 1,000 output tokens over 8 s
	o := &replay.Offer{InputTokens: make([]int, 10), OutputTokens: make([]int, 10), Exact: true}
	for i := range 10 {
		o.OutputTokens[i] = 100
		o.SendNs = append(o.SendNs, int64(i)*1e9)
	}
	tps, span, m, ok := newLoad(o).maxOutputTPS(SLO{TTFTMs: 100, Percentile: 90})
	if !ok || m != 9 || span != 8 || tps != 125 {
		t.Fatalf("got %v tok/s over %v s of %d sends (%v), want 125 over 8 of 9", tps, span, m, ok)
	}
	// at p50 six misses settle it (mustExceed(10, 50) = 6): at least 5
	// complete, whose sends span at least 4 s: 250 tok/s
	if tps, _, m, _ := newLoad(o).maxOutputTPS(SLO{TTFTMs: 100, Percentile: 50}); m != 5 || tps != 250 {
		t.Fatalf("p50: %v tok/s of %d sends, want 250 of 5", tps, m)
	}
	// sends that depend on the deployment (a closed loop) bound nothing
	o.SendNs = nil
	if _, _, _, ok := newLoad(o).maxOutputTPS(SLO{TTFTMs: 100, Percentile: 90}); ok {
		t.Fatal("a closed loop is bounded")
	}
}
