package replay

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/report"
)

// refindEngine is the engine of the preemption worked cases: linear passes of
// 1 ms + 0.01 ms per prompt token computed (decodes cost nothing more), one
// worker, 16-token blocks, prefix caching on, a cache of %d blocks (and a
// max_model_len it holds).
const refindEngine = `
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  perf: {source: linear, base_ms: 1, per_prefill_token_ms: 0.01, per_decode_seq_ms: 0}
  scheduler: {max_num_batched_tokens: 512, max_num_seqs: 8, block_size: 16, enable_prefix_caching: %s, num_gpu_blocks: %d, max_model_len: %d}
`

func prefixStats(t *testing.T, rep *report.Report) report.PrefixCache {
	t.Helper()
	ps := rep.Metadata.PrefixCache
	require.Len(t, ps, 1)
	return ps[0]
}

// Case a: 22 blocks; two requests of 160 prompt / 40 output tokens from a
// closed loop of two clients.
//
//	pass 1        0 → 4.2     both prompts (320 tokens: 1 + 3.2 ms), 10 blocks
//	                          each; each samples its token 1 (161 tokens)
//	passes 2–17   4.2 → 20.2  16 decodes of 1 ms; each needs an 11th block at
//	                          pass 2 (22 in use); after pass 17 each has 17
//	                          tokens out, 176 in KV = 11 full blocks
//	pass 18       20.2        the first needs a 12th block: the second (the
//	                          newest) is preempted with 177 tokens; its 11
//	                          blocks are released tail first, and the first
//	                          takes the head of the queue, its block 10
//	passes 18–40  20.2 → 43.2 the first decodes tokens 18…40 (23 × 1 ms); at
//	                          193 tokens it takes a 13th block, evicting the
//	                          second's block 9
//	pass 41       43.2 → 44.53 the second finds its blocks 0–8 (144 tokens),
//	                          recomputes 177 − 144 = 33 tokens (1 + 0.33 ms)
//	                          and samples token 18
//	passes 42–63  → 66.53     22 decodes: tokens 19…40
//
// Before every full block was cached, the second recomputed all 177 tokens
// (1 + 1.77 ms) and ended at 43.2 + 2.77 + 22 = 67.97 ms.
func TestRefind_HandWorkedCaseA(t *testing.T) {
	synthetic := fmt.Sprintf(refindEngine, "true", 22, 352) + `
traffic:
  source: {type: synthetic, num_requests: 2, isl: 160, osl: 40}
  load: {mode: concurrency, concurrency: 2}
`
	rep := runYAML(t, synthetic)
	require.Len(t, rep.Records, 2)
	r1, r2 := rep.Records[0], rep.Records[1]
	assert.InDelta(t, 43.2, r1.E2E(), 1e-9)
	assert.Equal(t, 0, r1.Preemptions)
	assert.InDelta(t, 66.53, r2.E2E(), 1e-9)
	assert.Equal(t, 1, r2.Preemptions)
	ttft, _ := r2.TTFT()
	assert.InDelta(t, 4.2, ttft, 1e-9) // its first token came before the preemption
	// cached_tokens is the first admission's hit; the re-admission's 144 hit
	// tokens of 177 are counted apart (vLLM's preempted_hits).
	assert.Equal(t, 0, r1.CachedTokens)
	assert.Equal(t, 0, r2.CachedTokens)
	ps := prefixStats(t, rep)
	assert.Equal(t, report.PrefixCache{Requests: 2, Queries: 320, Hits: 0,
		PreemptedRequests: 1, PreemptedQueries: 177, PreemptedHits: 144}, ps)
	assert.Equal(t, int64(0), rep.Summary.TotalCachedTokens)

	// The same two requests as a Mooncake trace with distinct hash_ids give the
	// same records.
	trace := fmt.Sprintf(refindEngine, "true", 22, 352) + fmt.Sprintf(`
traffic:
  source: {type: mooncake, path: %s}
  load: {mode: trace}
`, writeTrace(t, []traceRow{{ts: 0, in: 160, out: 40, hashes: []int{1}}, {ts: 0, in: 160, out: 40, hashes: []int{2}}}))
	assert.Equal(t, rep.Records, runYAML(t, trace).Records)

	// With prefix caching off nothing is found again: today's 67.97 ms.
	off := runYAML(t, strings.Replace(synthetic, "enable_prefix_caching: true", "enable_prefix_caching: false", 1))
	assert.InDelta(t, 43.2, off.Records[0].E2E(), 1e-9)
	assert.InDelta(t, 67.97, off.Records[1].E2E(), 1e-9)
}

