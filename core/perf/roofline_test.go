package perf

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tinyArch is small enough to price by hand: h 4, n 2, kv 1, d 2, I 8, V 16,
// L 1, bf16, no q/k norm.
func tinyArch() *model.Arch {
	return &model.Arch{Name: "tiny", Architecture: "LlamaForCausalLM", Layers: 1, Hidden: 4, Heads: 2,
		KVHeads: 1, HeadDim: 2, Intermediate: 8, Vocab: 16, MaxPositionEmbeddings: 64, WeightDtype: model.BF16}
}

// specDefaults are the parameters a spec runs with when engine.perf gives
// none (core/config/defaults.go), as the replay builds them.
func specDefaults() RooflineParams {
	return RooflineParams{ComputeEfficiency: config.DefaultComputeEfficiency, MemoryEfficiency: config.DefaultMemoryEfficiency,
		PassOverheadUs: config.DefaultPassOverheadUs, SequenceOverheadUs: config.DefaultPerSequenceOverheadUs,
		LayerLatencyUs: config.DefaultLayerLatencyUs, AllReduceLatencyUs: CustomAllReduceLatencyUs}
}

// exactParams removes efficiencies and overheads: time = max(F/P, B/W).
var exactParams = RooflineParams{ComputeEfficiency: 1, MemoryEfficiency: 1}

func builtinSystem(t testing.TB, name string) *hardware.System {
	t.Helper()
	s, ok := hardware.Builtin(name)
	require.True(t, ok)
	return s
}

func builtinArch(t testing.TB, name string) *model.Arch {
	t.Helper()
	a, ok := model.Builtin(name)
	require.True(t, ok)
	return a
}

// TestGEMMRoofline checks one GEMM's roofline against the hand count and
// against the h200_sxm measurements quoted in docs/design.md ("Sanity values") (a roofline is
// a lower bound, so it must not exceed them).
func TestGEMMRoofline(t *testing.T) {
	const P, W = 989e12, 4.8e12 // h200 bf16 FLOP/s, B/s
	g := gemmConst{n: 6144, k: 4096, nk: 6144 * 4096}
	tests := []struct {
		name       string
		m, wBytes  float64
		flops      float64
		want       float64 // s
		measuredMs float64 // 0: no measurement quoted
	}{
		// F = 2·128·25,165,824 = 6,442,450,944 → 6.51 µs;
		// B = 2·25,165,824 + 128·(2·4096 + 2·6144) = 52,953,088 → 11.03 µs: memory bound.
		{"m128 bf16 memory bound", 128, 2, P, 52_953_088 / W, 0.0180},
		// F = 2·1024·25,165,824 = 51,539,607,552 → 52.11 µs;
		// B = 50,331,648 + 1024·20,480 = 71,303,168 → 14.85 µs: compute bound.
		{"m1024 bf16 compute bound", 1024, 2, P, 51_539_607_552 / P, 0.0648},
		// F = 2·8192·25,165,824 = 412,316,860,416 → 416.9 µs; B → 45.4 µs.
		{"m8192 bf16 compute bound", 8192, 2, P, 412_316_860_416 / P, 0.507},
		// fp8 at 1978e12: 412,316,860,416 / 1978e12 = 208.4 µs;
		// B = 25,165,824 + 8192·(4096 + 2·6144) = 159,383,552 → 33.2 µs.
		{"m8192 fp8 compute bound", 8192, 1, 2 * P, 412_316_860_416 / (2 * P), 0},
		// m = 0: the GEMM does not run.
		{"m0", 0, 2, P, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := gemmSeconds(tc.m, g, tc.wBytes, tc.flops, W)
			assert.InEpsilon(t, tc.want+1e-30, got+1e-30, 1e-12)
			if tc.measuredMs > 0 {
				assert.LessOrEqual(t, got*1e3, tc.measuredMs)
			}
		})
	}
}

// toySystem makes every count easy: 1 TFLOP/s bf16, 2 TFLOP/s fp8,
// 1 GB/s HBM (1 byte = 1 ns), 1 GB/s NVLink.
func toySystem() *hardware.System {
	return &hardware.System{Name: "toy", MemBW: 1e9, MemCapacity: 1 << 30, BF16Flops: 1e12, FP8Flops: 2e12,
		MemBWScaling: 1, GPUsPerNode: 8, IntraNodeBW: 1e9}
}

