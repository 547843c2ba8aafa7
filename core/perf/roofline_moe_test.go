package perf

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
)

// tinyMoE is a one-layer MoE model small enough to price by hand: h 64, 4
// heads of 16, E 8 experts of I_e 32, top 2, bf16.
func tinyMoE() *model.Arch {
	return &model.Arch{Name: "tiny-moe", Architecture: "MixtralForCausalLM", Layers: 1, Hidden: 64, Heads: 4,
		KVHeads: 4, HeadDim: 16, Intermediate: 32, Vocab: 100, MaxPositionEmbeddings: 4096, WeightDtype: model.BF16,
		MoE: &model.MoE{Experts: 8, TopK: 2, Intermediate: 32}}
}

// unitSystem: 1e12 B/s, 1e15 FLOP/s, NVLink 1e11 B/s, efficiencies 1.
func unitSystem() *hardware.System {
	return &hardware.System{Name: "unit", MemBW: 1e12, BF16Flops: 1e15, FP8Flops: 2e15, MemCapacity: 1 << 40,
		GPUsPerNode: 8, IntraNodeBW: 1e11}
}

func unitParams() RooflineParams {
	return RooflineParams{ComputeEfficiency: 1, MemoryEfficiency: 1}
}

// TestMoERooflineExperts checks the routed experts' roofline by hand.
func TestMoERooflineExperts(t *testing.T) {
	r, err := NewRoofline(tinyMoE(), unitSystem(), RooflineOptions{TP: 1, Params: unitParams()})
	require.NoError(t, err)
	decode := func(n int) *Batch {
		return decodesP(make([]int, n))
	}
	// One expert on one GPU: W_e = 3·64·32 = 6144 weights (bf16, 2 B); per
	// (token, expert) pair 2·(2·64 + 4·32) = 512 activation bytes.
	// 1 token: A = 2 pairs, D = 8·(1 − 6/8) = 2 experts read:
	//   B = 2·2·6144 + 2·512 = 25,600 B → 25.6 ns at 1e12 B/s
	//   (F = 2·2·6144 = 24,576 FLOP → 0.025 ns: memory bound).
	assert.InDelta(t, 25.6, r.Breakdown(decode(1)).ExpertsNs, 1e-9)
	// 4 tokens: A = 8, D = 8·(1 − 0.75⁴) = 5.46875:
	//   B = 2·5.46875·6144 + 8·512 = 67,200 + 4,096 = 71,296 B → 71.296 ns.
	assert.InDelta(t, 71.296, r.Breakdown(decode(4)).ExpertsNs, 1e-9)
	// MoELatencyUs adds per MoE layer and pass.
	p := unitParams()
	p.MoELatencyUs = 35
	r35, err := NewRoofline(tinyMoE(), unitSystem(), RooflineOptions{TP: 1, Params: p})
	require.NoError(t, err)
	assert.InDelta(t, 35_000+25.6, r35.Breakdown(decode(1)).ExpertsNs, 1e-6)
	// the report says which parameters and what approximation
	md := r35.Metadata()
	assert.Equal(t, 35.0, md["params"].(map[string]float64)["moe_latency_us"])
	assert.NotEmpty(t, md["notes"])
}

// TestMoERooflineCUDAGraphPadding: under CUDA graphs up to 16 tokens a
// 3-token decode runs as 4 (CUDAGraphTokens), and the padded rows reach
// experts like tokens: its experts cost what 4 tokens' do without graphs
// (71.296 ns, TestMoERooflineExperts), while its attention and GEMMs stay
// those of 3 tokens. 17 tokens are above the largest graph: unpadded.
func TestMoERooflineCUDAGraphPadding(t *testing.T) {
	r, err := NewRoofline(tinyMoE(), unitSystem(), RooflineOptions{TP: 1, Params: unitParams(), CUDAGraphMaxTokens: 16})
	require.NoError(t, err)
	eager, err := NewRoofline(tinyMoE(), unitSystem(), RooflineOptions{TP: 1, Params: unitParams()})
	require.NoError(t, err)
	three := r.Breakdown(decodesP(make([]int, 3)))
	assert.InDelta(t, 71.296, three.ExpertsNs, 1e-9)
	assert.Equal(t, eager.Breakdown(decodesP(make([]int, 3))).GEMMNs, three.GEMMNs)
	assert.Equal(t, eager.Breakdown(decodesP(make([]int, 17))).ExpertsNs, r.Breakdown(decodesP(make([]int, 17))).ExpertsNs)
	_, err = NewRoofline(tinyMoE(), unitSystem(), RooflineOptions{TP: 1, Params: unitParams(), CUDAGraphMaxTokens: -1})
	assert.ErrorContains(t, err, "CUDA-graph max tokens = -1")
}

