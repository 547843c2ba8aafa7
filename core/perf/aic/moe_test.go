package aic

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// qwenMoE is Qwen3-235B-A22B-FP8 on h200_sxm at TP 4 (moe_tp 4) priced from
// the vLLM 0.14.0 tables (requested 0.12.0, the dev rows' version).
func qwenMoE(t testing.TB, par model.Parallel) *Model {
	t.Helper()
	return qwenMoEAt(t, par, "0.12.0")
}

// qwenMoEAt is qwenMoE for vLLM version v (0.14.0: Triton's fused_experts, the
// tables' kernel; 0.11.1–0.12: the padded DeepGEMM path, deepgemm_moe.go).
func qwenMoEAt(t testing.TB, par model.Parallel, v string) *Model {
	t.Helper()
	m, err := New(sharedModel(t, "Qwen/Qwen3-235B-A22B-FP8"), builtinSystem(t, "h200_sxm"),
		Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: v, TP: par.TP, DP: par.DP, EP: par.EP})
	require.NoError(t, err)
	return m
}

// moeTableRow reads one row of a moe_perf table, ms.
func moeTableRow(t *testing.T, path string, dtype string, tokens, h, inter, k, e, tp, ep int64) float64 {
	rows, err := loadMoE(path)
	require.NoError(t, err)
	for _, r := range rows {
		if r.Dtype == dtype && r.Distribution == "balanced" && r.Tokens == tokens && r.Hidden == h && r.Inter == inter &&
			r.TopK == k && r.Experts == e && r.TP == tp && r.EP == ep {
			return r.Latency
		}
	}
	t.Fatalf("no row %s %d tokens", dtype, tokens)
	return 0
}

// TestMoEPassOnATableRow: a one-token decode's experts cost the table row's
// time per MoE layer plus the top-k selection the table leaves out: one
// token reaches exactly k experts under both the measured (balanced) and
// the uniform routing, so the routing correction is zero there; at 8192
// tokens (every expert loaded both ways up to 10⁻²²⁹) likewise.
func TestMoEPassOnATableRow(t *testing.T) {
	m := qwenMoEAt(t, model.Parallel{TP: 4, DP: 1}, "0.14.0") // the tables' own kernel
	path := filepath.Join(sharedDB(t), "data", "h200_sxm", "moe", "vllm", "0.14.0", "moe_perf.parquet")
	row1 := moeTableRow(t, path, "fp8_block", 1, 4096, 1536, 8, 128, 4, 1)
	// top-k of one token: 2·128 logit bytes + 8·8 id and weight bytes =
	// 320 B at 0.8 × 4.8 TB/s, plus h200_sxm's 3 µs memory-op constant
	topK := 320/(0.8*4800e9) + 3e-6
	assert.InDelta(t, topK, m.topKSeconds(1), 1e-18)
	assert.InDelta(t, 94*(row1*1e-3+topK)*1e9, m.Breakdown(decodesP([]int{100})).ExpertsNs, 1e-3)
	row8k := moeTableRow(t, path, "fp8_block", 8192, 4096, 1536, 8, 128, 4, 1)
	assert.InDelta(t, row8k*1e-3, m.hy.moe.Seconds(8192), 1e-12)
	// provenance: the MoE table and version read
	var found bool
	for _, s := range m.Sources() {
		if s.Table == "moe_perf (fp8_block)" {
			found = true
			assert.Equal(t, "0.14.0", s.ReadFrom)
		}
	}
	assert.True(t, found)
}