// assertBreakdown compares every field within 1e-6 ns (float rounding).
func assertBreakdown(t *testing.T, want, got Breakdown) {
	t.Helper()
	assert.InDelta(t, want.GEMMNs, got.GEMMNs, 1e-6, "GEMMNs")
	assert.InDelta(t, want.ContextAttentionNs, got.ContextAttentionNs, 1e-6, "ContextAttentionNs")
	assert.InDelta(t, want.GenerationAttentionNs, got.GenerationAttentionNs, 1e-6, "GenerationAttentionNs")
	assert.InDelta(t, want.MemoryOpsNs, got.MemoryOpsNs, 1e-6, "MemoryOpsNs")
	assert.InDelta(t, want.AllReduceNs, got.AllReduceNs, 1e-6, "AllReduceNs")
	assert.InDelta(t, want.EmbeddingNs, got.EmbeddingNs, 1e-6, "EmbeddingNs")
	assert.InDelta(t, want.LogitsNs, got.LogitsNs, 1e-6, "LogitsNs")
	assert.InDelta(t, want.OverheadNs, got.OverheadNs, 1e-6, "OverheadNs")
}

// TestRooflineTinyPassByHand prices whole passes of tinyArch on toySystem.
// At 1 GB/s and ≥ 1 TFLOP/s every op is memory bound and costs 1 ns per byte.
func TestRooflineTinyPassByHand(t *testing.T) {
	r, err := NewRoofline(tinyArch(), toySystem(), RooflineOptions{TP: 1, Params: exactParams})
	require.NoError(t, err)

	t.Run("one decode", func(t *testing.T) {
		// x = 1 token, one decode at KV 3, 1 sampler. GEMM bytes 2·N·K + m·(2K + 2N):
		//   qkv (2+2·1)·2 = 8×4: 64 + (8+16) = 88; o 4×4: 32 + 16 = 48;
		//   gate_up 16×4: 128 + 40 = 168; down 4×8: 64 + 24 = 88 → 392.
		// Memory ops per token: norms 2·8·4 = 64, activation 6·8 = 48 → 112.
		// Generation attention: K,V per token-layer 2·1·2·2 = 8 B; ctx 3+1 = 4;
		//   B = 8·(4+1) + 4·(2·2)·1 = 56 (F = 64 FLOP: 0.064 ns, below).
		// Embedding 4·4 = 16. Logits 16×4 bf16, m = 1: 128 + (8+32) = 168.
		// Total 392 + 112 + 56 + 16 + 168 = 744 ns.
		b := Batch{Decodes: 1, DecodeKVSum: 3, Samplers: 1}
		assertBreakdown(t, Breakdown{GEMMNs: 392, GenerationAttentionNs: 56, MemoryOpsNs: 112,
			EmbeddingNs: 16, LogitsNs: 168}, r.Breakdown(&b))
		assert.Equal(t, int64(744), r.PassTime(&b))
	})
	t.Run("one chunk with prefix", func(t *testing.T) {
		// x = 3 new tokens after a 2-token prefix, completing (1 sampler).
		// GEMMs, m = 3: qkv 64 + 3·24 = 136; o 32 + 3·16 = 80;
		//   gate_up 128 + 3·40 = 248; down 64 + 3·24 = 136 → 600.
		// Memory ops 3·112 = 336; embedding 3·16 = 48; logits 168.
		// Context attention: S = 5, p = 2, pairs 3 + 4 + 5 = 12 = 3·(5+2+1)/2;
		//   F = 4·4·12 = 192 FLOP (0.192 ns); B = 8·(5+3) + 16·3 = 112.
		// Total 600 + 336 + 48 + 168 + 112 = 1264 ns.
		b := Batch{Prefill: []Chunk{{NewTokens: 3, PrefixTokens: 2}}, Samplers: 1}
		assertBreakdown(t, Breakdown{GEMMNs: 600, ContextAttentionNs: 112, MemoryOpsNs: 336,
			EmbeddingNs: 48, LogitsNs: 168}, r.Breakdown(&b))
		assert.Equal(t, int64(1264), r.PassTime(&b))
	})
	t.Run("partial chunk has no logits", func(t *testing.T) {
		// As above without the sampler: 1264 − 168 = 1096 ns.
		b := Batch{Prefill: []Chunk{{NewTokens: 3, PrefixTokens: 2}}}
		assert.Equal(t, int64(1096), r.PassTime(&b))
	})
	t.Run("compute bound", func(t *testing.T) {
		// HBM 1e15 B/s (bytes ≈ free), 1 GFLOP/s bf16: 1 FLOP = 1 ns.
		sys := toySystem()
		sys.MemBW, sys.BF16Flops, sys.FP8Flops = 1e15, 1e9, 1e9
		rc, err := NewRoofline(tinyArch(), sys, RooflineOptions{TP: 1, Params: exactParams})
		require.NoError(t, err)
		// One decode at KV 3: GEMMs 2·1·(32 + 16 + 64 + 32) = 288; attention
		// 4·4·4 = 64; logits 2·1·64 = 128; memory ops and embedding
		// (128 B at 1e15 B/s = 0.000128 ns) round away → 480 ns.
		assert.Equal(t, int64(480), rc.PassTime(&Batch{Decodes: 1, DecodeKVSum: 3, Samplers: 1}))
	})
	t.Run("overhead", func(t *testing.T) {
		p := exactParams
		p.PassOverheadUs = 2 // 2,000 ns
		ro, err := NewRoofline(tinyArch(), toySystem(), RooflineOptions{TP: 1, Params: p})
		require.NoError(t, err)
		assert.Equal(t, int64(2744), ro.PassTime(&Batch{Decodes: 1, DecodeKVSum: 3, Samplers: 1}))
		assert.Equal(t, int64(2000), ro.PassTime(&Batch{}))
	})
	t.Run("per-sequence overhead", func(t *testing.T) {
		// 2,000 ns fixed + 0.5 µs per scheduled sequence. One decode: 744 +
		// 2,000 + 500 = 3,244 ns. The chunk with prefix plus the decode: two
		// sequences, kernels priced as a whole pass; the overhead part is
		// 2,000 + 2·500 = 3,000 ns.
		p := exactParams
		p.PassOverheadUs, p.SequenceOverheadUs = 2, 0.5
		ro, err := NewRoofline(tinyArch(), toySystem(), RooflineOptions{TP: 1, Params: p})
		require.NoError(t, err)
		assert.Equal(t, int64(3244), ro.PassTime(&Batch{Decodes: 1, DecodeKVSum: 3, Samplers: 1}))
		two := Batch{Prefill: []Chunk{{NewTokens: 3, PrefixTokens: 2}}, Decodes: 1, DecodeKVSum: 3, Samplers: 2}
		assert.InDelta(t, 3000, ro.Breakdown(&two).OverheadNs, 1e-9)
		assert.Equal(t, int64(2000), ro.PassTime(&Batch{}))
		p.SequenceOverheadUs = -1
		_, err = NewRoofline(tinyArch(), toySystem(), RooflineOptions{TP: 1, Params: p})
		assert.ErrorContains(t, err, "per_sequence_overhead_us = -1")
	})
	t.Run("layer latency", func(t *testing.T) {
		// 1.5 µs per layer, tiny arch has 1 layer: the one-decode pass costs
		// 744 + 1,500 = 2,244 ns; an empty pass runs no layer and stays at 1 ns.
		p := exactParams
		p.LayerLatencyUs = 1.5
		rl, err := NewRoofline(tinyArch(), toySystem(), RooflineOptions{TP: 1, Params: p})
		require.NoError(t, err)
		one := Batch{Decodes: 1, DecodeKVSum: 3, Samplers: 1}
		assert.Equal(t, int64(2244), rl.PassTime(&one))
		assert.InDelta(t, 1500, rl.Breakdown(&one).KernelLatencyNs, 1e-9)
		assert.Equal(t, int64(1), rl.PassTime(&Batch{}))
		p.LayerLatencyUs = math.Inf(1)
		_, err = NewRoofline(tinyArch(), toySystem(), RooflineOptions{TP: 1, Params: p})
		assert.ErrorContains(t, err, "layer_latency_us")
	})
}

