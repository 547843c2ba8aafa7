package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The DSA page (SGLangDSAPageSize), by the wheels' lines: 0.5.8's
// _handle_model_specific_adjustments sets page_size = 64 in the branch of
// DeepseekV3ForCausalLM (DeepSeek-V3.2 loaded under that name) and not for
// GlmMoeDsaForCausalLM, which 0.5.9's branch adds; 0.5.23's
// model_overrides/deepseek_v2.py sets 64 · index_kpool (1); dense MLA
// (no index_topk) gets none.
func TestSGLangDSAPageSizeByRelease(t *testing.T) {
	for _, c := range []struct {
		r    Release
		arch string
		dsa  bool
		want int
	}{
		{Release{0, 5, 7}, "DeepseekV32ForCausalLM", true, 0},
		{Release{0, 5, 8}, "DeepseekV32ForCausalLM", true, 64},
		{Release{0, 5, 8}, "GlmMoeDsaForCausalLM", true, 0},
		{Release{0, 5, 9}, "GlmMoeDsaForCausalLM", true, 64},
		{Release{0, 5, 23}, "GlmMoeDsaForCausalLM", true, 64},
		{Release{0, 5, 23}, "DeepseekV3ForCausalLM", true, 64},
		{Release{0, 5, 23}, "DeepseekV3ForCausalLM", false, 0},
		{Release{0, 5, 23}, "Qwen3MoeForCausalLM", true, 0},
	} {
		assert.Equal(t, c.want, SGLangDSAPageSize(c.r, c.arch, c.dsa), "%s %s dsa %v", c.r, c.arch, c.dsa)
	}
}

// EAGLE's reserve by release (server_args.py _handle_gpu_memory_settings):
// H200 (144,384 MiB), TP 8, defaults chunked 8192 and cuda_graph_max_bs 512:
// reserved = 512 + 1.5 · 8192 + 2 · 512 + 8/8 · 1024 = 14,848 MiB (above the
// 10 GiB floor); 0.5.13 adds the draft's 4,096, so mem_fraction_static =
// round((144,384 − 18,944) / 144,384, 3) = 0.869; 0.5.14 charges the draft
// to the KV budget instead: round(129,536 / 144,384, 3) = 0.897.
func TestSGLangEAGLEReserveGoneIn0514(t *testing.T) {
	const h200 = 151397597184
	spec := &SGLang{SpeculativeAlgorithm: SGLangSpecEAGLE, SpeculativeNumSteps: 3}
	assert.Equal(t, 0.869, SGLangDefaults(Release{0, 5, 13}, h200, 8, 1, 1, spec).MemFractionStatic)
	assert.Equal(t, 0.897, SGLangDefaults(Release{0, 5, 14}, h200, 8, 1, 1, spec).MemFractionStatic)
	assert.Equal(t, 0.897, SGLangDefaults(Release{0, 5, 14}, h200, 8, 1, 1, nil).MemFractionStatic)
	assert.False(t, SGLangDraftWeightsInKV(Release{0, 5, 13}))
	assert.True(t, SGLangDraftWeightsInKV(Release{0, 5, 14}))
}

// A release read in part (0.5.14 to SGLangNewestPartlyRead) is noted as such;
// one past it as unknown, 0.5.13's rules standing in.
func TestSGLangPartlyReadReleaseNote(t *testing.T) {
	_, note, err := ResolveEngineVersion("0.5.15", BackendSGLang)
	assert.NoError(t, err)
	assert.Contains(t, note, "the rules read in its wheel apply, 0.5.13's stand in for the rest")
	_, note, err = ResolveEngineVersion("0.5.24", BackendSGLang)
	assert.NoError(t, err)
	assert.Equal(t, "SGLang 0.5.24 is newer than the newest release known here (0.5.13): that release's rules stand in", note)
	r, _, _ := ResolveEngineVersion(SGLangNewestPartlyRead, BackendSGLang)
	assert.Equal(t, newestSGLangRead, r)
}