// TestMoECUDAGraphPadding: with CUDA graphs up to 32 tokens (max_num_seqs
// 16) a 5-token decode runs as 8 and its MoE layers compute 8 tokens: the
// experts cost what 8 decodes' do without graphs; with two DP ranks the
// larger rank's 5 tokens pad to 8 before the gather (X = 2 × 8).
func TestMoECUDAGraphPadding(t *testing.T) {
	opt := Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.12.0", TP: 4}
	arch, sys := sharedModel(t, "Qwen/Qwen3-235B-A22B-FP8"), builtinSystem(t, "h200_sxm")
	eager, err := New(arch, sys, opt)
	require.NoError(t, err)
	opt.CUDAGraphMaxTokens = 32
	graphs, err := New(arch, sys, opt)
	require.NoError(t, err)
	eight := eager.Breakdown(decodesP(make([]int, 8))).ExpertsNs
	assert.Equal(t, eight, graphs.Breakdown(decodesP(make([]int, 5))).ExpertsNs)
	assert.Less(t, eager.Breakdown(decodesP(make([]int, 5))).ExpertsNs, eight)
	opt.TP, opt.DP = 1, 2
	dp, err := New(arch, sys, opt)
	require.NoError(t, err)
	busy := decodes(make([]int, 5))
	want := dp.hybridBreakdown(&busy, 16).PassNs(false)
	assert.Equal(t, perf.PassNs(want), dp.GroupPassTime([]perf.Batch{busy, {}}))
	opt.CUDAGraphMaxTokens = 9000
	_, err = New(arch, sys, opt)
	assert.ErrorContains(t, err, "CUDA-graph max tokens = 9000, want 0..8192")
}

// TestMoEUniformRoutingCorrection: at 8 tokens the measured kernel read
// min(128, 8·8) = 64 experts, uniform routing reads 128·(1 − (120/128)^8)
// = 51.61; the curve subtracts 12.39 × the measured per-expert time w =
// (T(16) − T(1)) / (128 − 8), read off the same curve.
func TestMoEUniformRoutingCorrection(t *testing.T) {
	c := qwenMoE(t, model.Parallel{TP: 4, DP: 1}).hy.moe
	w := (c.measured(16) - c.measured(1)) / 120
	assert.InDelta(t, w, c.perExpertS, 1e-15)
	d := perf.ExpectedDistinctExperts(8, 128, 8)
	assert.InDelta(t, c.measured(8)-w*(64-d), c.Seconds(8), 1e-15)
	assert.Less(t, c.Seconds(8), c.measured(8))
	// non-decreasing in tokens
	prev := 0.0
	for n := 1.0; n <= 16384; n *= 1.3 {
		s := c.Seconds(n)
		assert.GreaterOrEqual(t, s, prev*0.999, "n=%g", n)
		prev = s
	}
}

// TestMoELayouts: expert parallelism reads the moe_ep rows; data
// parallelism adds the NCCL all-gather and reduce-scatter (sources name the
// NCCL table of h200_sxm's misc.nccl_version 2.26.2), and the lockstep
// pass gathers both ranks' tokens.
func TestMoELayouts(t *testing.T) {
	ep := qwenMoE(t, model.Parallel{TP: 2, DP: 1, EP: true})
	assert.Equal(t, int64(2), ep.hy.moe.shape.ep)
	assert.Equal(t, int64(1), ep.hy.moe.shape.tp)

	dp := qwenMoE(t, model.Parallel{TP: 1, DP: 2})
	assert.Equal(t, int64(2), dp.hy.moe.shape.tp)
	var nccl *Source
	for _, s := range dp.Sources() {
		if s.Table == TableNCCL {
			s := s
			nccl = &s
		}
	}
	require.NotNil(t, nccl)
	assert.Equal(t, "2.26.2", nccl.ReadFrom)
	busy := decodes([]int{500, 500, 500})
	got := dp.GroupPassTime([]perf.Batch{busy, {}})
	bd := dp.hybridBreakdown(&busy, 6) // X = 2 ranks × 3 tokens
	assert.Positive(t, bd.DispatchNs)
	assert.InDelta(t, bd.TotalNs(), float64(got), 0.5)
	// the idle rank's dummy pass does not set the time
	assert.Less(t, dp.hybridBreakdown(&perf.Batch{}, 6).TotalNs(), bd.TotalNs())
}