func TestRooflineAllReduceByHand(t *testing.T) {
	p := exactParams
	p.AllReduceLatencyUs = 1
	r, err := NewRoofline(tinyArch(), toySystem(), RooflineOptions{TP: 2, Params: p})
	require.NoError(t, err)
	// TP 2, x = 1: each all-reduce 1,000 ns + 2·(2−1)/2 · 1·4·2 B / 1 GB/s
	// = 1,008 ns; 2 per layer · 1 layer + 1 (embedding) = 3 → 3,024 ns.
	bd := r.Breakdown(&Batch{Decodes: 1, DecodeKVSum: 3, Samplers: 1})
	assert.InDelta(t, 3024, bd.AllReduceNs, 1e-9)
	// TP 1 has none.
	r1, err := NewRoofline(tinyArch(), toySystem(), RooflineOptions{TP: 1, Params: p})
	require.NoError(t, err)
	assert.Zero(t, r1.Breakdown(&Batch{Decodes: 1, DecodeKVSum: 3, Samplers: 1}).AllReduceNs)
	assert.Equal(t, map[string]any{"latency_us": 1.0, "bus_bw_gb_s": 1.0,
		"source": "nominal link (node.intra_node_bw) and the kernel latency"}, r.Metadata()["allreduce"])
	assert.NotContains(t, r1.Metadata(), "allreduce")
}

