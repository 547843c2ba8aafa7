package replay

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engines"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// trtllmStates is how TensorRT-LLM holds a hybrid model's recurrent state
// (linear-attention or Mamba layers) beside the attention layers' KV cache,
// for one worker (one attention-DP rank):
//
//   - MambaHybridCacheManager (tensorrt_llm/_torch/pyexecutor/
//     mamba_cache_manager.py) is a KVCacheManager of the attention layers
//     and a MambaCacheManager of max_batch_size state slots, allocated
//     when the manager is built: per state layer and slot, a conv state of
//     conv_dim/t × (d_conv − 1) at the model's dtype and an SSM state of
//     nheads/t × head_dim × d_state at mamba_ssm_cache_dtype (Qwen3-Next's
//     layers read as n_groups = linear_num_key_heads, d_state =
//     linear_key_head_dim, nheads = linear_num_value_heads, head_dim =
//     linear_value_head_dim: model.LinearAttention's shapes). The cache
//     dtype's "auto" (kv_cache_config.mamba_ssm_cache_dtype's default) is
//     the model's torch_dtype (ModelLoader._load_and_validate_config,
//     validate_and_set_mamba_ssm_cache_dtype in
//     tensorrt_llm/_torch/pyexecutor/model_loader.py): bf16 for every
//     checkpoint served here, whatever its config.json's mamba_ssm_dtype
//     (which vLLM and SGLang follow). With attention DP each rank holds
//     whole states (tp 1; the manager's tp_size is 1 under
//     enable_attention_dp);
//   - the states exist during the profiling run of KvCacheCreator
//     (_util.py), so the peak it measures holds them: the KV cache gets
//     free_gpu_memory_fraction of what the weights, the activations and
//     the states leave, in blocks of tokens_per_block tokens of the
//     attention layers alone (the manager's layer_mask);
//   - the manager asserts "mamba hybrid cache requires block reuse to be
//     disabled in KV cache config": kv_cache_config.enable_block_reuse
//     true is refused (TensorRT-LLM does not start).
type trtllmStates struct {
	slots         int   // max_batch_size
	bytesPerSlot  int64 // one request's state on one GPU, every state layer
	layers        int   // the state layers
	ssmDtypeBytes float64
}

// trtllmHybridSince is the first release whose PyTorch backend serves an
// architecture's hybrid models, where a later release added it: Qwen3.5's
// text models ("Add initial Qwen3.5 text model support for the PyTorch
// backend", v1.3.0rc9 release notes, #12242) and Nemotron-H's latent
// experts (Nemotron-3 Super: "Support Latent MOE for Nemotron", v1.2.0rc3,
// #8955). A release candidate resolves to its release (config.Release), so
// every 1.3.0 candidate passes the Qwen3.5 check.
var trtllmHybridSince = map[string]config.Release{
	"Qwen3_5MoeForConditionalGeneration": {Major: 1, Minor: 3},
	"Qwen3_5ForConditionalGeneration":    {Major: 1, Minor: 3},
}

// trtllmLatentMoESince is the release of Nemotron-H's latent experts.
var trtllmLatentMoESince = config.Release{Major: 1, Minor: 2}

// planTRTLLMStates checks that TensorRT-LLM serves the hybrid model arch
// as the spec sets it up and returns its states (trtllmStates).
func planTRTLLMStates(e *config.Engine, arch *model.Arch, pl *pool, lim limits) (*trtllmStates, error) {
	rel := e.TRTLLMRelease()
	since, gated := trtllmHybridSince[arch.Architecture]
	what := arch.Architecture
	if arch.MoE != nil && arch.MoE.Latent > 0 && arch.Architecture == "NemotronHForCausalLM" {
		since, gated, what = trtllmLatentMoESince, true, "NemotronHForCausalLM with latent experts (moe_latent_size)"
	}
	if gated && rel.Before(since) {
		return nil, &config.Error{Field: "engine.backend_version", Msg: fmt.Sprintf(
			"TensorRT-LLM %s does not serve %s (%s): its PyTorch backend supports it from %s",
			rel, arch.Name, what, since)}
	}
	if lim.prefixCaching {
		return nil, &config.Error{Field: lim.fieldOf("block_reuse"), Msg: fmt.Sprintf(
			"%s keeps a recurrent state per request (%d state layers): TensorRT-LLM's MambaHybridCacheManager requires block reuse to be disabled in the KV cache config (set it false)",
			arch.Name, arch.LinearLayers())}
	}
	tp := pl.tp
	if lim.attentionDP {
		tp = 1
	}
	return &trtllmStates{slots: lim.maxSeqs, bytesPerSlot: arch.StateBytesPerSequenceAs(tp, trtllmSSMBytes),
		layers: arch.LinearLayers(), ssmDtypeBytes: trtllmSSMBytes}, nil
}

// trtllmSSMBytes is the bytes of an SSM-state element as TensorRT-LLM keeps
// it: mamba_ssm_cache_dtype "auto", the model's torch_dtype (bf16 for every
// hybrid checkpoint served here; a float32 override is not modelled).
const trtllmSSMBytes = 2

// bytes is the states' memory on one GPU: max_batch_size slots.
func (s *trtllmStates) bytes() int64 { return int64(s.slots) * s.bytesPerSlot }

// apply turns a memory plan made for vLLM's hybrid layout into
// TensorRT-LLM's: the attention layers' blocks of blockSize tokens, and the
// states taken off the budget before free_gpu_memory_fraction applies
// (kvBlocksOfFree).
func (s *trtllmStates) apply(p *perf.MemoryPlan, blockSize int) {
	p.Hybrid, p.StateBlocks, p.BlockSize = nil, 0, blockSize
	p.KVBudgetBytes -= s.bytes()
}

// options sets the worker's state slots in its TensorRT-LLM options.
func (s *trtllmStates) options(o any) any { return engines.TRTLLMStateSlots(o, s.slots) }

// args are the report's engine_args of the states.
func (s *trtllmStates) args() map[string]any {
	return map[string]any{"mamba_cache_slots": s.slots, "state_bytes_per_slot": s.bytesPerSlot,
		"state_bytes": s.bytes(), "state_layers": s.layers, "mamba_ssm_cache_dtype_bytes": s.ssmDtypeBytes,
		"enable_block_reuse": false}
}
