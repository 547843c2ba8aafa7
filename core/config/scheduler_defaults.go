package config

import "strings"

// vLLM's defaults of max_num_seqs and max_num_batched_tokens for `vllm serve`
// (UsageContext.OPENAI_API_SERVER) on a CUDA GPU, which vLLM derives from the
// GPU's total memory and name (EngineArgs._set_default_args, later
// get_batch_defaults, in vllm/engine/arg_utils.py). The rule has held since
// vLLM 0.9.0 (PR #17073 keyed it on memory, PR #17885 kept A100s at the small
// values because 8,192-token chunks lowered their throughput) through vLLM
// 0.27.1. From 0.28.0 a GPU of at least 160 GiB (B200, B300, GB200) gets
// 16,384 tokens for `vllm serve` too (get_batch_defaults in 0.28.0's
// vllm/engine/arg_utils.py: "for GPUs like B200/B300 with >= 160GB memory,
// use the largest defaults"; SchedulerDefaultsAt). Before 0.9.0 it keyed on
// the names H100/H200 (PR #12369) and, until PR #16158 (0.8.5), V1 ran 1,024
// sequences on every GPU. An unset engine.backend_version keeps the rule of
// 0.9.0–0.27.1 (SchedulerDefaults).
const (
	// LargeGPUMemory is the memory from which a GPU that is not an A100 gets
	// the large defaults: 70 GiB.
	LargeGPUMemory int64 = 70 << 30
	// LargeGPUMaxNumSeqs and LargeGPUMaxNumBatchedTokens are the large
	// defaults (H100, H200, B200, B300, RTX PRO 6000).
	LargeGPUMaxNumSeqs          = 1024
	LargeGPUMaxNumBatchedTokens = 8192
	// SmallGPUMaxNumSeqs and SmallGPUMaxNumBatchedTokens are the defaults of
	// every other GPU (A100, L40S).
	SmallGPUMaxNumSeqs          = 256
	SmallGPUMaxNumBatchedTokens = 2048
	// HugeGPUMemory is the memory from which vLLM 0.28.0 and later give a
	// GPU HugeGPUMaxNumBatchedTokens (and LargeGPUMaxNumSeqs) whatever its
	// name: 160 GiB (get_batch_defaults, vllm/engine/arg_utils.py of 0.28.0).
	HugeGPUMemory              int64 = 160 << 30
	HugeGPUMaxNumBatchedTokens       = 16384
)

// SchedulerDefaults is vLLM's default max_num_seqs and max_num_batched_tokens
// for `vllm serve` on a GPU of memBytes total memory called name. The system
// name stands for the device name vLLM reads (torch's "NVIDIA A100-SXM4-80GB"):
// like vLLM, it asks whether the name contains "a100", case-insensitively.
func SchedulerDefaults(memBytes int64, name string) (maxNumSeqs, maxNumBatchedTokens int) {
	return SchedulerDefaultsAt(memBytes, name, false)
}

// SchedulerDefaultsAt is SchedulerDefaults under a release's rule: with
// hugeGPURule (VersionDefaults.HugeGPUBatchRule, vLLM 0.28.0 and later) a GPU
// of at least HugeGPUMemory gets LargeGPUMaxNumSeqs and
// HugeGPUMaxNumBatchedTokens, tested before the A100 name (vLLM tests
// `device_memory >= 160 * GiB_bytes` first).
func SchedulerDefaultsAt(memBytes int64, name string, hugeGPURule bool) (maxNumSeqs, maxNumBatchedTokens int) {
	if hugeGPURule && memBytes >= HugeGPUMemory {
		return LargeGPUMaxNumSeqs, HugeGPUMaxNumBatchedTokens
	}
	if memBytes >= LargeGPUMemory && !strings.Contains(strings.ToLower(name), "a100") {
		return LargeGPUMaxNumSeqs, LargeGPUMaxNumBatchedTokens
	}
	return SmallGPUMaxNumSeqs, SmallGPUMaxNumBatchedTokens
}

// ResolveSchedulerDefaults fills engine.scheduler.max_num_seqs and
// max_num_batched_tokens where the spec left them out (0) with vLLM's
// defaults for the system (SchedulerDefaultsAt of its memory and name, under
// the rule of engine.backend_version's release when given). As in
// vLLM, a default max_num_seqs is at most max_num_batched_tokens. An error
// names max_num_batched_tokens when it ends below max_num_seqs, which vLLM
// refuses too.
func (s *Spec) ResolveSchedulerDefaults(memBytes int64, systemName string) error {
	if s.Engine.Backend != BackendVLLM {
		return nil // another engine's limits are its own block's (engine.trtllm, engine.sglang)
	}
	sc := &s.Engine.Scheduler
	d, _ := s.Engine.VLLMReleaseDefaults()
	seqs, tokens := SchedulerDefaultsAt(memBytes, systemName, d.HugeGPUBatchRule)
	tokensDefault := sc.MaxNumBatchedTokens == 0
	if tokensDefault {
		sc.MaxNumBatchedTokens = tokens
	}
	if sc.MaxNumSeqs == 0 {
		sc.MaxNumSeqs = min(seqs, sc.MaxNumBatchedTokens)
	}
	if sc.MaxNumBatchedTokens < sc.MaxNumSeqs {
		if tokensDefault {
			return errorf("engine.scheduler.max_num_batched_tokens", "must be ≥ max_num_seqs (%d), got %d (vLLM's default on %s; set it)",
				sc.MaxNumSeqs, sc.MaxNumBatchedTokens, systemName)
		}
		return errorf("engine.scheduler.max_num_batched_tokens", "must be ≥ max_num_seqs (%d), got %d", sc.MaxNumSeqs, sc.MaxNumBatchedTokens)
	}
	for _, pl := range s.Engine.Workers.pools() { // a pool's own limits beside the defaults now known
		if pl.pool.Scheduler == nil {
			continue
		}
		note := ""
		if tokensDefault {
			note = ": vLLM's default on " + systemName
		}
		if err := checkPoolLimits(pl, sc, note); err != nil {
			return err
		}
	}
	return nil
}
