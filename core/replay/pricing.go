package replay

import (
	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
)

// PoolPricing is one pool of a spec's deployment as the replay builds it:
// the perf model that prices one worker rank's pass, the memory plan that
// sized its KV cache, and its layout and limits. Pricing returns it for the
// perf model's public API (pybind.StepTime, pybind.MemoryPlan) and for
// capacity planning, so that a pass priced outside a replay is priced by the
// same model, built the same way, as the replay's passes.
type PoolPricing struct {
	// Name is "aggregated", "prefill" or "decode"; Field its spec path.
	Name, Field string
	// Workers × TP × DP GPUs; EP: routed experts expert-parallel; Lockstep:
	// the DP ranks of a worker run every pass together (a mixture-of-experts
	// model with DP > 1), priced by GroupPassTime.
	Workers, TP, DP int
	EP, Lockstep    bool
	// Perf prices one rank's pass (perf.Model; perf.Roofline and aic.Model
	// also give its Breakdown). It memoises: use it from one goroutine at a
	// time.
	Perf perf.Model
	// Memory is the plan that sized the KV cache (vLLM's and TensorRT-LLM's
	// rule; docs/design.md, "The KV capacity"), nil when the spec gives the
	// cache's size (num_gpu_blocks) or the engine family sizes its pools
	// itself (SGLang).
	Memory *perf.MemoryPlan
	// The worker's limits as the engine runs them: the KV blocks of one rank
	// (of BlockSize tokens), the longest request, the sequences and tokens of
	// one pass.
	NumBlocks, BlockSize, MaxModelLen, MaxNumSeqs, MaxNumBatchedTokens int
	// LimitFields is the spec path that sets each limit, by vLLM's name of
	// it ("max_num_seqs" → "engine.trtllm.max_batch_size" for TensorRT-LLM,
	// "engine.sglang.max_running_requests" for SGLang), for messages.
	LimitFields map[string]string
	// PrefixCaching is on; Overlap: the engine forms a pass while the
	// previous one runs (vLLM's async scheduling).
	PrefixCaching, Overlap bool
	// DecodeWindows are the perf model's decode windows (perf.DecodeWindows:
	// a batch's DecodeWindowSums follow them).
	DecodeWindows []int
	// Shaper completes a pass's batch as the pool's engine does before
	// pricing it (engine.PassShaper: SGLang's eager launch); nil when the
	// family has none. ShapePass applies it.
	Shaper engine.PassShaper
}

// ShapePass completes b as the pool's engine completes each pass it forms
// (Shaper; nothing without one), so that a pass priced outside a replay is
// the replay's pass.
func (p *PoolPricing) ShapePass(b *perf.Batch) {
	if p.Shaper != nil {
		p.Shaper.ShapePass(b)
	}
}

// GroupPassTime prices the lockstep pass of a worker's DP ranks (one batch
// per rank), ns, as the replay prices it; with one batch and no lockstep it
// is Perf.PassTime.
func (p *PoolPricing) GroupPassTime(bs []perf.Batch) int64 {
	if g, ok := p.Perf.(groupPricer); ok && (p.Lockstep || len(bs) > 1) {
		return g.GroupPassTime(bs)
	}
	var worst int64
	for i := range bs {
		worst = max(worst, p.Perf.PassTime(&bs[i]))
	}
	return worst
}

// DeploymentPricing is a spec's deployment as Pricing builds it.
type DeploymentPricing struct {
	// Model and System are the names the report's metadata gives them.
	Model, System string
	// WeightDtype and KVCacheDtype are the formats the deployment runs
	// (engine.quantization, else the checkpoint's), as the metadata's
	// weight_dtype and kv_cache_dtype.
	WeightDtype, KVCacheDtype model.Dtype
	// Pools in the replay's order: aggregated, or prefill then decode.
	Pools []PoolPricing
}

// Pricing builds the deployment of spec s as a replay would (its model,
// system, quantization, each pool's layout, perf model and KV capacity, the
// start-up checks) without opening its workload. s's scheduler defaults are
// resolved in place.
//
// Errors: as the replay's build of the deployment (*config.Error naming the
// field; Infeasible when the model does not fit or its KV cache cannot hold
// one max_model_len request).
//
// With cache (may be nil), a measured perf model built before for the same
// model, system and options is reused (WithPerfCache).
func Pricing(s *config.Spec, cache *PerfCache) (*DeploymentPricing, error) {
	d, err := buildDeployment(s, cache)
	if err != nil {
		return nil, err
	}
	out := make([]PoolPricing, len(d.pools))
	for i, p := range d.pools {
		out[i] = PoolPricing{Name: p.name, Field: p.field, Workers: p.count, TP: p.tp, DP: p.dp, EP: p.ep,
			Lockstep: p.lockstep, Perf: p.perf, Memory: p.memory, NumBlocks: p.cfg.NumBlocks,
			BlockSize: p.cfg.BlockSize, MaxModelLen: p.cfg.MaxModelLen, MaxNumSeqs: p.cfg.MaxNumSeqs,
			MaxNumBatchedTokens: p.cfg.MaxNumBatchedTokens, PrefixCaching: p.cfg.PrefixCaching,
			Overlap: p.overlap, DecodeWindows: perf.DecodeWindows(p.perf)}
		out[i].Shaper, _ = p.cfg.Options.(engine.PassShaper)
		out[i].LimitFields = p.limitFields
	}
	return &DeploymentPricing{Model: d.arch.Name, System: d.sys.Name, WeightDtype: d.arch.WeightDtype,
		KVCacheDtype: d.kvDtype, Pools: out}, nil
}