// TestMoETensorTimesExpertParallel: TensorRT-LLM's experts split both ways
// (TP 4, moe_ep_size 2, so moe_tp_size 2) read the tables' moe_tp 2 ×
// moe_ep 2 rows: at 1 and 8192 tokens the curve returns the row's time
// (the routing correction is zero there: TestMoEPassOnATableRow).
func TestMoETensorTimesExpertParallel(t *testing.T) {
	m, err := New(sharedModel(t, "Qwen/Qwen3-235B-A22B-FP8"), builtinSystem(t, "h200_sxm"),
		Options{MaxTokens: 8192, Backend: "trtllm", Database: sharedDB(t), Version: "1.2.0rc5", TP: 4, EP: true, MoEEP: 2})
	require.NoError(t, err)
	assert.Equal(t, int64(2), m.hy.moe.shape.tp)
	assert.Equal(t, int64(2), m.hy.moe.shape.ep)
	path := filepath.Join(sharedDB(t), "data", "h200_sxm", "moe", "trtllm", "1.2.0rc5", "moe_perf.parquet")
	for _, n := range []int64{1, 8192} {
		row := moeTableRow(t, path, "fp8_block", n, 4096, 1536, 8, 128, 2, 2)
		assert.InDelta(t, row*1e-3, m.hy.moe.Seconds(float64(n)), 1e-12, "%d tokens", n)
	}
}

// TestMoENCCLOnARow: the all-gather curve returns a measured row's time.
func TestMoENCCLOnARow(t *testing.T) {
	path := filepath.Join(sharedDB(t), "data", "h200_sxm", "comm", "nccl", "2.29.2", "nccl_perf.parquet")
	rows, err := loadNCCL(path)
	require.NoError(t, err)
	c, err := newNCCLCurve(rows, "all_gather", 2, 450e9)
	require.NoError(t, err)
	// h200_sxm NCCL 2.29.2, all_gather of 1,048,576 half elements over 2 GPUs: 0.01617 ms
	assert.InDelta(t, 0.01617e-3, c.Seconds(1048576), 1e-12)
	_, err = newNCCLCurve(rows, "all_gather", 16, 450e9)
	assert.ErrorContains(t, err, "no all_gather rows over 16 GPUs (measured: [2 4 8])")
}

