package replay

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
)

// routed replays rows on two workers of the 1 ms engine (16-token blocks)
// under placement (and its kv_router block) and returns each request's
// worker and cached tokens.
func routed(t *testing.T, rows []traceRow, placement string) (workers, cached []int) {
	t.Helper()
	spec := replaceOnce(engine1ms(1000), "\n  scheduler:", fmt.Sprintf("\n  workers:\n    aggregated: {count: 2, placement: %s}\n  scheduler:", placement))
	rep := runYAML(t, spec+traceTraffic(t, rows, "{mode: trace}"))
	for _, r := range rep.Records {
		require.Equal(t, "completed", r.Status)
		workers, cached = append(workers, r.Worker), append(cached, r.CachedTokens)
	}
	return workers, cached
}

// Dynamo's KV router on two workers, weight 1, temperature 0: cost = prefill
// blocks + decode blocks. 64-token prompts (4 blocks of 16) with 2 output
// tokens; A, B, C are distinct hash ids.
//
//	r0 A at 0:   both empty, cost 64/16 + 4 = 8 on each: a tie, worker 0.
//	r1 B at 0:   worker 0 has r0 active: (64 + 64)/16 + (4 + 4) = 16;
//	             worker 1: 8. Worker 1.
//	r2 B at 50:  both idle again; worker 1's KV events said it cached B's 4
//	             blocks: 0 prefill blocks + 4 = 4 against worker 0's 8.
//	             Worker 1, which finds 48 tokens (its lookup leaves the last
//	             block to compute).
//	r3 C at 50:  worker 1 holds r2 (0 new prefill tokens, 4 blocks):
//	             0 + (4 + 4) = 8 + 4 = 12 with C's 64 tokens; worker 0: 8.
//	             Worker 0.
//
// With a 100 ms event lag the router has seen no event at 50 ms: r2 ties at 8
// and goes to worker 0, where nothing is cached.
func TestKVRouterPlacesByHand(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 64, out: 2, hashes: []int{1}}, {ts: 0, in: 64, out: 2, hashes: []int{2}},
		{ts: 50, in: 64, out: 2, hashes: []int{2}}, {ts: 50, in: 64, out: 2, hashes: []int{3}}}
	workers, cached := routed(t, rows, "kv_router")
	assert.Equal(t, []int{0, 1, 1, 0}, workers)
	assert.Equal(t, []int{0, 0, 48, 0}, cached)

	workers, cached = routed(t, rows, "kv_router, kv_router: {kv_event_lag_ms: 100}")
	assert.Equal(t, []int{0, 1, 0, 1}, workers, "r3 C: worker 0 now holds r2's 4 blocks and 64 tokens")
	assert.Equal(t, []int{0, 0, 0, 0}, cached)

	// Weight 0: the cache does not count, only decode blocks: r2 ties (4 on
	// each) and goes to worker 0; r3 then finds worker 1 lighter.
	workers, _ = routed(t, rows, "kv_router, kv_router: {kv_overlap_score_weight: 0}")
	assert.Equal(t, []int{0, 1, 0, 1}, workers)
}

