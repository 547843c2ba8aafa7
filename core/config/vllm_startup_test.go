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
