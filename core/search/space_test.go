package search

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tinyMoE is a small Qwen3-MoE model: 6 attention heads (TP 4 does not
// divide them), 2 KV heads, 4 experts (at most 4 expert-parallel ranks).
const tinyMoE = `{"architectures": ["Qwen3MoeForCausalLM"], "num_hidden_layers": 2, "hidden_size": 384,
 "num_attention_heads": 6, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
 "vocab_size": 1000, "max_position_embeddings": 4096, "num_experts": 4, "num_experts_per_tok": 2,
 "moe_intermediate_size": 256, "decoder_sparse_step": 1, "mlp_only_layers": [], "torch_dtype": "bfloat16"}`

func tinyArch(t *testing.T) *model.Arch {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(p, []byte(tinyMoE), 0o644))
	a, err := model.Load(p, "")
	require.NoError(t, err)
	return a
}

func layouts(c []Candidate, mode string) []string {
	var out []string
	for _, x := range c {
		if x.Mode != mode {
			continue
		}
		var ps []string
		for _, p := range x.Pools {
			ps = append(ps, p.String())
		}
		out = append(out, strings.Join(ps, " + "))
	}
	return out
}

// The enumeration of a small MoE model on 4 GPUs (TP 1, 2, 4; DP 1, 2, 4; EP
// off and on; one choice of every other axis) is, by hand: every worker
// layout of at most 4 GPUs whose TP divides the 6 heads (TP 4 does not: it is
// listed invalid, once per DP/EP choice of one worker that fits), with EP only
// across 2 or more GPUs (on one GPU it is no expert parallelism); aggregated,
// each with every worker count that fits; P/D, every prefill pool of under 4
// GPUs with every decode pool that fits beside it, each pool with each of its
// own batch limits (the prefill pool's two token budgets, the decode pool's
// sequence counts that its tokens hold: 4096 sequences in 2048 tokens is no
// vLLM server).
func TestEnumerateSmallMoEOnFourGPUs(t *testing.T) {
	sp := Space{GPUs: []int{1, 2, 3, 4}, Modes: []string{Aggregated, Disaggregated}, TP: []int{1, 2, 4},
		DP: []int{1, 2, 4}, EP: []bool{false, true}, MaxNumSeqs: []int{64}, MaxNumBatchedTokens: []int{2048},
		PrefillMaxNumSeqs: []int{64}, PrefillMaxNumBatchedTokens: []int{2048, 4096},
		DecodeMaxNumSeqs: []int{64, 128, 4096}, DecodeMaxNumBatchedTokens: []int{2048},
		Weights: []string{""}, KVCache: []string{""}}
	cands, invalid := Enumerate(sp, tinyArch(t))
	assert.Equal(t, []string{
		"1×TP1", "2×TP1", "3×TP1", "4×TP1", // TP1 DP1, 1 to 4 workers
		"1×TP1 DP2", "2×TP1 DP2", "1×TP1 DP2 EP2", "2×TP1 DP2 EP2",
		"1×TP1 DP4", "1×TP1 DP4 EP4",
		"1×TP2", "2×TP2", "1×TP2 EP2", "2×TP2 EP2",
		"1×TP2 DP2", "1×TP2 DP2 EP4",
	}, layouts(cands, Aggregated))
	// P/D: a prefill pool of 1 GPU (1×TP1) has 7 decode pools beside it (1, 2 or 3
	// TP1 workers, or one of the four 2-GPU workers), 2×TP1 has 6, 3×TP1 one;
	// each of the four 2-GPU workers as the prefill pool has 6: 7 + 6 + 1 + 24
	// each of the 38 with 2 prefill limits × 2 decode limits: 152 candidates,
	// the decode pool's limits inner
	pd := layouts(cands, Disaggregated)
	assert.Len(t, pd, 38*4)
	assert.Len(t, slices.Compact(slices.Clone(pd)), 38)
	assert.Equal(t, "1×TP1 + 1×TP1", pd[0])
	var limits []string
	for _, c := range cands {
		if c.Mode == Disaggregated && len(limits) < 5 {
			limits = append(limits, c.Key())
		}
	}
	assert.Equal(t, []string{
		"disaggregated 1×TP1+1×TP1 seqs=64+64 tokens=2048+2048 weights=checkpoint kv=default",
		"disaggregated 1×TP1+1×TP1 seqs=64+128 tokens=2048+2048 weights=checkpoint kv=default",
		"disaggregated 1×TP1+1×TP1 seqs=64+64 tokens=4096+2048 weights=checkpoint kv=default",
		"disaggregated 1×TP1+1×TP1 seqs=64+128 tokens=4096+2048 weights=checkpoint kv=default",
		"disaggregated 1×TP1+2×TP1 seqs=64+64 tokens=2048+2048 weights=checkpoint kv=default",
	}, limits)
	assert.Contains(t, pd, "1×TP2 EP2 + 2×TP1")
	assert.NotContains(t, pd, "1×TP1 DP4 + 1×TP1") // 5 GPUs
	for _, c := range cands {
		assert.LessOrEqual(t, c.GPUs(), 4)
		for _, p := range c.Pools {
			assert.NotEqual(t, 4, p.TP, "TP 4 does not divide 6 heads")
		}
	}
	var bad []string
	for _, inv := range invalid {
		bad = append(bad, inv.Layout.Parallel().String())
		assert.Contains(t, inv.Reason, "does not divide num_attention_heads = 6")
	}
	sort.Strings(bad)
	assert.Equal(t, []string{"TP4", "TP4 EP4"}, bad)
	for i, c := range cands {
		assert.Equal(t, i, c.Index)
	}

	// shared limits (the engine's own block, for both pools): the decode
	// lists' 2 pairs for each of the 38, no pool limits of their own
	sp.SharedPDLimits = true
	shared, _ := Enumerate(sp, tinyArch(t))
	n := 0
	for _, c := range shared {
		if c.Mode == Disaggregated {
			n++
			assert.False(t, c.PerPool())
			assert.Equal(t, 2048, c.MaxNumBatchedTokens)
		}
	}
	assert.Equal(t, 38*2, n)
	// the same space twice: the same list
	again, _ := Enumerate(sp, tinyArch(t))
	assert.Equal(t, shared, again)
}

