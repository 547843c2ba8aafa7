package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// SGLangPrefillGraphs by the rules of each wheel (its doc comment): the
// breakable default from 0.5.15, MLA off through 0.5.16 and, without DSA,
// 0.5.17; P/D prefill servers off in 0.5.15 (disable_cuda_graph) and on
// from 0.5.16; Qwen3.5 on the breakable allowlist from 0.5.16; Kimi-K2.5 on
// tc_piecewise 0.5.16 to 0.5.17 (its piecewise allowlist), breakable from
// 0.5.18; DP attention and DeepEP off through 0.5.16; Kimi-K3 (KDA) off from
// 0.5.20; DeepSeek-V4 always off.
func TestSGLangPrefillGraphsByRelease(t *testing.T) {
	dense := SGLangPrefillGraphInput{Architecture: "Qwen3ForCausalLM", DP: 1, Mode: "aggregated"}
	with := func(f func(*SGLangPrefillGraphInput)) SGLangPrefillGraphInput { c := dense; f(&c); return c }
	dsv3 := with(func(c *SGLangPrefillGraphInput) { c.Architecture, c.MLA = "DeepseekV3ForCausalLM", true })
	glm5 := with(func(c *SGLangPrefillGraphInput) { c.Architecture, c.MLA, c.DSA = "GlmMoeDsaForCausalLM", true, true })
	prefill := with(func(c *SGLangPrefillGraphInput) { c.Mode = "prefill" })
	decode := with(func(c *SGLangPrefillGraphInput) { c.Mode = "decode" })
	qwen35 := with(func(c *SGLangPrefillGraphInput) { c.Architecture = "Qwen3_5MoeForConditionalGeneration" })
	kimi := with(func(c *SGLangPrefillGraphInput) { c.Architecture, c.MLA = "KimiK25ForConditionalGeneration", true })
	kimiDP := with(func(c *SGLangPrefillGraphInput) {
		c.Architecture, c.MLA, c.DP = "KimiK25ForConditionalGeneration", true, 2
	})
	dpEP := with(func(c *SGLangPrefillGraphInput) { c.DP, c.DeepEP = 2, true })
	k3 := with(func(c *SGLangPrefillGraphInput) { c.Architecture = "KimiK3ForConditionalGeneration" })
	v4 := with(func(c *SGLangPrefillGraphInput) { c.Architecture, c.MLA = "DeepseekV4ForCausalLM", true })
	const off, bcg, tc = SGLangPrefillGraphsOff, SGLangBreakableGraphs, SGLangTCPiecewiseGraphs
	for _, c := range []struct {
		r    Release
		in   SGLangPrefillGraphInput
		want string
	}{
		{Release{0, 5, 14}, dense, off}, // tc_piecewise: SGLangPiecewiseByDefault's rules
		{Release{0, 5, 15}, dense, bcg},
		{Release{0, 5, 15}, dsv3, off}, {Release{0, 5, 17}, dsv3, off}, {Release{0, 5, 18}, dsv3, bcg},
		{Release{0, 5, 16}, glm5, off}, {Release{0, 5, 17}, glm5, bcg},
		{Release{0, 5, 15}, prefill, off}, {Release{0, 5, 16}, prefill, bcg},
		{Release{0, 5, 15}, decode, off}, {Release{0, 5, 23}, decode, off},
		{Release{0, 5, 15}, qwen35, off}, {Release{0, 5, 16}, qwen35, bcg},
		{Release{0, 5, 15}, kimi, off}, {Release{0, 5, 16}, kimi, tc}, {Release{0, 5, 16}, kimiDP, off},
		{Release{0, 5, 17}, kimi, tc}, {Release{0, 5, 18}, kimi, bcg},
		{Release{0, 5, 16}, dpEP, off}, {Release{0, 5, 17}, dpEP, bcg},
		{Release{0, 5, 19}, k3, bcg}, {Release{0, 5, 20}, k3, off},
		{Release{0, 5, 23}, v4, off},
	} {
		assert.Equal(t, c.want, SGLangPrefillGraphs(c.r, c.in), "%s %+v", c.r, c.in)
	}
}