func TestRooflineMeasuredAllReduce(t *testing.T) {
	// A system with a measured all-reduce uses it instead of IntraNodeBW and
	// AllReduceLatencyUs: TP 2, x = 1: 2,000 ns + 2·(2−1)/2 · 1·4·2 B /
	// 0.5 GB/s = 2,016 ns; × 3 all-reduces = 6,048 ns.
	sys := toySystem()
	sys.AllReduce = map[int]hardware.AllReduceLink{2: {LatencyS: 2e-6, BusBW: 0.5e9}}
	p := exactParams
	p.AllReduceLatencyUs = 1
	r, err := NewRoofline(tinyArch(), sys, RooflineOptions{TP: 2, Params: p})
	require.NoError(t, err)
	bd := r.Breakdown(&Batch{Decodes: 1, DecodeKVSum: 3, Samplers: 1})
	assert.InDelta(t, 6048, bd.AllReduceNs, 1e-9)
	md := r.Metadata()["allreduce"].(map[string]any)
	assert.InDelta(t, 2.0, md["latency_us"], 1e-12)
	assert.InDelta(t, 0.5, md["bus_bw_gb_s"], 1e-12)
	assert.Contains(t, md["source"], "measured")
}

func TestRooflineEmptyPassAndName(t *testing.T) {
	r, err := NewRoofline(tinyArch(), toySystem(), RooflineOptions{TP: 1, Params: specDefaults()})
	require.NoError(t, err)
	assert.Equal(t, "roofline-v3", r.Name())
	// At the spec's defaults an empty pass costs the 1,000 µs pass overhead
	// (no sequence, no layer runs).
	assert.Equal(t, int64(1_000_000), r.PassTime(&Batch{}))
	r0, err := NewRoofline(tinyArch(), toySystem(), RooflineOptions{TP: 1, Params: exactParams})
	require.NoError(t, err)
	assert.Equal(t, int64(1), r0.PassTime(&Batch{}))
	// No parameter has a default here: zero params are refused.
	_, err = NewRoofline(tinyArch(), toySystem(), RooflineOptions{TP: 1})
	assert.ErrorContains(t, err, "compute_efficiency = 0")
}

// randomBatch draws 0–4 chunks and 0–64 decodes.
func randomBatch(rng *rand.Rand) Batch {
	var b Batch
	for range rng.IntN(5) {
		b.Prefill = append(b.Prefill, Chunk{NewTokens: 1 + rng.IntN(2048), PrefixTokens: rng.IntN(8192)})
	}
	for range rng.IntN(65) {
		b.AddDecode(rng.IntN(16384))
	}
	b.Samplers = b.Decodes + rng.IntN(len(b.Prefill)+1)
	return b
}

func cloneBatch(b Batch) Batch {
	return Batch{Prefill: append([]Chunk(nil), b.Prefill...),
		Decodes: b.Decodes, DecodeKVSum: b.DecodeKVSum, Samplers: b.Samplers}
}

// TestRooflineMonotone: adding a token, a chunk, a decode, KV or prefix
// never shortens a pass.
func TestRooflineMonotone(t *testing.T) {
	q32 := builtinArch(t, "Qwen/Qwen3-32B")
	h100 := builtinSystem(t, "h100_sxm")
	cases := []struct {
		name string
		arch *model.Arch
		sys  *hardware.System
		opt  RooflineOptions
	}{
		{"qwen3-32b h100 tp1", q32, h100, RooflineOptions{Params: specDefaults(), TP: 1}},
		{"qwen3-32b h100 tp4 fp8", q32, h100, RooflineOptions{Params: specDefaults(), TP: 4, WeightDtype: model.FP8, KVDtype: model.FP8}},
		{"tiny toy tp2", tinyArch(), toySystem(), RooflineOptions{Params: specDefaults(), TP: 2}},
	}
	mutations := []struct {
		name  string
		apply func(rng *rand.Rand, b *Batch) bool // false: not applicable
	}{
		{"token to a chunk", func(rng *rand.Rand, b *Batch) bool {
			if len(b.Prefill) == 0 {
				return false
			}
			b.Prefill[rng.IntN(len(b.Prefill))].NewTokens++
			return true
		}},
		{"prefix to a chunk", func(rng *rand.Rand, b *Batch) bool {
			if len(b.Prefill) == 0 {
				return false
			}
			b.Prefill[rng.IntN(len(b.Prefill))].PrefixTokens += 1 + rng.IntN(100)
			return true
		}},
		{"new chunk", func(rng *rand.Rand, b *Batch) bool {
			b.Prefill = append(b.Prefill, Chunk{NewTokens: 1 + rng.IntN(100), PrefixTokens: rng.IntN(100)})
			return true
		}},
		{"new decode", func(rng *rand.Rand, b *Batch) bool {
			b.AddDecode(rng.IntN(4096))
			b.Samplers++
			return true
		}},
		{"more decode KV", func(rng *rand.Rand, b *Batch) bool {
			if b.Decodes == 0 {
				return false
			}
			b.DecodeKVSum += int64(1 + rng.IntN(100)) // one request's KV grows
			return true
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewRoofline(c.arch, c.sys, c.opt)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(1, 2))
			applied := make([]int, len(mutations))
			for range 2000 {
				b := randomBatch(rng)
				before := r.PassTime(&b)
				for i, m := range mutations {
					after := cloneBatch(b)
					if !m.apply(rng, &after) {
						continue
					}
					applied[i]++
					require.GreaterOrEqual(t, r.PassTime(&after), before, "%s on %+v", m.name, b)
				}
			}
			for i, m := range mutations {
				assert.Greater(t, applied[i], 100, "mutation %q must be exercised", m.name)
			}
		})
	}
}