// Case b: 12 blocks; Mooncake rows of 32 prompt / 70 output tokens with
// hash_ids [1] and [2], both at 0.
//
//	pass 1        0 → 1.64    both prompts (64 tokens: 1 + 0.64 ms), 2 blocks
//	                          each; token 1 each (33 tokens)
//	passes 2–65   → 65.64     64 decodes; a block boundary every 16 tokens:
//	                          after pass 65 each has 65 tokens out, 96 in KV =
//	                          6 full blocks (12 in use)
//	pass 66       65.64       the first needs a 7th block: the second is
//	                          preempted with 97 tokens; the first takes the
//	                          head of the queue, the second's block 5
//	passes 66–70  → 70.64     the first decodes tokens 66…70
//	pass 71       → 71.81     the second finds blocks 0–4 (its prompt and 3
//	                          generated blocks, 80 tokens), recomputes 17
//	                          tokens (1 + 0.17 ms), samples token 66
//	passes 72–75  → 75.81     4 decodes: tokens 67…70
//
// Before, only the two prompt blocks were found: 65 tokens recomputed (1 +
// 0.65 ms), E2E 70.64 + 1.65 + 4 = 76.29 ms.
func TestRefind_HandWorkedCaseB(t *testing.T) {
	yml := fmt.Sprintf(refindEngine, "true", 12, 192) + fmt.Sprintf(`
traffic:
  source: {type: mooncake, path: %s}
  load: {mode: trace}
`, writeTrace(t, []traceRow{{ts: 0, in: 32, out: 70, hashes: []int{1}}, {ts: 0, in: 32, out: 70, hashes: []int{2}}}))
	rep := runYAML(t, yml)
	r1, r2 := rep.Records[0], rep.Records[1]
	assert.InDelta(t, 70.64, r1.E2E(), 1e-9)
	assert.InDelta(t, 75.81, r2.E2E(), 1e-9)
	assert.Equal(t, 1, r2.Preemptions)
	ps := prefixStats(t, rep)
	assert.Equal(t, int64(97), ps.PreemptedQueries)
	assert.Equal(t, int64(80), ps.PreemptedHits)
}

func recomputed(t *testing.T, rep *report.Report) int64 {
	t.Helper()
	r := rep.Metadata.RecomputedTokens
	require.Len(t, r, 1)
	return r[0]
}

