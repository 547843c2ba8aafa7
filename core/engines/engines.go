// Package engines is the table of serving engine families by engine.backend:
// the one place that names each engine package. The replay asks it for the
// family of a spec's backend and drives that family's workers through the
// engine.Worker interface alone (core/layers_test.go keeps it so).
//
// Adding an engine is its package under core/engine/ (an engine.Family), its
// row here and its value of engine.backend (core/config/values.go);
// TestEveryBackendHasAFamily fails until all three agree. A family with
// settings beyond engine.Config gets them from Options, which reads the
// backend's own block of the spec.
package engines

import (
	"fmt"
	"slices"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/engine/sglang"
	"github.com/aisimulate/aisimulate/core/engine/trtllm"
	"github.com/aisimulate/aisimulate/core/engine/vllm"
)

// families maps each engine.backend value to its family.
var families = map[string]engine.Family{
	config.BackendVLLM:   vllmFamily{},
	config.BackendTRTLLM: trtllm.Family{},
	config.BackendSGLang: sglang.Family{},
}

// For returns the family serving backend (a validated engine.backend).
func For(backend string) (engine.Family, error) {
	f, ok := families[backend]
	if !ok {
		return nil, fmt.Errorf("engine.backend %q has no engine family", backend)
	}
	return f, nil
}

// Options are the engine.Config.Options of the workers of pool p (nil: the
// engine's) of a validated, normalized spec's engine: the family's own
// settings from its block, the pool's own when it has one (nil for vLLM,
// whose settings engine.Config holds, but for speculative decoding).
func Options(e *config.Engine, p *config.Pool) any {
	if e.Backend == config.BackendVLLM {
		o := vllm.Options{ReserveFullISL: e.Scheduler.SchedulerReserveFullISL}
		if sp := e.Scheduler.SpeculativeConfig; sp != nil {
			o.SpecTokens, o.Acceptance = sp.NumSpeculativeTokens, sp.Rates()
		}
		if o.SpecTokens == 0 && !o.ReserveFullISL {
			return nil
		}
		return o
	}
	t := e.TRTLLMOf(p)
	if e.Backend != config.BackendTRTLLM || t == nil {
		return nil
	}
	o := trtllm.Options{ChunkedPrefill: t.EnableChunkedPrefill, StreamInterval: t.StreamInterval}
	if sp := t.SpeculativeConfig; sp != nil {
		o.MTPDraftTokens, o.MTPAcceptance = sp.NumNextnPredictLayers, sp.Rates()
	}
	if a := t.AttentionDPConfig; t.EnableAttentionDP && a.EnableBalance {
		o.ADPBalance, o.ADPTimeoutIters, o.ADPBatchingWaitIters = true, a.TimeoutIters, a.BatchingWaitIters
	}
	if !t.EnableAttentionDP { // _schedule holds contexts back only without attention DP
		o.BatchWaitTimeoutIters, o.BatchWaitMaxTokensRatio = t.BatchWaitTimeoutIters, t.BatchWaitMaxTokensRatio
	}
	if t.SchedulerConfig.CapacitySchedulerPolicy == config.TRTLLMMaxUtilization {
		o.Policy = trtllm.MaxUtilization
	}
	if t.SchedulerConfig.ContextChunkingPolicy == config.TRTLLMEqualProgress {
		o.Chunking = trtllm.EqualProgress
	}
	if g := t.CUDAGraphConfig; g != nil {
		o.CUDAGraphBatchSizes = trtllm.CUDAGraphBatchSizes(g.MaxBatchSize, g.EnablePadding)
		if len(g.BatchSizes) > 0 {
			o.CUDAGraphBatchSizes = slices.Compact(slices.Sorted(slices.Values(g.BatchSizes)))
		}
		o.CUDAGraphPadding = g.EnablePadding
	}
	return o
}

// TRTLLMStateSlots is TensorRT-LLM options o (Options' result for a
// trtllm pool) with a hybrid model's recurrent-state slots
// (trtllm.Options.StateSlots: max_batch_size, the mamba cache manager's).
func TRTLLMStateSlots(o any, slots int) any {
	t, _ := o.(trtllm.Options)
	t.StateSlots = slots
	return t
}