// The router's index is the workers' caches: with no lag, after a replay
// whose small caches evict often, the blocks the index says each worker holds
// are exactly the shared blocks its cache holds (stored when cached, removed
// when evicted), and the active accounts are empty again.
func TestKVRouterIndexIsTheCaches(t *testing.T) {
	var rows []traceRow
	for i := 0; i < 120; i++ {
		in, g := 40+(i*37)%400, i%6 // 6 prompt families sharing a prefix of 16-token blocks
		ids := make([]int, (in+15)/16)
		for k := range ids {
			ids[k] = 1000*g + k
		}
		rows = append(rows, traceRow{ts: float64(i) * 3, in: in, out: 1 + i%7, hashes: ids})
	}
	spec := replaceOnce(engine1ms(60), "\n  scheduler:", "\n  workers:\n    aggregated: {count: 3, placement: kv_router}\n  scheduler:")
	traffic := fmt.Sprintf("traffic:\n  source: {type: mooncake, path: %s, isl_block_size: 16}\n  load: {mode: trace}\n", writeTrace(t, rows))
	s, err := config.DecodeYAML([]byte(spec + traffic))
	require.NoError(t, err)
	m, err := prepare(s, nil)
	require.NoError(t, err)
	defer m.tr.close()
	m.ctx, m.done = context.Background(), nil
	require.NoError(t, m.start())
	require.NoError(t, m.loop())
	require.NoError(t, m.checkEnd())
	r := m.pools[0].kv
	evicted := int64(0)
	for i, w := range m.workers {
		want := map[uint64]bool{}
		w.(interface{ ForEachCached(func(uint64)) }).ForEachCached(func(h uint64) { want[h] = true })
		got := map[uint64]bool{}
		for h := range want { // every block the cache holds, the index holds
			if slot, ok := r.cached.slot.Get(h); ok && r.cached.counts[int(slot)*r.cached.targets+i] > 0 {
				got[h] = true
			}
		}
		assert.Equal(t, want, got, "worker %d", i)
		assert.Equal(t, len(want), r.cached.size[i])
		evicted += w.Counters().KV.Evicted
		assert.Zero(t, r.tokens[i])
		assert.Zero(t, r.anon[i])
		assert.Zero(t, r.active.size[i])
	}
	assert.Positive(t, evicted, "the caches were small enough to evict")
}

// At a temperature above 0 Dynamo's softmax_sample draws a worker with
// probability ∝ exp(−cost / ((max − min) × T)): costs 4 and 8 at T = 1 give
// e^−1 / (e^−1 + e^−2) = 0.731 to the first.
func TestKVRouterSoftmax(t *testing.T) {
	p := &poolRT{pool: &pool{name: "aggregated", count: 2, dp: 1, kvRouter: &config.KVRouter{KVOverlapScoreWeight: 1, RouterTemperature: 1}}}
	p.cfg.BlockSize = 16
	r := newKVRouter(p, 7)
	first := 0
	const n = 20000
	for i := 0; i < n; i++ {
		r.cost[0], r.cost[1] = 4, 8
		if r.pick(4, 8) == 0 {
			first++
		}
	}
	want := math.Exp(-1) / (math.Exp(-1) + math.Exp(-2))
	assert.InDelta(t, want, float64(first)/n, 0.01)
	r.cost[0], r.cost[1] = 5, 5 // equal costs: uniform
	ones := 0
	for i := 0; i < n; i++ {
		r.cost[0], r.cost[1] = 5, 5
		ones += r.pick(5, 5)
	}
	assert.InDelta(t, 0.5, float64(ones)/n, 0.01)
}

// The vLLM production stack's prefix-aware router: a prompt goes to a worker
// that got its longest prefix before, at random among equals (every worker
// when none got its first block), whatever the load. Four workers; A, B, C:
// distinct 64-token prompts; AB: A's 512-token id then B's, so its first 4
// blocks are A's.
func TestPrefixAffinityByHand(t *testing.T) {
	rows := []traceRow{{ts: 0, in: 64, out: 2, hashes: []int{1}}, {ts: 0, in: 64, out: 2, hashes: []int{1}},
		{ts: 0, in: 64, out: 2, hashes: []int{2}}, {ts: 10, in: 600, out: 2, hashes: []int{1, 2}},
		{ts: 20, in: 64, out: 2, hashes: []int{3}}}
	spec := replaceOnce(engine1ms(1000), "\n  scheduler:", "\n  workers:\n    aggregated: {count: 4, placement: prefix_affinity}\n  scheduler:")
	rep := runYAML(t, spec+traceTraffic(t, rows, "{mode: trace}"))
	w := make([]int, len(rows))
	for i, r := range rep.Records {
		w[i] = r.Worker
	}
	assert.Equal(t, w[0], w[1], "the same prompt: the worker it went to, though that one is busy with it")
	assert.Equal(t, w[0], w[3], "A's blocks lead AB: A's worker")
	assert.Equal(t, 64, rep.Records[3].CachedTokens, "AB finds A's 4 blocks there")
	// the same spec replays the same placements (the router's stream is seeded)
	again := runYAML(t, spec+traceTraffic(t, rows, "{mode: trace}"))
	for i, r := range again.Records {
		assert.Equal(t, w[i], r.Worker)
	}
}