// Turning prefix caching on changes a KV-starved synthetic run (prompts
// without content ids), because a preempted request finds its own blocks.
//
// Case a by hand: the second request held 176 tokens of KV when preempted.
// Caching on, it finds 144 of them and computes 33 tokens (32 of them again,
// plus token 177, never in the cache): recomputed_tokens 32, E2E 66.53 ms.
// Caching off, it computes all 177 (176 again): recomputed_tokens 176, E2E
// 67.97 ms.
//
// A busier run (six requests of 200/60 tokens from six clients on 40 blocks:
// each request grows from 13 to 17 blocks, so the newest are preempted) has
// no short hand timeline, but a bound holds whenever both settings preempt at
// the same points: every re-admission recomputes at most the KV it held
// (caching off: exactly that), so on ≤ off, and on < off as soon as one
// re-admission finds a block (preempted_hits > 0).
func TestRefind_CachingShortensAStarvedRun(t *testing.T) {
	spec := func(caching string, blocks, maxLen, n, isl, osl int) string {
		return fmt.Sprintf(refindEngine, caching, blocks, maxLen) + fmt.Sprintf(`
traffic:
  source: {type: synthetic, num_requests: %d, isl: %d, osl: %d}
  load: {mode: concurrency, concurrency: %d}
`, n, isl, osl, n)
	}
	on, off := runYAML(t, spec("true", 22, 352, 2, 160, 40)), runYAML(t, spec("false", 22, 352, 2, 160, 40))
	assert.Equal(t, int64(32), recomputed(t, on))
	assert.Equal(t, int64(176), recomputed(t, off))
	assert.InDelta(t, 66.53, on.Records[1].E2E(), 1e-9)
	assert.InDelta(t, 67.97, off.Records[1].E2E(), 1e-9)
	ps := prefixStats(t, on)
	assert.Equal(t, int64(177-144), ps.PreemptedQueries-ps.PreemptedHits, "the re-admission pass computes 33 tokens")
	assert.Zero(t, prefixStats(t, off).PreemptedQueries, "nothing is looked up with caching off")

	on, off = runYAML(t, spec("true", 40, 640, 6, 200, 60)), runYAML(t, spec("false", 40, 640, 6, 200, 60))
	require.Positive(t, off.Summary.Preemptions)
	require.Equal(t, off.Summary.Preemptions, on.Summary.Preemptions)
	require.Positive(t, prefixStats(t, on).PreemptedHits)
	assert.Less(t, recomputed(t, on), recomputed(t, off))
	assert.Less(t, on.Summary.DurationMs, off.Summary.DurationMs)
	t.Logf("%d preemptions; recomputed tokens %d (on) vs %d (off); %.2f ms vs %.2f ms",
		on.Summary.Preemptions, recomputed(t, on), recomputed(t, off), on.Summary.DurationMs, off.Summary.DurationMs)
}

// Property: requests without content ids behave exactly like the same
// requests with distinct hash_ids (ids unique to each request): identical
// records, whether or not the cache runs short.
func TestRefind_DistinctIDsEqualNoIDsProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	for trial := 0; trial < 40; trial++ {
		n := 1 + rng.IntN(12)
		withIDs, without := make([]traceRow, n), make([]string, n)
		ts := 0.0
		for i := range withIDs {
			ts += float64(rng.IntN(3)) * 2.5
			in, out := 1+rng.IntN(700), 1+rng.IntN(89)
			ids := make([]int, (in+511)/512)
			for k := range ids {
				ids[k] = 1000*i + k // distinct between requests
			}
			withIDs[i] = traceRow{ts: ts, in: in, out: out, hashes: ids}
			without[i] = fmt.Sprintf(`{"timestamp": %v, "input_length": %d, "output_length": %d}`, ts, in, out)
		}
		blocks := []int{60, 120, 1000}[rng.IntN(3)]
		bs := []int{8, 16}[rng.IntN(2)]
		eng := fmt.Sprintf(`
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  perf: {source: linear, base_ms: 1, per_prefill_token_ms: 0.01, per_decode_seq_ms: 0.05}
  workers: {aggregated: {count: %d}}
  scheduler: {max_num_batched_tokens: %d, max_num_seqs: %d, block_size: %d, num_gpu_blocks: %d, max_model_len: %d}
traffic:
  source: {type: mooncake, path: %%s}
  load: %s
`, 1+rng.IntN(2), []int{256, 2048}[rng.IntN(2)], []int{2, 8}[rng.IntN(2)], bs, blocks, blocks*bs,
			[]string{"{mode: trace}", "{mode: concurrency, concurrency: 3}"}[rng.IntN(2)])
		a := runYAML(t, fmt.Sprintf(eng, writeTrace(t, withIDs)))
		b := runYAML(t, fmt.Sprintf(eng, writeRaw(t, strings.Join(without, "\n")+"\n")))
		require.Equal(t, a.Records, b.Records, "trial %d", trial)
		require.Equal(t, a.Summary, b.Summary, "trial %d", trial)
	}
}
