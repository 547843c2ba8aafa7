package perf

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The rules of a few releases (config.VLLMDefaults sets the same flags).
var (
	graphs0120 = VLLMGraphs{Ceiling: 512}                                              // 0.12.0
	graphs0180 = VLLMGraphs{Ceiling: 512, SpecCeiling: true}                           // 0.13.0–0.20.0
	graphs0210 = VLLMGraphs{Ceiling: 512, SpecCeiling: true, CaptureTokenBudget: true} // 0.21.0–0.28.0 (Hopper)
	graphs0290 = VLLMGraphs{Ceiling: 512, SpecCeiling: true, CaptureTokenBudget: true, // 0.29.0–0.30.0
		UniformDecodeSizes: true, RunnerV2: true}
	graphs0310 = VLLMGraphs{Ceiling: 512, SpecCeiling: true, CaptureTokenBudget: true, // 0.31.0–0.33.0
		UniformDecodeSizes: true, RunnerV2: true, CaptureMaxNumSeqs: true}
	graphs0340 = VLLMGraphs{Ceiling: 512, SpecCeiling: true, CaptureTokenBudget: true, // 0.34.0 off Blackwell
		UniformDecodeSizes: true, RunnerV2: true, CaptureMaxNumSeqs: true, SplitSizes: true}
)

func with(v VLLMGraphs, seqs, tokens, q int) VLLMGraphs {
	v.MaxNumSeqs, v.MaxNumBatchedTokens, v.QueryLen = seqs, tokens, q
	return v
}

// TestVLLMGraphSizesNoSpec: without speculative decoding vLLM captures the
// strides 1, 2, 4, 8, …, 248, 256, 272, … up to min(2 × max_num_seqs,
// 512, max_num_batched_tokens) (_set_cudagraph_sizes, vllm/config/vllm.py),
// the limit itself only when on a stride: max_num_seqs 9 (a vllm_moe_dev
// setting) gives the limit 18 and the largest graph 16, so a pass of 17
// tokens runs eagerly, where CUDAGraphTokens(17, 18) pads it to 18. From
// 0.21.0 a token budget at the limit is captured; from 0.31.0 max_num_seqs
// (uniform_decode_sizes = [max_num_seqs]); 0.34.0 off Blackwell the same
// graphs, decodes keyed on request counts min(s, max_num_seqs).
func TestVLLMGraphSizesNoSpec(t *testing.T) {
	for _, v := range []VLLMGraphs{graphs0120, graphs0180, graphs0210, graphs0290} {
		g := with(v, 9, 3509, 1).Sizes()
		assert.Equal(t, []int{1, 2, 4, 8, 16}, g.Mixed)
		assert.Nil(t, g.Decode)
		assert.Equal(t, 16, g.Max())
		assert.Equal(t, 16, g.Pad(9, true))
		assert.Equal(t, 17, g.Pad(17, false)) // eager
	}
	assert.Equal(t, 18, CUDAGraphTokens(17, CUDAGraphMaxTokens(9, 3509)))
	for _, v := range []VLLMGraphs{graphs0310, graphs0340} {
		g := with(v, 9, 3509, 1).Sizes()
		assert.Equal(t, []int{1, 2, 4, 8, 9, 16}, g.Mixed)
		assert.Nil(t, g.Decode)
		assert.Equal(t, 9, g.Pad(9, true))
		assert.Equal(t, 16, g.Pad(10, true))
	}
	// the budget 300 is the limit min(2·256, 512, 300): 0.20.0 captures the
	// stride to 288, 0.21.0 also 300
	assert.Equal(t, 288, with(graphs0180, 256, 300, 1).Sizes().Max())
	g := with(graphs0210, 256, 300, 1).Sizes()
	assert.Equal(t, 300, g.Max())
	assert.Equal(t, 300, g.Pad(290, false))
	assert.Equal(t, 51, len(with(graphs0180, 1024, 8192, 1).Sizes().Mixed)) // 1, 2, 4 + 31 of 8 + 17 of 16
}

// TestVLLMGraphSizesSpecV1: 0.12.0 caps the sizes at 2 × max_num_seqs
// whatever the drafts; from 0.13.0 at max_num_seqs × (1 + k) × 2. With
// k drafts the V1 runner replays the sizes rounded up to multiples of
// q = 1 + k, those not above the largest
// (CompilationConfig.adjust_cudagraph_sizes_for_spec_decode,
// vllm/config/compilation.py), for every pass.
func TestVLLMGraphSizesSpecV1(t *testing.T) {
	// 0.12.0, max_num_seqs 4, k = 2: limit 8, sizes 1, 2, 4, 8 → 3, 3, 6, 9 (above 8)
	g := with(graphs0120, 4, 8192, 3).Sizes()
	assert.Equal(t, []int{3, 6}, g.Mixed)
	assert.Equal(t, 6, g.Max())
	assert.Equal(t, 6, g.Pad(6, true))
	assert.Equal(t, 9, g.Pad(9, true)) // 3 decodes: eager
	// 0.18.0: limit 4·3·2 = 24, sizes 1, 2, 4, 8, 16, 24 → 3, 6, 9, 18, 24
	g = with(graphs0180, 4, 8192, 3).Sizes()
	assert.Equal(t, []int{3, 6, 9, 18, 24}, g.Mixed)
	assert.Nil(t, g.Decode)
	assert.Equal(t, 9, g.Pad(9, true))   // 3 decodes
	assert.Equal(t, 18, g.Pad(12, true)) // 4 decodes run at 6 requests' tokens
	assert.Equal(t, 24, g.Pad(19, false))
	// max_num_seqs 1, k = 1: limit 4, sizes 1, 2, 4 → 2, 2, 4
	assert.Equal(t, []int{2, 4}, with(graphs0210, 1, 8192, 2).Sizes().Mixed)
	// a budget below every rounded size leaves [q] (vLLM's fallback)
	assert.Equal(t, []int{3}, with(graphs0180, 4, 4, 3).Sizes().Mixed) // limit 4: 1, 2, 4 → 3, 3, 6 (above 4)
}