// A dense model enumerates no DP or EP; the default space has the engine's
// own batch limits beside the defaults, and fp8 weights and KV on a GPU that
// has fp8 tensor cores for a bf16 checkpoint.
func TestDefaultSpaceDense(t *testing.T) {
	q, err := config.DecodeYAML([]byte(`
engine: {model: meta-llama/Llama-3.1-8B-Instruct, system: h100_sxm}
traffic: {source: {type: synthetic, num_requests: 10, isl: 100, osl: 10}, load: {mode: rate, rate_rps: 1}}
`))
	require.NoError(t, err)
	sys, _ := hardware.Builtin("h100_sxm")
	arch, _ := model.Builtin("meta-llama/Llama-3.1-8B-Instruct")
	require.NoError(t, q.ResolveSchedulerDefaults(sys.MemCapacity, sys.Name))
	sp, err := DefaultSpace(Space{GPUs: []int{1, 2, 3, 4, 5, 6, 7, 8}}, q, arch, sys)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 4, 8}, sp.TP)
	assert.Equal(t, []int{1}, sp.DP)
	assert.Equal(t, []bool{false}, sp.EP)
	assert.Equal(t, []int{64, 128, 256, 512, 1024}, sp.MaxNumSeqs) // vLLM's 1024 on an H100
	assert.Equal(t, []int{2048, 8192, 16384}, sp.MaxNumBatchedTokens)
	// P/D: the prefill pool every token budget at the default sequences, the
	// decode pool every sequence count at the default tokens
	assert.Equal(t, []int{1024}, sp.PrefillMaxNumSeqs)
	assert.Equal(t, []int{2048, 8192, 16384}, sp.PrefillMaxNumBatchedTokens)
	assert.Equal(t, []int{64, 128, 256, 512, 1024}, sp.DecodeMaxNumSeqs)
	assert.Equal(t, []int{8192}, sp.DecodeMaxNumBatchedTokens)
	assert.False(t, sp.SharedPDLimits)
	assert.Equal(t, []string{"", "fp8"}, sp.Weights)
	assert.Equal(t, []string{"", "fp8"}, sp.KVCache)
	assert.Equal(t, []string{Aggregated, Disaggregated}, sp.Modes)
	require.NotNil(t, sp.KVTransfer)
	assert.InDelta(t, sys.IntraNodeBW/1e9, sp.KVTransfer.BandwidthGBPerS, 1e-9)
	cands, invalid := Enumerate(sp, arch)
	assert.Empty(t, invalid)
	for _, c := range cands {
		for _, p := range c.Pools {
			assert.Equal(t, 1, p.DP)
			assert.False(t, p.EP)
		}
	}
	// Count, by hand: aggregated, 15 layouts (8, 4, 2, 1 worker counts of TP
	// 1, 2, 4, 8 that make a count of 1–8) × 15 limit pairs (5 sequences × 3
	// token budgets, each ≥ the sequences) × 4 formats = 900; P/D, a prefill
	// pool of P GPUs beside ⌊(8−P)/d⌋ decode pools of TP d workers: TP1
	// prefill P = 1…7 gives 11+10+8+7+4+3+1 = 44, TP2 (P = 2, 4, 6) 10+7+3 =
	// 20, TP4 (P = 4) 7: 71 pairs × 15 limit pairs (3 prefill × 5 decode) × 4
	// formats = 4,260; 5,160 in all.
	assert.Equal(t, 5160, Count(sp, arch))
	assert.Len(t, cands, 5160)
	for _, gpus := range [][]int{{3, 8}, {2, 5, 7}, {8}} { // sparse counts: one family per total that fits
		sparse := sp
		sparse.GPUs = gpus
		c, _ := Enumerate(sparse, arch)
		assert.Equal(t, len(c), Count(sparse, arch), "%v", gpus)
		sparse.SharedPDLimits = true
		c, _ = Enumerate(sparse, arch)
		assert.Equal(t, len(c), Count(sparse, arch), "%v shared", gpus)
	}
	_, err = DefaultSpace(Space{GPUs: []int{4, 2}}, q, arch, sys)
	assert.ErrorContains(t, err, "ascending")
	budget := make([]int, 100000)
	for i := range budget {
		budget[i] = i + 1
	}
	_, err = DefaultSpace(Space{GPUs: budget}, q, arch, sys)
	assert.EqualError(t, err, "gpus: 100000 GPUs: at most 65536") // the count, not the list
	_, err = DefaultSpace(Space{GPUs: []int{2}, Modes: []string{"pd"}}, q, arch, sys)
	assert.ErrorContains(t, err, "pd")
}

