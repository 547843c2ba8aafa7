package config

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each engine argument vLLM refuses at start-up (vllm_startup.go) is refused
// naming its field; the values vLLM takes pass.
func TestVLLMStartUpChecksNameTheField(t *testing.T) {
	spec := func(scheduler string) string {
		return "engine: {model: Qwen/Qwen3-32B, system: h100_sxm, scheduler: " + scheduler + "}\n" +
			minimal[len("\nengine: {model: Qwen/Qwen3-32B, system: h100_sxm}\n"):]
	}
	for _, c := range []struct{ scheduler, field, msg string }{
		{"{max_num_seqs: 512, max_num_batched_tokens: 256}", "engine.scheduler.max_num_batched_tokens", "must be ≥ max_num_seqs (512), got 256"},
		{"{gpu_memory_utilization: 0}", "engine.scheduler.gpu_memory_utilization", "must be in (0, 1], got 0"},
		{"{gpu_memory_utilization: 1.01}", "engine.scheduler.gpu_memory_utilization", "must be in (0, 1], got 1.01"},
		{"{mamba_cache_mode: align, enable_prefix_caching: false}", "engine.scheduler.mamba_cache_mode", "it needs enable_prefix_caching"},
		{"{mamba_cache_mode: every}", "engine.scheduler.mamba_cache_mode", `"every"`},
	} {
		_, err := DecodeYAML([]byte(spec(c.scheduler)))
		var ce *Error
		require.True(t, errors.As(err, &ce), "%s: got %v", c.scheduler, err)
		assert.Equal(t, c.field, ce.Field, c.scheduler)
		assert.Contains(t, ce.Msg, c.msg, c.scheduler)
	}
	for _, ok := range []string{"{max_num_seqs: 256, max_num_batched_tokens: 256}", "{gpu_memory_utilization: 1}",
		"{mamba_cache_mode: align, enable_prefix_caching: true}", "{mamba_cache_mode: none}"} {
		_, err := DecodeYAML([]byte(spec(ok)))
		require.NoError(t, err, ok)
	}
}

// A pool's own batch limits (Pool.Scheduler) are vLLM's: refused with another
// engine, checked as a server's (tokens ≥ sequences), and where the pool
// leaves one out engine.scheduler's resolved default counts: 4096 sequences
// against the 2048 tokens vLLM defaults to on an A100 is refused once the
// default is known.
func TestPoolSchedulerChecks(t *testing.T) {
	spec := func(backend, system, own string) string {
		return "engine: {model: Qwen/Qwen3-32B, system: " + system + ", backend: " + backend +
			", workers: {aggregated: {count: 1, tp: 2, scheduler: " + own + "}}}\n" +
			minimal[len("\nengine: {model: Qwen/Qwen3-32B, system: h100_sxm}\n"):]
	}
	s, err := DecodeYAML([]byte(spec("vllm", "h100_sxm", "{max_num_seqs: 64}")))
	require.NoError(t, err)
	seqs, tokens := s.Engine.Workers.Aggregated.Limits(&Scheduler{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192})
	assert.Equal(t, []int{64, 8192}, []int{seqs, tokens})

	for _, c := range []struct{ backend, own, field, msg string }{
		{"trtllm", "{max_num_seqs: 64}", "engine.workers.aggregated.scheduler", "trtllm block (max_batch_size, max_num_tokens)"},
		{"sglang", "{max_num_seqs: 64}", "engine.workers.aggregated.scheduler", "sglang block"},
		{"vllm", "{max_num_seqs: 512, max_num_batched_tokens: 256}", "engine.workers.aggregated.scheduler.max_num_batched_tokens", "must be ≥ max_num_seqs (512), got 256"},
		{"vllm", "{max_num_batched_tokens: 0}", "engine.workers.aggregated.scheduler.max_num_batched_tokens", "must be ≥ 1, got 0"},
	} {
		_, err := DecodeYAML([]byte(spec(c.backend, "h100_sxm", c.own)))
		var ce *Error
		require.True(t, errors.As(err, &ce), "%s: got %v", c.own, err)
		assert.Equal(t, c.field, ce.Field, c.own)
		assert.Contains(t, ce.Msg, c.msg, c.own)
	}

	s, err = DecodeYAML([]byte(spec("vllm", "a100_sxm", "{max_num_seqs: 4096}")))
	require.NoError(t, err) // engine.scheduler's tokens not known yet
	err = s.ResolveSchedulerDefaults(80<<30, "a100_sxm")
	var ce *Error
	require.True(t, errors.As(err, &ce), "got %v", err)
	assert.Equal(t, "engine.workers.aggregated.scheduler.max_num_seqs", ce.Field)
	assert.Contains(t, ce.Msg, "must be ≤ max_num_batched_tokens (2048, engine.scheduler's: vLLM's default on a100_sxm), got 4096")
}