// TestVLLMGraphSizesSpecV2: from 0.29.0 the sizes also hold n·q for n on
// the request grid up to max_num_seqs and within the limit
// (uniform_decode_sizes); the V2 runner captures mixed passes at the sizes
// and uniform decodes at them rounded up to q, at most q × max_num_seqs
// tokens (CudaGraphManager._init_candidates, vllm/v1/worker/gpu/cudagraph_utils.py).
func TestVLLMGraphSizesSpecV2(t *testing.T) {
	// max_num_seqs 6, k = 1: limit 24; strides 1, 2, 4, 8, 16, 24; request
	// grid 1, 2, 4, 6 → 2, 4, 8, 12
	g := with(graphs0290, 6, 8192, 2).Sizes()
	assert.Equal(t, []int{1, 2, 4, 8, 12, 16, 24}, g.Mixed)
	assert.Equal(t, []int{2, 4, 8, 12}, g.Decode) // 16 and 24 are above 2 × 6
	assert.Equal(t, 12, g.Pad(10, true))          // 5 decodes
	assert.Equal(t, 8, g.Pad(6, true))            // 3 decodes
	assert.Equal(t, 16, g.Pad(13, false))         // a mixed pass
	assert.Equal(t, 24, g.Max())
	// 0.34.0: request counts min(⌈s/q⌉, 4) of the sizes within 24, q = 3:
	// sizes 1, 2, 3, 4, 6, 8, 12, 16, 24 → 1, 2, 3, 4 → 3, 6, 9, 12 tokens
	g = with(graphs0340, 4, 8192, 3).Sizes()
	assert.Equal(t, []int{1, 2, 3, 4, 6, 8, 12, 16, 24}, g.Mixed)
	assert.Equal(t, []int{3, 6, 9, 12}, g.Decode)
	assert.Equal(t, 12, g.Pad(12, true))
	assert.Equal(t, 12, g.Pad(11, false))
}

// TestVLLMGraphSizesBlackwell034: 0.34.0 on compute capability 10.x
// captures mixed passes on prefill_cudagraph_capture_grid(min(8192,
// max_num_batched_tokens)) ("54 sizes at 8192") and decodes on
// decode_cudagraph_capture_grid(max_num_seqs) requests ("64 sizes at
// 1024"; every count to 6, then steps 2 from 8, 4 from 16, 8 from 48, 16
// from 128, 32 from 352), as its docstrings in vllm/config/compilation.py say.
func TestVLLMGraphSizesBlackwell034(t *testing.T) {
	assert.Len(t, prefillGrid(8192), 54)
	assert.Equal(t, []int{1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320}, prefillGrid(8192)[:20])
	assert.Equal(t, []int{7168, 7424, 7680, 8192}, prefillGrid(8192)[50:])
	d := decodeGrid(1024)
	assert.Len(t, d, 64)
	assert.Equal(t, []int{1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20}, d[:12])
	assert.Equal(t, []int{320, 336, 352, 384, 416}, d[40:45])
	v := graphs0340
	v.Ceiling, v.WideGrids = 1024, true
	g := with(v, 64, 16384, 1).Sizes()
	assert.Equal(t, 8192, g.Max())
	assert.Equal(t, 8, g.Pad(7, true))    // 7 decodes
	assert.Equal(t, 44, g.Pad(42, true))  // the request grid's 44
	assert.Equal(t, 48, g.Pad(42, false)) // the prefill grid's 48
	assert.Equal(t, 5120, g.Pad(5000, false))
	assert.Equal(t, 8193, g.Pad(8193, false))
	g = with(v, 64, 16384, 4).Sizes() // k = 3: decodes of at most 64 requests
	assert.Equal(t, 224, g.Pad(4*50, true))
	assert.Equal(t, 256, g.Decode[len(g.Decode)-1])
}

// TestCUDAGraphsPadBatch: a uniform decode is decodes only, each verifying
// q − 1 drafts; a DP group pads to a decode's graphs only when every
// running rank decodes uniformly.
func TestCUDAGraphsPadBatch(t *testing.T) {
	// 0.29.0, max_num_seqs 4, k = 2: sizes 1, 2, 3, 4, 6, 8, 12, 16, 24,
	// decodes 3, 6, 9, 12
	g := with(graphs0290, 4, 8192, 3).Sizes()
	assert.Equal(t, []int{3, 6, 9, 12}, g.Decode)
	dec := Batch{Decodes: 3, SpecTokens: 6}
	assert.Equal(t, 9, PadBatch(&g, &dec, 0))
	mixed := Batch{Decodes: 9} // 9 tokens, one each
	assert.Equal(t, 12, PadBatch(&g, &mixed, 0))
	assert.Equal(t, 9, PadGroup(&g, []Batch{dec, {}}, 9, 0))
	assert.Equal(t, 12, PadGroup(&g, []Batch{dec, mixed}, 9, 0))
	assert.Equal(t, 18, PadBatch(nil, &Batch{Decodes: 17}, 18)) // no rule: CUDAGraphTokens
	assert.True(t, VLLMGraphs{}.IsZero())
	assert.Nil(t, GraphsOf(VLLMGraphs{}))
}