// A space past MaxCandidates, or past what the memory budget holds at
// bytesPerCandidate each, is refused by NewQuestion before any candidate is
// made, with its count (Count's, which the test above checks against the
// enumeration) and how to narrow it.
func TestNewQuestionRefusesASpaceTooLarge(t *testing.T) {
	yml := `
engine: {model: meta-llama/Llama-3.1-8B-Instruct, system: h100_sxm}
traffic: {source: {type: synthetic, num_requests: 10, isl: 100, osl: 10}, load: {mode: rate, rate_rps: 1}}
`
	q, err := config.DecodeYAML([]byte(yml))
	require.NoError(t, err)
	budget := func(n int) (gs []int) {
		for g := 1; g <= n; g++ {
			gs = append(gs, g)
		}
		return gs
	}
	slo := SLO{TTFTMs: 500, Percentile: 90}
	_, err = NewQuestion(q, Space{GPUs: budget(512)}, slo)
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "gpus", ce.Field)
	arch, _ := model.Builtin("meta-llama/Llama-3.1-8B-Instruct")
	sys, _ := hardware.Builtin("h100_sxm")
	r := q.Clone()
	require.NoError(t, r.ResolveSchedulerDefaults(sys.MemCapacity, sys.Name))
	sp, err := DefaultSpace(Space{GPUs: budget(512)}, r, arch, sys)
	require.NoError(t, err)
	n := Count(sp, arch)
	assert.Greater(t, n, MaxCandidates)
	assert.Contains(t, ce.Msg, fmt.Sprintf("the space holds %d candidates (GPU counts 1–512), more than the search's limit of 50000", n))
	assert.Contains(t, ce.Msg, "--tp, --modes")
	// 5,160 candidates on 8 GPUs (TestDefaultSpaceDense) pass; with a budget
	// of 0.2 GB, 0.2e9 / 50,000 bytes = 4,000 candidates fit, and they do not
	_, err = NewQuestion(q, Space{GPUs: budget(8)}, slo)
	require.NoError(t, err)
	g := 0.2
	q.Execution.MaxMemoryGB = &g
	_, err = NewQuestion(q, Space{GPUs: budget(8)}, slo)
	assert.ErrorContains(t, err, "gpus: the space holds 5160 candidates (GPU counts 1–8), more than the 4000 that fit in its memory budget of 0.2 GB (execution.max_memory_gb")
	assert.ErrorContains(t, err, "or raise execution.max_memory_gb")
}