// The reserve by role (sglangRoleReserve; _handle_gpu_memory_settings of
// 0.5.15): H200 (144,384 MiB), TP 8, chunked 8192, cuda_graph_max_bs 512, no
// prefill graphs.
//
//	decode server, max_running_requests 256: activation max(256, 2048);
//	    512 + 3,072 + 1,024 + 2 · 512 = 5,632 → the 10 GiB floor:
//	    round(134,144 / 144,384, 3) = 0.929 (0.5.14: 512 + 12,288 + 1,024 +
//	    1,024 = 14,848 → 0.897)
//	prefill server: no decode graphs, 512 + 12,288 + 1,024 = 13,824 → 0.904
//	decode server with DeepEP: the floor + 2,048 = 12,288 → 0.915
func TestSGLangReserveByRole(t *testing.T) {
	const h200 = 151397597184
	mrr := &SGLang{MaxRunningRequests: 256}
	decode := SGLangPiecewiseMemory{Mode: "decode"}
	assert.Equal(t, 0.929, SGLangDefaultsPiecewise(Release{0, 5, 15}, h200, 8, 1, 1, mrr, decode).MemFractionStatic)
	assert.Equal(t, 0.897, SGLangDefaultsPiecewise(Release{0, 5, 14}, h200, 8, 1, 1, mrr, decode).MemFractionStatic)
	assert.Equal(t, 0.904, SGLangDefaultsPiecewise(Release{0, 5, 15}, h200, 8, 1, 1, nil, SGLangPiecewiseMemory{Mode: "prefill"}).MemFractionStatic)
	ep := &SGLang{MoEA2ABackend: SGLangA2ADeepEP}
	assert.Equal(t, 0.915, SGLangDefaultsPiecewise(Release{0, 5, 15}, h200, 8, 1, 1, ep, decode).MemFractionStatic)
}

// The GPU buckets and graph sizes of the later wheels: 0.5.20's 20–35 GiB
// bucket (32 GiB: chunked 4096, cuda_graph_max_bs 48 at TP 1; 0.5.19: 2048,
// 24); 0.5.22 cuts the default max_bs (512 on an H200) to a given
// max_running_requests (64); 0.5.23's MLA prefill graphs capture up to
// min(8192, chunk) = 8192 tokens (0.5.22: 2048), and a given context_length
// (1000) caps them through 0.5.16 only.
func TestSGLangLaterGPUDefaults(t *testing.T) {
	const gib32, h200 = 32 << 30, 151397597184
	d19, d20 := SGLangDefaults(Release{0, 5, 19}, gib32, 1, 1, 1, nil), SGLangDefaults(Release{0, 5, 20}, gib32, 1, 1, 1, nil)
	assert.Equal(t, [2]int{2048, 24}, [2]int{d19.ChunkedPrefillSize, d19.CUDAGraphMaxBS})
	assert.Equal(t, [2]int{4096, 48}, [2]int{d20.ChunkedPrefillSize, d20.CUDAGraphMaxBS})
	mrr := &SGLang{MaxRunningRequests: 64}
	assert.Equal(t, 512, SGLangDefaults(Release{0, 5, 21}, h200, 8, 1, 1, mrr).CUDAGraphMaxBS)
	assert.Equal(t, 64, SGLangDefaults(Release{0, 5, 22}, h200, 8, 1, 1, mrr).CUDAGraphMaxBS)
	mla := SGLangPiecewiseMemory{On: true, MLA: true, Mode: "aggregated"}
	assert.Equal(t, 2048, SGLangDefaultsPiecewise(Release{0, 5, 22}, h200, 8, 1, 1, nil, mla).PiecewiseMaxTokens)
	assert.Equal(t, 8192, SGLangDefaultsPiecewise(Release{0, 5, 23}, h200, 8, 1, 1, nil, mla).PiecewiseMaxTokens)
	ctx := SGLangPiecewiseMemory{On: true, ContextLength: 1000, Mode: "aggregated"}
	assert.Equal(t, 1000, SGLangDefaultsPiecewise(Release{0, 5, 16}, h200, 8, 1, 1, nil, ctx).PiecewiseMaxTokens)
	assert.Equal(t, 8192, SGLangDefaultsPiecewise(Release{0, 5, 17}, h200, 8, 1, 1, nil, ctx).PiecewiseMaxTokens)
}
