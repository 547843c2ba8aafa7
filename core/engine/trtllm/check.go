package trtllm

import (
	"fmt"
	"sort"
	"strings"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
)

// mtpArchitectures are the architectures (config.json "architectures")
// served here whose MTP layers TensorRT-LLM builds: MTPForCausalLM
// (tensorrt_llm/_torch/models/modeling_speculative.py) takes the layer by
// model_type — deepseek_v3 and deepseek_v32 (DeepseekV3MTP), glm_moe_dsa,
// qwen3_next, qwen3_5_text and qwen3_5_moe_text (Qwen3NextMTP); glm4_moe,
// exaone_moe and nemotron_h are the others — and raises "Model type … not
// supported for MTP" for any other.
var mtpArchitectures = map[string]string{
	"DeepseekV3ForCausalLM":              "DeepSeek-V3",
	"DeepseekV32ForCausalLM":             "DeepSeek-V3.2",
	"GlmMoeDsaForCausalLM":               "GLM-5",
	"Qwen3NextForCausalLM":               "Qwen3-Next",
	"Qwen3_5ForConditionalGeneration":    "Qwen3.5",
	"Qwen3_5MoeForConditionalGeneration": "Qwen3.5 MoE",
}

var _ engine.ModelChecker = Family{}

// CheckModel refuses MTP speculative decoding (speculative_config) for a
// model TensorRT-LLM cannot run it on (engine.ModelChecker). MTP runs the
// checkpoint's own multi-token-prediction layers: the model engine reads
// their number from config.json (update_spec_config_from_model_config,
// tensorrt_llm/_torch/speculative/utils.py: num_nextn_predict_layers, from
// which MTP-Eagle runs its one layer num_nextn_predict_layers times), and
// MTPForCausalLM builds them only for the families of mtpArchitectures.
func (Family) CheckModel(in engine.PoolInput) error {
	e := &in.Spec.Engine
	t := e.TRTLLMOf(in.Pool)
	if e.Backend != config.BackendTRTLLM || t == nil || t.SpeculativeConfig == nil {
		return nil
	}
	field := "engine.trtllm.speculative_config"
	if in.Pool != nil && in.Pool.TRTLLM != nil {
		field = in.Field + ".trtllm.speculative_config"
	}
	a := in.Arch
	if _, ok := mtpArchitectures[a.Architecture]; !ok {
		var names []string
		for _, n := range mtpArchitectures {
			names = append(names, n)
		}
		sort.Strings(names)
		what := "no multi-token-prediction layers"
		if a.MTPLayers > 0 {
			what = fmt.Sprintf("%d multi-token-prediction layer(s)", a.MTPLayers)
		}
		return &config.Error{Field: field, Msg: fmt.Sprintf(
			"MTP runs the checkpoint's multi-token-prediction layers, and TensorRT-LLM builds them for %s only; %s is %s (%s)",
			strings.Join(names, ", "), a.Name, a.Architecture, what)}
	}
	if a.MTPLayers == 0 {
		return &config.Error{Field: field, Msg: fmt.Sprintf(
			"MTP runs the checkpoint's multi-token-prediction layers, and %s has none (config.json num_nextn_predict_layers = 0)", a.Name)}
	}
	return nil
}