// A candidate as a spec: its workers, the engine's own batch-limit fields
// and the quantization, the question otherwise unchanged.
func TestCandidateSpec(t *testing.T) {
	q, err := config.DecodeYAML([]byte(`
engine: {model: meta-llama/Llama-3.1-8B-Instruct, system: h100_sxm, backend: trtllm}
traffic: {source: {type: synthetic, num_requests: 10, isl: 100, osl: 10}, load: {mode: rate, rate_rps: 1}}
`))
	require.NoError(t, err)
	sp := Space{KVTransfer: &config.KVTransfer{BandwidthGBPerS: 50, LatencyMs: 0.2}}
	c := Candidate{Mode: Disaggregated, Pools: []Layout{{Count: 1, TP: 2, DP: 1}, {Count: 2, TP: 1, DP: 1}},
		MaxNumSeqs: 128, MaxNumBatchedTokens: 4096, KVCache: "fp8"}
	s := c.Spec(q, &sp)
	require.NotNil(t, s.Engine.Workers.Disaggregated)
	dg := s.Engine.Workers.Disaggregated
	assert.Equal(t, 2, dg.Prefill.TP)
	assert.Equal(t, 2, dg.Decode.Count)
	assert.Equal(t, 50.0, dg.KVTransfer.BandwidthGBPerS)
	assert.Equal(t, 128, s.Engine.TRTLLM.MaxBatchSize)  // TensorRT-LLM's name for it
	assert.Equal(t, 4096, s.Engine.TRTLLM.MaxNumTokens) // and for the token budget
	assert.Equal(t, "fp8", s.Engine.Quantization.KVCache)
	assert.Nil(t, q.Engine.Quantization, "the question is not changed")
	_, err = config.Decode(s.JSON())
	assert.NoError(t, err)
}

// A vLLM P/D candidate with limits per pool: each pool's servers get their
// own (engine.workers.disaggregated.*.scheduler, vLLM's flags per server),
// engine.scheduler stays the question's.
func TestCandidateSpecPerPool(t *testing.T) {
	q, err := config.DecodeYAML([]byte(`
engine: {model: meta-llama/Llama-3.1-8B-Instruct, system: h100_sxm, scheduler: {max_num_seqs: 256, max_num_batched_tokens: 8192}}
traffic: {source: {type: synthetic, num_requests: 10, isl: 100, osl: 10}, load: {mode: rate, rate_rps: 1}}
`))
	require.NoError(t, err)
	sp := Space{KVTransfer: &config.KVTransfer{BandwidthGBPerS: 50, LatencyMs: 0.2}}
	c := Candidate{Mode: Disaggregated, Pools: []Layout{{Count: 1, TP: 2, DP: 1}, {Count: 2, TP: 1, DP: 1}},
		MaxNumSeqs: 1024, MaxNumBatchedTokens: 16384, DecodeMaxNumSeqs: 128, DecodeMaxNumBatchedTokens: 8192}
	s := c.Spec(q, &sp)
	dg := s.Engine.Workers.Disaggregated
	require.NotNil(t, dg)
	assert.Equal(t, &config.PoolScheduler{MaxNumSeqs: 1024, MaxNumBatchedTokens: 16384}, dg.Prefill.Scheduler)
	assert.Equal(t, &config.PoolScheduler{MaxNumSeqs: 128, MaxNumBatchedTokens: 8192}, dg.Decode.Scheduler)
	assert.Equal(t, 256, s.Engine.Scheduler.MaxNumSeqs)
	assert.Equal(t, "disaggregated 1×TP2+2×TP1 seqs=1024+128 tokens=16384+8192 weights=checkpoint kv=default", c.Key())
	_, err = config.Decode(s.JSON())
	assert.NoError(t, err)
}