func TestRooflineTP2FasterForLargePrefill(t *testing.T) {
	q32 := builtinArch(t, "Qwen/Qwen3-32B")
	h100 := builtinSystem(t, "h100_sxm")
	b := Batch{Prefill: []Chunk{{NewTokens: 8192}}, Samplers: 1}
	r1, err := NewRoofline(q32, h100, RooflineOptions{Params: specDefaults(), TP: 1})
	require.NoError(t, err)
	r2, err := NewRoofline(q32, h100, RooflineOptions{Params: specDefaults(), TP: 2})
	require.NoError(t, err)
	t1, t2 := r1.PassTime(&b), r2.PassTime(&b)
	// Compute bound: ≈ 2·8192·31.2e9 FLOP / (989e12·0.7) ≈ 0.74 s at TP 1;
	// TP 2 halves it and adds 129 all-reduces of 8192·5120·2 B (≈ 0.19 ms each).
	assert.Less(t, t2, t1)
	assert.Less(t, float64(t2), 0.6*float64(t1))
}

// TestRooflineQwen3_32BDecodeSanity: Qwen3-32B on h100_sxm at TP 2, one
// decode at KV 1000. Reading the bf16 weights of one GPU (32.76e9 B, see
// model.TestWeightBytesPerGPU) at the full 3.35e12 B/s takes 9.78 ms, a hard
// floor; at 0.8 efficiency 12.2 ms, plus ≈ 0.7 ms of all-reduces, 64 layers ×
// 40 µs = 2.56 ms of kernel latency, the 1 ms pass overhead and 40 µs for the
// one sequence ≈ 16.5 ms. A plausible TPOT is 10–20 ms.
func TestRooflineQwen3_32BDecodeSanity(t *testing.T) {
	q32 := builtinArch(t, "Qwen/Qwen3-32B")
	h100 := builtinSystem(t, "h100_sxm")
	r, err := NewRoofline(q32, h100, RooflineOptions{Params: specDefaults(), TP: 2})
	require.NoError(t, err)
	b := Batch{Decodes: 1, DecodeKVSum: 1000, Samplers: 1}
	ns := r.PassTime(&b)
	floor := float64(q32.WeightBytesPerGPU(2)) / h100.MemBW * 1e9
	assert.InDelta(t, 9.78e6, floor, 0.01e6)
	assert.Greater(t, float64(ns), floor)
	assert.Less(t, float64(ns), 20e6)
	assert.InEpsilon(t, 16.5e6, float64(ns), 0.05)
}

func TestRooflineDtypes(t *testing.T) {
	q32 := builtinArch(t, "Qwen/Qwen3-32B")
	h100 := builtinSystem(t, "h100_sxm")
	bf16, err := NewRoofline(q32, h100, RooflineOptions{Params: specDefaults(), TP: 1})
	require.NoError(t, err)
	fp8, err := NewRoofline(q32, h100, RooflineOptions{Params: specDefaults(), TP: 1, WeightDtype: model.FP8Block, KVDtype: model.FP8})
	require.NoError(t, err)
	for _, b := range []Batch{
		{Decodes: 4, DecodeKVSum: 16000, Samplers: 4},
		{Prefill: []Chunk{{NewTokens: 4096}}, Samplers: 1},
	} {
		// fp8 halves the weight bytes (decode) and doubles peak FLOP/s (prefill).
		assert.Less(t, fp8.PassTime(&b), bf16.PassTime(&b))
	}
	// fp8 KV halves the bytes of the memory-bound decode attention.
	b := Batch{Decodes: 1, DecodeKVSum: 4000, Samplers: 1}
	assert.InEpsilon(t, bf16.Breakdown(&b).GenerationAttentionNs/2,
		fp8.Breakdown(&b).GenerationAttentionNs, 0.02)
}

