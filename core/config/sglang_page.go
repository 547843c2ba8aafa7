package config

// SGLangDSAPageSize is the page size SGLang release r sets for a model of
// the given architecture served with DeepSeek Sparse Attention (dsa: the
// checkpoint has index_topk) on a CUDA GPU, whatever --page-size says; 0:
// the release sets none (page_size stays as given). The rule, in the
// wheels (server_args.py _handle_model_specific_adjustments through 0.5.14,
// "Setting page size to 64 for DeepSeek DSA"; from 0.5.15 its DeepSeek
// override, arg_groups/overrides.py, and from 0.5.19
// arg_groups/model_overrides/deepseek_v2.py): page_size = 64 when
// configs/model_config.py is_deepseek_nsa (is_deepseek_dsa from 0.5.15)
// holds, for the architectures of the branch around it. DeepSeek-V3.2's
// config.json (DeepseekV32ForCausalLM, model_type deepseek_v32) is loaded as
// DeepseekV3ForCausalLM (utils/hf_transformers_utils.py
// _load_deepseek_v32_model), in that branch from 0.5.8, the first wheel
// read; GLM-5's GlmMoeDsaForCausalLM joins it in 0.5.9. From 0.5.22 the
// page is 64 · index_kpool (get_dsa_index_kpool, 1 when the config has
// none, as DeepSeek-V3.2's and GLM-5's have not). On ROCm it is 1 or 64
// by the aiter kernel available: every system the simulator knows is an
// NVIDIA GPU.
func SGLangDSAPageSize(r Release, architecture string, dsa bool) int {
	if !dsa || r.Before(sglangDSAPageSince) {
		return 0
	}
	switch architecture {
	case "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM":
		return sglangDSAPageSize
	case "GlmMoeDsaForCausalLM":
		if !r.Before(sglangGLMDSAPageSince) {
			return sglangDSAPageSize
		}
	}
	return 0
}

// sglangDSAPageSize is the DSA models' page on CUDA (SGLangDSAPageSize).
const sglangDSAPageSize = 64

// The first releases read whose rule sets DeepSeek-V3.2's and GLM-5's
// pages (SGLangDSAPageSize): the 0.5.8 and 0.5.9 wheels.
var (
	sglangDSAPageSince    = Release{0, 5, 8}
	sglangGLMDSAPageSince = Release{0, 5, 9}
)