// TestMoERooflineExpertParallel: with EP over 2 GPUs each holds 4 whole
// experts and computes half the pairs; with TP 2 each holds a half of
// every expert. 4 tokens:
//
//	EP 2: A = 4, D = 4·(1 − 0.75⁴) = 2.734375, B = 2·2.734375·6144 + 4·512
//	      = 33,600 + 2,048 = 35,648 B → 35.648 ns
//	TP 2: A = 8, D = 5.46875, W_e = 3·64·16 = 3,072, act 2·(128 + 64) = 384
//	      B = 2·5.46875·3072 + 8·384 = 33,600 + 3,072 = 36,672 B → 36.672 ns
func TestMoERooflineExpertParallel(t *testing.T) {
	b := decodesP(make([]int, 4))
	ep, err := NewRoofline(tinyMoE(), unitSystem(), RooflineOptions{TP: 2, EP: true, Params: unitParams()})
	require.NoError(t, err)
	assert.InDelta(t, 35.648, ep.Breakdown(b).ExpertsNs, 1e-9)
	tp, err := NewRoofline(tinyMoE(), unitSystem(), RooflineOptions{TP: 2, Params: unitParams()})
	require.NoError(t, err)
	assert.InDelta(t, 36.672, tp.Breakdown(b).ExpertsNs, 1e-9)
}

// TestMoERooflineDataParallel: two DP ranks run in lockstep; the experts
// see X = 2 × the larger rank's tokens, and each MoE layer adds an
// all-gather and a reduce-scatter of X·h bf16 elements over 2 GPUs.
func TestMoERooflineDataParallel(t *testing.T) {
	r, err := NewRoofline(tinyMoE(), unitSystem(), RooflineOptions{TP: 1, DP: 2, Params: unitParams()})
	require.NoError(t, err)
	busy := decodes(make([]int, 3))
	idle := Batch{}
	got := r.GroupPassTime([]Batch{busy, idle})
	// X = 2·3 = 6. Dispatch: 2 collectives × (0 latency + 6 tokens ×
	// (2−1)/2 · 64·2 B / 1e11 B/s) = 2 · 6 · 0.64 ns = 7.68 ns.
	bd := r.hybridBreakdown(&busy, 6)
	assert.InDelta(t, 7.68, bd.DispatchNs, 1e-9)
	assert.Equal(t, int64(math.Round(bd.TotalNs())), got)
	// the busy rank is the slower one: the idle rank's pass is overhead only
	assert.Greater(t, bd.TotalNs(), r.hybridBreakdown(&idle, 6).TotalNs())
	// a bigger rank batch never makes the lockstep pass shorter
	more := decodes(make([]int, 5))
	assert.GreaterOrEqual(t, r.GroupPassTime([]Batch{more, idle}), got)
}

// TestSlidingWindowRoofline: a sliding-window layer's decode attends to
// min(kv + 1, W) keys, so past the window its cost stops growing.
func TestSlidingWindowRoofline(t *testing.T) {
	a := tinyMoE()
	a.SlidingWindow = 128
	a.LayerKinds = []model.LayerKind{{Attn: model.AttnSliding, MoE: true}}
	r, err := NewRoofline(a, unitSystem(), RooflineOptions{TP: 1, Params: unitParams()})
	require.NoError(t, err)
	at := func(kv int) float64 {
		return r.Breakdown(decodesP([]int{kv}, r.DecodeWindows()...)).GenerationAttentionNs
	}
	assert.Equal(t, []int{128}, r.DecodeWindows())
	assert.Equal(t, at(127), at(5000)) // 128 keys either way
	assert.Less(t, at(50), at(127))
	// K and V of 4 heads of 16, bf16: 256 B per token; 128 keys + the new
	// token's write + Q in, O out (2·2·64 B): (128 + 1)·256 + 256 = 33,280 B.
	assert.InDelta(t, 33.28, at(5000), 1e-9)
}