func TestNewRooflineErrors(t *testing.T) {
	q32 := builtinArch(t, "Qwen/Qwen3-32B")
	h100 := builtinSystem(t, "h100_sxm")
	noBW := *h100
	noBW.MemBW = 0
	small := *h100
	small.GPUsPerNode, small.InterNodeBW = 2, 0
	tests := []struct {
		name string
		arch *model.Arch
		sys  *hardware.System
		opt  RooflineOptions
		want string
	}{
		{"nil arch", nil, h100, RooflineOptions{Params: specDefaults(), TP: 1}, "needs a model"},
		{"tp 0", q32, h100, RooflineOptions{Params: specDefaults()}, "out of range"},
		{"tp 3", q32, h100, RooflineOptions{Params: specDefaults(), TP: 3}, "does not divide"},
		{"weight dtype", q32, h100, RooflineOptions{Params: specDefaults(), TP: 1, WeightDtype: "int3"}, `"int3"`},
		{"kv dtype", q32, h100, RooflineOptions{Params: specDefaults(), TP: 1, KVDtype: model.FP8Block}, "kv dtype"},
		{"efficiency", q32, h100, RooflineOptions{TP: 1, Params: RooflineParams{ComputeEfficiency: 1.2, MemoryEfficiency: 1}}, "compute_efficiency = 1.2"},
		{"memory efficiency", q32, h100, RooflineOptions{TP: 1, Params: RooflineParams{ComputeEfficiency: 1}}, "memory_efficiency = 0"},
		{"overhead", q32, h100, RooflineOptions{TP: 1, Params: RooflineParams{ComputeEfficiency: 1, MemoryEfficiency: 1, PassOverheadUs: -1}}, "pass_overhead_us = -1"},
		{"system", q32, &noBW, RooflineOptions{Params: specDefaults(), TP: 1}, "MemBW"},
		{"tp over nodes without a network", q32, &small, RooflineOptions{Params: specDefaults(), TP: 4}, "no network bandwidth (node.inter_node_bw)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewRoofline(tc.arch, tc.sys, tc.opt)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// mixedBatch is 64 decodes at KV 1000–4150 and one 512-token chunk after a
// 1024-token prefix.
func mixedBatch() Batch {
	b := Batch{Prefill: []Chunk{{NewTokens: 512, PrefixTokens: 1024}}, Samplers: 64}
	for i := range 64 {
		b.AddDecode(1000 + 50*i)
	}
	return b
}

func TestRooflinePassTimeDoesNotAllocate(t *testing.T) {
	r, err := NewRoofline(builtinArch(t, "Qwen/Qwen3-32B"), builtinSystem(t, "h100_sxm"), RooflineOptions{Params: specDefaults(), TP: 2})
	require.NoError(t, err)
	b := mixedBatch()
	var sink int64
	allocs := testing.AllocsPerRun(100, func() { sink += r.PassTime(&b) })
	assert.Zero(t, allocs)
	assert.Positive(t, sink)
}

func BenchmarkRooflinePassTime(b *testing.B) {
	r, err := NewRoofline(builtinArch(b, "Qwen/Qwen3-32B"), builtinSystem(b, "h100_sxm"), RooflineOptions{Params: specDefaults(), TP: 2})
	require.NoError(b, err)
	batch := mixedBatch()
	b.ReportAllocs()
	var sink int64
	for b.Loop() {
		sink += r.PassTime(&batch)
	}
	if sink <= 0 {
		b.Fatal("no time")
	}
}

// TestRooflineNVFP4: NVFP4 weights run at the fp4 peak and read 0.5625 bytes
// per weight (4 bits + an fp8 scale per 16). Llama-3.1-70B on one b200_sxm,
// one decode at KV 0: the GEMMs are memory bound; per layer the four weights
// hold 855,638,016 elements (model.TestWeightBytesPerGPU), so 80 layers read
// 68,451,041,280 · 0.5625 = 38,503,710,720 bytes at 7.7e12 · 0.8 B/s = 6.251 ms
// (bf16: 2 bytes, 22.22 ms); the inputs and outputs add 80 · (0.5625 ·
// (8192 + 8192 + 8192 + 28672) + 2 · (10240 + 8192 + 57344 + 8192)) =
// 15.8 MB, 0.0026 ms: 6.2532 ms.
func TestRooflineNVFP4(t *testing.T) {
	l70 := builtinArch(t, "meta-llama/Llama-3.1-70B-Instruct")
	b200 := builtinSystem(t, "b200_sxm")
	p := specDefaults()
	fp4, err := NewRoofline(l70, b200, RooflineOptions{TP: 1, WeightDtype: model.NVFP4, KVDtype: model.FP8, Params: p})
	require.NoError(t, err)
	bf16, err := NewRoofline(l70, b200, RooflineOptions{TP: 1, Params: p})
	require.NoError(t, err)
	b := Batch{Decodes: 1, DecodeKVSum: 0, Samplers: 1}
	assert.InDelta(t, 6.253e6, fp4.Breakdown(&b).GEMMNs, 0.003e6)
	assert.InDelta(t, 22.22e6, bf16.Breakdown(&b).GEMMNs, 0.01e6)
	// a compute-bound prefill of 8192 tokens: 2·8192·855,638,016·80 =
	// 1.1215e15 FLOP at 9e15 · 0.7 FLOP/s: 178.0 ms (at the bf16 peak, 4×).
	pre := Batch{Prefill: []Chunk{{NewTokens: 8192}}, Samplers: 1}
	flops := 2 * 8192 * 855_638_016.0 * 80
	assert.InEpsilon(t, flops/(9e15*0.7)*1e9, fp4.Breakdown(&pre).GEMMNs, 1e-9)
	assert.InEpsilon(t, flops/(2.25e15*0.7)*1e9, bf16.Breakdown(&pre).GEMMNs, 1e-9)
}

// TestPassNsOverlapCPU: kernels 30 ms and CPU work 6.12 ms (1 ms + 128 × 40 µs)
// take 36.12 ms one after the other and 30 ms side by side (async
// scheduling); a pass whose CPU work is the longer (kernels 2 ms, CPU 6.12 ms)
// takes the CPU time.
func TestPassNsOverlapCPU(t *testing.T) {
	b := Breakdown{GEMMNs: 20e6, GenerationAttentionNs: 10e6, OverheadNs: 6.12e6}
	assert.InDelta(t, 36.12e6, b.PassNs(false), 1e-6)
	assert.InDelta(t, 30e6, b.PassNs(true), 1e-6)
	small := Breakdown{GEMMNs: 2e6, OverheadNs: 6.12e6}
	assert.InDelta(t, 6.12e6, small.PassNs(true), 1e-6)

	// the roofline with OverlapCPU prices a pass at max(kernels, CPU)
	q32 := builtinArch(t, "Qwen/Qwen3-32B")
	h100 := builtinSystem(t, "h100_sxm")
	serial, err := NewRoofline(q32, h100, RooflineOptions{TP: 2, Params: specDefaults()})
	require.NoError(t, err)
	overlap, err := NewRoofline(q32, h100, RooflineOptions{TP: 2, Params: specDefaults(), OverlapCPU: true})
	require.NoError(t, err)
	pass := Batch{Decodes: 64, Samplers: 64}
	bd := serial.Breakdown(&pass)
	assert.Equal(t, PassNs(bd.TotalNs()), serial.PassTime(&pass))
	assert.Equal(t, PassNs(bd.TotalNs()-bd.OverheadNs), overlap.PassTime(&pass))
	assert.Equal(t, true, overlap.Metadata()["cpu_overlap"])
	assert.NotContains(t, serial.Metadata(), "cpu_overlap")
}

// TestPassNsEagerLaunch: an eager pass cannot end before the host has
// launched its kernels. Kernels 30 ms, CPU work 6.12 ms: a launch of 50 ms
// makes the pass 6.12 + 50 = 56.12 ms with the CPU overlapped (max(30, 56.12))
// and without (6.12 + max(30, 50)); a launch of 10 ms hides behind the
// kernels under overlap (max(30, 16.12) = 30) and without (6.12 + 30).
func TestPassNsEagerLaunch(t *testing.T) {
	b := Breakdown{GEMMNs: 20e6, GenerationAttentionNs: 10e6, OverheadNs: 6.12e6, HostLaunchNs: 50e6}
	assert.InDelta(t, 56.12e6, b.PassNs(true), 1e-6)
	assert.InDelta(t, 56.12e6, b.PassNs(false), 1e-6)
	b.HostLaunchNs = 10e6
	assert.InDelta(t, 30e6, b.PassNs(true), 1e-6)
	assert.InDelta(t, 36.12e6, b.PassNs(false), 1e-6)

	// both perf sources carry a batch's launch into its breakdown, the
	// roofline's decode fast path too: 64 decodes of Qwen3-32B on TP 2 (16 ms
	// of kernels) launched in 100 ms take 1 ms + 64 × 40 µs + 100 ms
	q32 := builtinArch(t, "Qwen/Qwen3-32B")
	overlap, err := NewRoofline(q32, builtinSystem(t, "h100_sxm"), RooflineOptions{TP: 2, Params: specDefaults(), OverlapCPU: true})
	require.NoError(t, err)
	pass := Batch{Decodes: 64, Samplers: 64, HostLaunchNs: 100e6}
	assert.Equal(t, 100e6, overlap.Breakdown(&pass).HostLaunchNs)
	assert.Equal(t, int64(1e6+64*40e3+100e6), overlap.PassTime(&pass))
	pass.HostLaunchNs = 0
	assert.Less(t, overlap.PassTime(&pass), int64(20e6))
}

// The memo of the token-count terms changes no price: a roofline that has
// priced many passes (memo hits, in any order, and a pass past the memo's
// bound) breaks each pass down exactly as a fresh one does on its first call.
func TestRooflineTokenMemoMatchesFresh(t *testing.T) {
	fresh := func() *Roofline {
		r, err := NewRoofline(builtinArch(t, "meta-llama/Llama-3.1-8B-Instruct"), builtinSystem(t, "h100_sxm"),
			RooflineOptions{Params: specDefaults(), TP: 2})
		require.NoError(t, err)
		return r
	}
	used := fresh()
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 400 {
		var b Batch
		if rng.IntN(3) > 0 {
			n := 1 + rng.IntN(2*memoTokens)
			if trial%5 != 0 {
				n = 1 + rng.IntN(300) // many repeats
			}
			b.Prefill = []Chunk{{NewTokens: n, PrefixTokens: rng.IntN(4000)}}
		}
		for range rng.IntN(40) {
			b.AddDecode(rng.IntN(9000))
		}
		b.Samplers = len(b.Prefill) + b.Decodes
		if b.Samplers == 0 {
			continue
		}
		assert.Equal(t, fresh().Breakdown(&b), used.Breakdown(&b), "trial %d", trial)
	}
	assert.NotEmpty(t, used.byTokens)
	assert.NotEmpty(t, used.byLogits)
}

// The decode-only path of PassTime (decodePassNs) gives the pass time
// Breakdown gives, to the bit, on random decode passes of three models, at
// TP 1 and 2, with the CPU work beside the kernels or after them.
func TestRooflineDecodePassTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 5))
	for _, model := range []string{"meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-32B", "Qwen/Qwen3-8B"} {
		for _, tp := range []int{1, 2} {
			for _, overlap := range []bool{false, true} {
				r, err := NewRoofline(builtinArch(t, model), builtinSystem(t, "h100_sxm"),
					RooflineOptions{Params: specDefaults(), TP: tp, OverlapCPU: overlap})
				require.NoError(t, err)
				for trial := range 300 {
					var b Batch
					for range 1 + rng.IntN(600) {
						b.AddDecode(rng.IntN(40000))
					}
					b.Samplers = b.Decodes - rng.IntN(2)
					want := PassNs(r.Breakdown(&b).PassNs(overlap))
					fast := r.decodePassNs(&b)
					require.Equal(t, math.Float64bits(r.Breakdown(&b).PassNs(overlap)), math.Float64bits(fast),
						"%s TP %d overlap %v trial %d", model, tp, overlap, trial)
					require.Equal(t, want, r.PassTime(&b))
				}
			}
		}
	}
}

