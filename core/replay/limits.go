package replay

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/config"
)

// limits are the engine-neutral settings of a spec's engine, read from the
// backend's own block (vLLM: engine.scheduler; TensorRT-LLM: engine.trtllm;
// SGLang: engine.sglang), with the spec path of each for errors.
type limits struct {
	maxSeqs, maxTokens, blockSize int
	// maxModelLen is 0 when not given (the model's max_position_embeddings).
	maxModelLen int
	// numBlocks is the KV capacity given, in blocks (0: from GPU memory);
	// maxKVTokens a cap on it in tokens (0: none).
	numBlocks, maxKVTokens int
	prefixCaching          bool
	// async: the engine forms iteration k+1 while k runs (vLLM's
	// async_scheduling, TensorRT-LLM's overlap scheduler).
	async bool
	// memFraction is vLLM's gpu_memory_utilization (of the whole GPU)
	// or, when ofFree, TensorRT-LLM's free_gpu_memory_fraction (of what the
	// weights and the profiled activations leave).
	memFraction float64
	ofFree      bool
	// attentionDP: the pool's tp GPUs are data-parallel attention ranks.
	attentionDP bool
	// field names the spec fields of the limits ("engine.scheduler.").
	field map[string]string
}

// limitsOf reads the limits of a validated, normalized spec's engine.
func limitsOf(e *config.Engine) limits { return limitsFor(e, nil, "") }

// limitsFor is limitsOf for the workers of pool pl at path field (nil: the
// engine's block): a TensorRT-LLM pool's own engine options when it has them,
// a vLLM pool's own batch limits (config.Pool.Scheduler).
func limitsFor(e *config.Engine, pl *config.Pool, field string) limits {
	if t := e.TRTLLMOf(pl); e.Backend == config.BackendTRTLLM && t != nil {
		p := "engine.trtllm."
		if pl != nil && pl.TRTLLM != nil {
			p = field + ".trtllm."
		}
		return limits{maxSeqs: t.MaxBatchSize, maxTokens: t.MaxNumTokens, blockSize: t.KVCacheConfig.TokensPerBlock,
			maxModelLen: t.MaxSeqLen, maxKVTokens: t.KVCacheConfig.MaxTokens, prefixCaching: t.KVCacheConfig.EnableBlockReuse,
			async: !t.DisableOverlapScheduler, memFraction: t.KVCacheConfig.FreeGPUMemoryFraction, ofFree: true,
			attentionDP: t.EnableAttentionDP,
			field: map[string]string{"max_num_seqs": p + "max_batch_size", "max_num_batched_tokens": p + "max_num_tokens",
				"max_model_len": p + "max_seq_len", "memory": p + "kv_cache_config.free_gpu_memory_fraction",
				"num_gpu_blocks": p + "kv_cache_config.max_tokens", "block_size": p + "kv_cache_config.tokens_per_block",
				"block_reuse": p + "kv_cache_config.enable_block_reuse", "kv_cache_config": p + "kv_cache_config."}}
	}
	if g := e.SGLang; e.Backend == config.BackendSGLang && g != nil {
		// the pools are sized by the family's plan (sglang.Family.Plan, an
		// engine.Planner); these are the limits the deployment reads before
		const p = "engine.sglang."
		return limits{maxSeqs: g.MaxRunningRequests, maxTokens: g.ChunkedPrefillSize, blockSize: g.PageSize,
			maxModelLen: g.ContextLength, maxKVTokens: g.MaxTotalTokens, prefixCaching: !g.DisableRadixCache,
			async: !g.DisableOverlapSchedule, memFraction: g.MemFractionStatic,
			field: map[string]string{"max_num_seqs": p + "max_running_requests", "max_num_batched_tokens": p + "chunked_prefill_size",
				"max_model_len": p + "context_length", "memory": p + "mem_fraction_static",
				"num_gpu_blocks": p + "max_total_tokens", "block_size": p + "page_size"}}
	}
	sc := &e.Scheduler
	const p = "engine.scheduler."
	l := limits{maxSeqs: sc.MaxNumSeqs, maxTokens: sc.MaxNumBatchedTokens, blockSize: sc.BlockSize,
		maxModelLen: sc.MaxModelLen, numBlocks: sc.NumGPUBlocks, prefixCaching: sc.EnablePrefixCaching,
		async: sc.AsyncScheduling, memFraction: sc.GPUMemoryUtilization,
		field: map[string]string{"max_num_seqs": p + "max_num_seqs", "max_num_batched_tokens": p + "max_num_batched_tokens",
			"max_model_len": p + "max_model_len", "memory": p + "gpu_memory_utilization",
			"num_gpu_blocks": p + "num_gpu_blocks", "block_size": p + "block_size"}}
	if pl != nil && pl.Scheduler != nil { // the pool's own batch limits (its servers' flags)
		l.maxSeqs, l.maxTokens = pl.Limits(sc)
		if pl.Scheduler.MaxNumSeqs > 0 {
			l.field["max_num_seqs"] = field + ".scheduler.max_num_seqs"
		}
		if pl.Scheduler.MaxNumBatchedTokens > 0 {
			l.field["max_num_batched_tokens"] = field + ".scheduler.max_num_batched_tokens"
		}
	}
	return l
}

// kvBlocks is the KV capacity of a TensorRT-LLM worker, blocks
// (tensorrt_llm/_torch/pyexecutor/_util.py, KvCacheCreator._cal_max_memory):
// free_gpu_memory_fraction × (GPU memory − the peak of a profiling run at
// max_num_tokens: weights, activations, NCCL and other memory), the budget
// of a plan at utilization 1, capped by kv_cache_config.max_tokens.
func (l limits) kvBlocksOfFree(budgetBytes, bytesPerToken int64) int {
	blocks := int(float64(budgetBytes) * l.memFraction / float64(bytesPerToken*int64(l.blockSize)))
	if l.maxKVTokens > 0 {
		blocks = min(blocks, l.maxKVTokens/l.blockSize)
	}
	return blocks
}

// fieldOf is the spec path of limit key k.
func (l limits) fieldOf(k string) string {
	if f, ok := l.field[k]; ok {
		return f
	}
	panic(fmt.Sprintf("replay: no spec field for limit %q", k))
}
