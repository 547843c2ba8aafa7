package config

// vLLM's start-up checks of its engine arguments, the ones this config
// exposes in engine.scheduler: a configuration `vllm serve` refuses to start
// with is refused here, naming the field, rather than replayed.
//
// From SchedulerConfig (vllm/config/scheduler.py):
//   - max_num_seqs ≥ 1 and max_num_batched_tokens ≥ 1 (its Field(ge=1); and
//     at most MaxNumSeqs, MaxNumBatchedTokens here: ranges.go);
//   - verify_max_model_len: max_num_batched_tokens ≥ max_num_seqs, a pass
//     must hold one token of every running sequence (below, and
//     ResolveSchedulerDefaults when one of the two is vLLM's default);
//   - not applicable: max_num_batched_tokens < max_model_len is refused only
//     without chunked prefill, which vLLM's V1 engine (the one modelled) runs
//     always; the partial-prefill limits are not exposed;
//     max_num_batched_tokens > max_num_seqs × max_model_len is a warning there.
//
// From CacheConfig (vllm/config/cache.py):
//   - gpu_memory_utilization in (0, 1] (its Field(gt=0, le=1); below);
//   - block_size > 0, one of the --block-size choices of EngineArgs
//     (vllm/engine/arg_utils.py; values.go);
//   - cache_dtype one of its CacheDType values (engine.quantization.kv_cache,
//     values.go); mamba_cache_mode one of MambaCacheMode, and "align" (whose
//     states serve prefix hits, as mamba_block_size "can be set only when
//     prefix caching is enabled") needs enable_prefix_caching (below).
//
// ModelConfig's max_model_len ≤ the model's max_position_embeddings and the
// KV cache's room for one max_model_len request are checked where the model
// and the memory plan are known (core/replay).

// validateVLLMStartup applies the checks above that need no model or system.
func validateVLLMStartup(sc *Scheduler) error {
	const scp = "engine.scheduler."
	if sc.MambaCacheMode != "" {
		if err := checkEnum(scp+"mamba_cache_mode", "Scheduler.mamba_cache_mode", sc.MambaCacheMode); err != nil {
			return err
		}
		if sc.MambaCacheMode == MambaCacheModeAlign && !sc.EnablePrefixCaching {
			return errorf(scp+"mamba_cache_mode", "align caches recurrent states for prefix caching: it needs enable_prefix_caching")
		}
	}
	if sc.MaxNumSeqs > 0 && sc.MaxNumBatchedTokens > 0 && sc.MaxNumBatchedTokens < sc.MaxNumSeqs {
		return errorf(scp+"max_num_batched_tokens", "must be ≥ max_num_seqs (%d), got %d", sc.MaxNumSeqs, sc.MaxNumBatchedTokens)
	}
	return checkFloat(scp+"gpu_memory_utilization", "Scheduler.gpu_memory_utilization", sc.GPUMemoryUtilization)
}