// TestRooflineAllReduceAcrossNodesByHand: TP 4 over two nodes of 2 GPUs
// (no measured all-reduce), x = 1 token of hidden 4 (8 B). The node's
// reduce-scatter and all-gather together move 2·(2−1)/2 · 8 B = 8 B at
// 1 GB/s = 8 ns; the network ring all-reduce of each GPU's half, 2·(2−1)/2 ·
// 8/2 B = 4 B at 0.25 GB/s = 16 ns; latency twice the kernel's 1 µs (the
// node's and the network's). One all-reduce 2,000 + 24 = 2,024 ns; 3 per
// pass (2 per layer, 1 layer, + the embedding) → 6,072 ns.
func TestRooflineAllReduceAcrossNodesByHand(t *testing.T) {
	arch := tinyArch()
	arch.Heads, arch.KVHeads, arch.HeadDim = 4, 2, 1
	sys := toySystem()
	sys.GPUsPerNode, sys.InterNodeBW = 2, 0.25e9
	p := exactParams
	p.AllReduceLatencyUs = 1
	r, err := NewRoofline(arch, sys, RooflineOptions{TP: 4, Params: p})
	require.NoError(t, err)
	bd := r.Breakdown(&Batch{Decodes: 1, DecodeKVSum: 3, Samplers: 1})
	assert.InDelta(t, 6072, bd.AllReduceNs, 1e-9)
	// Within one node of 4 the same all-reduce is one ring: 1,000 + 2·(3/4)·8 B
	// at 1 GB/s = 1,012 ns, × 3 = 3,036 ns.
	sys.GPUsPerNode = 4
	r1, err := NewRoofline(arch, sys, RooflineOptions{TP: 4, Params: p})
	require.NoError(t, err)
	assert.InDelta(t, 3036, r1.Breakdown(&Batch{Decodes: 1, DecodeKVSum: 3, Samplers: 1}).AllReduceNs, 1e-9)
}
