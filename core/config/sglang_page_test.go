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
