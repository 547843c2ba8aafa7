package engines

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/engine/vllm"
)

// vllmFamily is vLLM's family (core/engine/vllm, which does not read the
// spec) with the model checks of its spec's settings; For gives it for
// engine.backend vllm alone, so its checks need not ask the backend.
type vllmFamily struct{ vllm.Family }

var _ engine.ModelChecker = vllmFamily{}

// CheckModel refuses speculative decoding by MTP for a model without
// multi-token-prediction layers (engine.ModelChecker). vLLM's method mtp
// runs the checkpoint's own MTP layers as the draft, n_predict of them
// (config.json num_nextn_predict_layers), and takes num_speculative_tokens
// above n_predict only as a multiple of it, the layers run again in turn
// (SpeculativeConfig.__post_init__, vllm/config/speculative.py).
func (vllmFamily) CheckModel(in engine.PoolInput) error {
	e := &in.Spec.Engine
	sp := e.Scheduler.SpeculativeConfig
	if sp == nil || sp.Method != config.VLLMSpecMTP {
		return nil
	}
	const field = "engine.scheduler.speculative_config"
	a := in.Arch
	if a.MTPLayers == 0 {
		return &config.Error{Field: field + ".method", Msg: fmt.Sprintf(
			"mtp runs the checkpoint's multi-token-prediction layers, and %s (%s) has none (config.json num_nextn_predict_layers)", a.Name, a.Architecture)}
	}
	if k := sp.NumSpeculativeTokens; k > a.MTPLayers && k%a.MTPLayers != 0 {
		return &config.Error{Field: field + ".num_speculative_tokens", Msg: fmt.Sprintf(
			"%d is not a multiple of the %d multi-token-prediction layers of %s (vLLM: num_speculative_tokens must be divisible by n_predict)",
			k, a.MTPLayers, a.Name)}
	}
	return nil
}