// TestMoEImplausibleTableSkipped: h200_sxm vLLM 0.24.0's fp8 (per-tensor)
// MoE rows are 3–6× slower than its bf16 rows at a few tokens; a request
// for 0.24.0 fp8 experts reads the next version instead and says why.
func TestMoEImplausibleTableSkipped(t *testing.T) {
	a := sharedModel(t, "Qwen/Qwen3-235B-A22B-FP8")
	a.WeightDtype = model.FP8
	m, err := New(a, builtinSystem(t, "h200_sxm"), Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.24.0", TP: 4})
	require.NoError(t, err)
	found := false
	for _, s := range m.Sources() {
		if s.Table == "moe_perf (fp8)" {
			found = true
			assert.NotEqual(t, "0.24.0", s.ReadFrom)
			assert.Contains(t, s.Note, "0.24.0 skipped: its fp8 MoE rows take")
		}
	}
	assert.True(t, found)
}

// TestMoEStandInShape: a shape no table measured prices from the nearest
// measured shape scaled by the roofline ratio, and the notes say so.
func TestMoEStandInShape(t *testing.T) {
	a := sharedModel(t, "Qwen/Qwen3-235B-A22B-FP8")
	a.MoE.Experts = 96 // not a measured expert count for this shape
	m, err := New(a, builtinSystem(t, "h200_sxm"), Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.12.0", TP: 4})
	require.NoError(t, err)
	var note string
	for _, n := range m.Notes() {
		if len(n) > 9 && n[:9] == "moe_perf:" {
			note = n
		}
	}
	assert.Contains(t, note, "scaled by the roofline ratio")
	assert.Positive(t, m.hy.moe.Seconds(64))
}

// TestMoEMissingDtypeFallsBack: h200_sxm measured no NVFP4 experts, so
// Qwen3-235B-A22B with NVFP4 experts prices from the bf16 curve of its own
// shape and layout (0.24.0, the nearest version), scaled by the roofline
// ratio at saturation, and every MoE layer counts as a fallback. By hand, at
// n_sat = E/k = 16 tokens on one of 4 GPUs: W_e = 3·4096·384 = 4,718,592
// weights per expert, all 128 experts read, 128 (token, expert) pairs of
// 2·(2·4096 + 4·384) = 19,456 activation bytes; memory bound both ways
// (Hopper has no fp4 peak: bf16 math), so the ratio is the bytes':
// (0.5625·128·W_e + 128·19,456) / (2·128·W_e + 128·19,456)
// = 342,228,992 / 1,210,449,920.
func TestMoEMissingDtypeFallsBack(t *testing.T) {
	a := sharedModel(t, "Qwen/Qwen3-235B-A22B-FP8")
	a.WeightDtype = model.NVFP4
	m, err := New(a, builtinSystem(t, "h200_sxm"), Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.24.0", TP: 4})
	require.NoError(t, err)
	// and h200_sxm has no nvfp4 GEMMs either: bf16 GEMMs in all 94 layers
	assert.Equal(t, map[string]int{OpMoE: 94, OpGEMM: 94}, m.Fallbacks())
	assert.InDelta(t, 342228992.0/1210449920.0, m.hy.moe.scale, 1e-12)
	var note string
	for _, n := range m.Notes() {
		if strings.HasPrefix(n, "moe_perf:") {
			note = n
		}
	}
	assert.Contains(t, note, "no version measured nvfp4 experts of hidden 4096 × 1536, 128 experts top-8 at moe_tp 4, moe_ep 1")
	assert.Contains(t, note, "0.14.0, 0.18.0, 0.19.0, 0.24.0: no nvfp4 curve")
	assert.Contains(t, note, "bfloat16 experts of hidden 4096 × 1536, 128 experts top-8 at moe_tp 4, moe_ep 1 (0.24.0) scaled by the roofline ratio")
	assert.Equal(t, map[string]int{OpMoE: 94, OpGEMM: 94}, m.Metadata()["fallbacks"])
}

// TestVersionsTried: versions in numeric order (0.9.0 before 0.14.0), each
// reason once after its versions.
func TestVersionsTried(t *testing.T) {
	assert.Equal(t, "0.9.0, 0.14.0: no rows; 0.12.0: implausible",
		versionsTried(map[string]string{"0.14.0": "no rows", "0.12.0": "implausible", "0.9.0": "no rows"}))
	assert.Equal(t, "none", versionsTried(nil))
}

func TestMoEPassTimeDoesNotAllocate(t *testing.T) {
	m := qwenMoE(t, model.Parallel{TP: 1, DP: 2})
	b := mixedBatch()
	bs := []perf.Batch{*b, decodes([]int{10, 20})}
	assert.Zero(t, testing.AllocsPerRun(50, func() { _ = m.GroupPassTime(bs) }))
	assert.Zero(t, testing.AllocsPerRun(50, func() { _ = m.PassTime(b) }))
}

// TestQKNormAcrossHeads: MiniMax-M2's q/k norm over all heads adds, per
// layer at TP > 1, one all-reduce of two fp32 per token (4 bf16 elements
// on the all-reduce curve) and the variance kernel (one memory op).
func TestQKNormAcrossHeads(t *testing.T) {
	across := sharedModel(t, "MiniMaxAI/MiniMax-M2.5")
	require.True(t, across.QKNormAcrossHeads)
	perHead := *across
	perHead.QKNormAcrossHeads = false
	b := decodesP([]int{1000, 1000, 1000})
	price := func(a *model.Arch) (perf.Breakdown, *Model) {
		m, err := New(a, builtinSystem(t, "h200_sxm"), Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t),
			Version: "0.18.0", TP: 4})
		require.NoError(t, err)
		return m.Breakdown(b), m
	}
	with, m := price(across)
	without, _ := price(&perHead)
	assert.InDelta(t, 62*m.allReduce.Seconds(3*4)*1e9, with.AllReduceNs-without.AllReduceNs, 1e-6)
	assert.InDelta(t, 62*m.memLatencyS*1e9, with.MemoryOpsNs-without.MemoryOpsNs, 1e-6)
}

// decodes is a pass of one decode per KV length in lens (tokens), with the
// window sums of a model with the given decode windows (DecodeWindows), as
// the engine fills them.
func decodes(lens []int, windows ...int) perf.Batch {
	var b perf.Batch
	for _, kv := range lens {
		b.AddDecodeWindows(kv, windows)
	}
	b.Samplers = len(lens)
	return b
}

// decodesP is decodes as a pointer.
func decodesP(lens []int, windows ...int) *perf.Batch {
	b := decodes(lens, windows...)
	return &b
}

// TestMoEBackendMarlin: h200_sxm's vLLM 0.24.0 table times gpt-oss's MXFP4
// experts with the OAI Triton kernel (vLLM's default on Hopper), and the
// Marlin kernel (VLLM_MXFP4_USE_MARLIN=1, InferenceX's H200 recipe) for
// another shape only (hidden 3584, 896 experts, top 16): asked for Marlin,
// gpt-oss-120b reads Marlin's rows scaled by the roofline ratio (a fallback
// of its 36 MoE layers); by default the Triton curve, as before.
func TestMoEBackendMarlin(t *testing.T) {
	a, sys := sharedModel(t, "openai/gpt-oss-120b"), builtinSystem(t, "h200_sxm")
	opt := Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.24.0", TP: 1}
	auto, err := New(a, sys, opt)
	require.NoError(t, err)
	opt.MoEBackend = "marlin"
	marlin, err := New(a, sys, opt)
	require.NoError(t, err)
	assert.Contains(t, tables(auto), "moe_perf (w4a16_mxfp4)")
	assert.Contains(t, tables(marlin), "moe_perf (w4a16_mxfp4, marlin, stand-in shape)")
	assert.Equal(t, 36, marlin.Fallbacks()[OpMoE])
	assert.Zero(t, auto.Fallbacks()[OpMoE])
	assert.NotEqual(t, auto.hy.moe.Seconds(64), marlin.hy.moe.Seconds(64))
}

// TestMXFP4ExpertsByEngineAndGPU: which moe_dtype prices gpt-oss's MXFP4
// experts is the kernel the engine runs on the GPU (moeDtypeLabel), not the
// table version: TensorRT-LLM from SM 100 quantizes the activations to MXFP8
// (ModelConfig.get_mxfp4_quant_algo: W4A8_MXFP4_MXFP8), below it runs
// W4A16_MXFP4; vLLM on SM 100 runs FlashInfer's TRT-LLM-gen kernel with bf16
// activations unless asked for MXFP8 (flashinfer_trtllm_afp8, or
// VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1: get_mxfp4_backend).
func TestMXFP4ExpertsByEngineAndGPU(t *testing.T) {
	for _, c := range []struct {
		backend    string
		sm         int
		moeBackend string
		want       string
	}{
		{"trtllm", 100, "", "w4a8_mxfp4_mxfp8"}, // b200_sxm, gb200
		{"trtllm", 103, "", "w4a8_mxfp4_mxfp8"}, // b300_sxm
		{"trtllm", 90, "", "w4a16_mxfp4"},       // h100_sxm, h200_sxm
		{"vllm", 100, "", "w4a16_mxfp4"},        // SM100_FI_MXFP4_BF16
		{"vllm", 100, "flashinfer_trtllm", "w4a16_mxfp4"},
		{"vllm", 100, "flashinfer_trtllm_afp8", "w4a8_mxfp4_mxfp8"},
		{"vllm", 103, "flashinfer_trtllm_afp8", "w4a8_mxfp4_mxfp8"}, // the SM 100 family
		{"vllm", 120, "flashinfer_trtllm_afp8", "w4a16_mxfp4"},      // not the SM 100 family
		{"vllm", 90, "flashinfer_trtllm_afp8", "w4a16_mxfp4"},
		{"sglang", 100, "", "w4a16_mxfp4"},
	} {
		assert.Equal(t, c.want, moeDtypeLabel(model.MXFP4, c.backend, c.sm, c.moeBackend), "%+v", c)
	}
	// other formats keep their label whatever the engine
	assert.Equal(t, "int4_wo", moeDtypeLabel(model.INT4, "trtllm", 100, ""))
	assert.Equal(t, "fp8_block", moeDtypeLabel(model.FP8Block, "vllm", 100, "flashinfer_trtllm_afp8"))
}

// TestMXFP4TRTLLMOnB200OnATableRow: gpt-oss-120b on b200_sxm under
// TensorRT-LLM 1.2.0rc2 (InferenceX's image of 2025-12-02) reads the
// nearest version with the shape, 1.3.0rc20, at its w4a8_mxfp4_mxfp8 rows:
// a one-token decode's experts cost that row's time (0.025291 ms at TP 1:
// 128 experts of 2880 × 2880, top 4) plus the top-k per MoE layer, ×36,
// where the w4a16_mxfp4 row of the same shape (0.072955 ms) priced it before.
func TestMXFP4TRTLLMOnB200OnATableRow(t *testing.T) {
	a, sys := sharedModel(t, "openai/gpt-oss-120b"), builtinSystem(t, "b200_sxm")
	m, err := New(a, sys, Options{MaxTokens: 8192, Backend: "trtllm", Database: sharedDB(t), Version: "1.2.0rc2", TP: 1})
	require.NoError(t, err)
	var read []string
	for _, s := range m.Sources() {
		read = append(read, s.Table+" "+s.ReadFrom)
	}
	assert.Contains(t, read, "moe_perf (w4a8_mxfp4_mxfp8) 1.3.0rc20")
	assert.Zero(t, m.Fallbacks()[OpMoE])
	path := filepath.Join(sharedDB(t), "data", "b200_sxm", "moe", "trtllm", "1.3.0rc20", "moe_perf.parquet")
	row := moeTableRow(t, path, "w4a8_mxfp4_mxfp8", 1, 2880, 2880, 4, 128, 1, 1)
	assert.InDelta(t, 0.025291, row, 1e-6)
	got := m.Breakdown(decodesP([]int{100}, perf.DecodeWindows(m)...)).ExpertsNs
	assert.InDelta(t, 36*(row*1e-3+m.topKSeconds(1))*1e9, got, 1e-3)
	// H200 (SM 90) keeps the weight-only rows
	h, err := New(a, builtinSystem(t, "h200_sxm"), Options{MaxTokens: 8192, Backend: "trtllm", Database: sharedDB(t),
		Version: "1.2.0rc2", TP: 1})
	require.NoError(t, err)
	assert.Contains(t, tables(h), "moe_perf (w4a16_mxfp4)")
}

// TestMXFP4VLLMOnB200AskedForMXFP8: vLLM with flashinfer_trtllm_afp8 on
// b200_sxm reads w4a8_mxfp4_mxfp8 rows; the only vLLM table with any
// (0.24.0) times another shape (hidden 4096 × 2048, 256 experts top 6), so
// that kernel's curve scaled by the roofline ratio (a moe fallback); by
// default the weight-only w4a16_mxfp4 rows of the version's table.
func TestMXFP4VLLMOnB200AskedForMXFP8(t *testing.T) {
	a, sys := sharedModel(t, "openai/gpt-oss-120b"), builtinSystem(t, "b200_sxm")
	opt := Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.24.0", TP: 1}
	auto, err := New(a, sys, opt)
	require.NoError(t, err)
	opt.MoEBackend = "flashinfer_trtllm_afp8"
	afp8, err := New(a, sys, opt)
	require.NoError(t, err)
	assert.Contains(t, tables(auto), "moe_perf (w4a16_mxfp4)")
	assert.Contains(t, tables(afp8), "moe_perf (w4a8_mxfp4_mxfp8, flashinfer_trtllm_afp8, stand-in shape)")
	assert.Equal(t, 36, afp8.Fallbacks()[OpMoE])
	assert.Zero(t, auto.Fallbacks()[OpMoE])
}

// tables is the Table of each of m's sources.
func tables(m *Model) []string {
	var out []string
	for _, s := range m.Sources() {
		out = append(out, s.Table)
	}
	return out
}