// A dense decoder is priced exactly as before MoE support: no hybrid part.
func TestDenseRooflineHasNoHybrid(t *testing.T) {
	q, _ := model.Builtin("Qwen/Qwen3-32B")
	r, err := NewRoofline(q, unitSystem(), RooflineOptions{TP: 1, Params: unitParams()})
	require.NoError(t, err)
	assert.Nil(t, r.hy)
	_, has := r.Metadata()["notes"]
	assert.False(t, has)
	_, err = NewRoofline(q, unitSystem(), RooflineOptions{TP: 2, EP: true, Params: unitParams()})
	assert.ErrorContains(t, err, "enable_expert_parallel needs a mixture-of-experts model")
}

// TestQKNormAcrossHeads: a model whose q/k norm spans all heads
// (MiniMax-M2) adds, at TP > 1, one all-reduce of 8 bytes a token per
// layer and a read of q and k; at TP 1 nothing.
func TestQKNormAcrossHeads(t *testing.T) {
	perHead := tinyMoE()
	perHead.QKNorm = true
	across := *perHead
	across.QKNormAcrossHeads = true
	p := unitParams()
	p.AllReduceLatencyUs = 5
	dec := decodesP([]int{10, 10})
	at := func(a *model.Arch, tp int) Breakdown {
		r, err := NewRoofline(a, unitSystem(), RooflineOptions{TP: tp, Params: p})
		require.NoError(t, err)
		return r.Breakdown(dec)
	}
	assert.Equal(t, at(perHead, 1), at(&across, 1))
	a, b := at(perHead, 2), at(&across, 2)
	// one all-reduce: 5 µs + 2 tokens × 8 B × 2·(1/2) (ring) / 1e11 B/s
	assert.InDelta(t, 5000+2*8*2*0.5/1e11*1e9, b.AllReduceNs-a.AllReduceNs, 1e-9)
	// q and k read once more: 2 heads + 2 KV heads of 16 per GPU, bf16
	assert.InDelta(t, 2*2*(2+2)*16/1e12*1e9, b.MemoryOpsNs-a.MemoryOpsNs, 1e-9)
}

// decodes is a pass of one decode per KV length in lens (tokens), with the
// window sums of a model with the given decode windows (DecodeWindows), as
// the engine fills them.
func decodes(lens []int, windows ...int) Batch {
	var b Batch
	for _, kv := range lens {
		b.AddDecodeWindows(kv, windows)
	}
	b.Samplers = len(lens)
	return b
}

// decodesP is decodes as a pointer.
func decodesP(lens []int, windows ...int) *Batch {
	b := decodes(lens, windows...)
	return &b
}

// TestLatentExpertsRoofline: tinyMoE's experts made latent (moe_latent_size
// 16: Nemotron-3 Super's layout in small). One expert is 3·16·32 = 1536
// weights (bf16) and a (token, expert) pair moves 2·(2·16 + 4·32) = 320
// activation bytes; 1 token: A = 2, D = 2 experts read:
// B = 2·2·1536 + 2·320 = 6784 B → 6.784 ns. The two replicated projections
// are GEMMs on the token: fc1 (N 16, K 64) and fc2 (N 64, K 16), each
// B = 2·1024 + 1·(2·K + 2·N) = 2048 + 160 = 2208 B → 2.208 ns, 4.416 ns
// more GEMM time than the same model with hidden-wide experts.
func TestLatentExpertsRoofline(t *testing.T) {
	lat := tinyMoE()
	lat.MoE.Latent = 16
	r, err := NewRoofline(lat, unitSystem(), RooflineOptions{TP: 1, Params: unitParams()})
	require.NoError(t, err)
	base, err := NewRoofline(tinyMoE(), unitSystem(), RooflineOptions{TP: 1, Params: unitParams()})
	require.NoError(t, err)
	one := decodesP(make([]int, 1))
	got, ref := r.Breakdown(one), base.Breakdown(one)
	assert.InDelta(t, 6.784, got.ExpertsNs, 1e-9)
	assert.InDelta(t, 4.416, got.GEMMNs-ref.GEMMNs, 1e-9)
}
