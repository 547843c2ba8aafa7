package replay

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
)

// startErr is the error of replaying yml (nil when it runs).
func startErr(t *testing.T, yml string) error {
	t.Helper()
	_, err := runErr(t, yml)
	return err
}

// Qwen3-32B on one H100 SXM at TP 1: the memory plan leaves 1,562 blocks of 16
// tokens (perf.PlanMemory: 0.9 × 80 GiB − 61.02 GiB of weights − 1.38 GiB of
// activations − 3.5 GiB other = 6.10 GiB of KV at 256 KiB per token). One
// request of the default max_model_len, 40,960 tokens, needs ⌈40960 / 16⌉ =
// 2,560 blocks (10.00 GiB): vLLM refuses to start, naming 24,992 (1,562 × 16)
// as the largest max_model_len that fits. At that length it runs.
func TestStartupKVCheck_Qwen3_32B_OneH100(t *testing.T) {
	spec := `
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  workers: {aggregated: {count: 1, tp: 1}}
  scheduler: {%s}
traffic:
  source: {type: synthetic, num_requests: 2, isl: 128, osl: 4}
  load: {mode: concurrency, concurrency: 1}
`
	err := startErr(t, fmt.Sprintf(spec, ""))
	var ce *config.Error
	require.True(t, errors.As(err, &ce), "got %v", err)
	assert.Equal(t, "engine.scheduler.max_model_len", ce.Field)
	for _, want := range []string{"max_model_len (40960 tokens, default: the model's max_position_embeddings)",
		"2560 KV blocks of 16 tokens (10.00 GiB", "1562 blocks, 24992 tokens (6.10 GiB, derived from GPU memory)",
		"the largest max_model_len that fits is 24992"} {
		assert.Contains(t, ce.Msg, want)
	}
	assert.Error(t, startErr(t, fmt.Sprintf(spec, "max_model_len: 24993")), "one token more needs a 1,563rd block")
	rep := runYAML(t, fmt.Sprintf(spec, "max_model_len: 24992"))
	assert.Equal(t, 2, rep.Summary.Completed)
	// At TP 2 the same model holds 18,863 blocks (301,808 tokens): the default fits.
	assert.Equal(t, 2, runYAML(t, replaceOnce(fmt.Sprintf(spec, ""), "tp: 1", "tp: 2")).Summary.Completed)
}

// An explicit num_gpu_blocks is the cache the worker runs with: 4 blocks of 16
// hold 64 tokens, so max_model_len 100 (7 blocks) is refused with 64 as the
// largest that fits.
func TestStartupKVCheck_ExplicitBlocks(t *testing.T) {
	yml := traceSpec(t, 4, []traceRow{{ts: 0, in: 10, out: 2, hashes: []int{1}}}, "")
	err := startErr(t, replaceOnce(yml, "max_model_len: 64", "max_model_len: 100"))
	var ce *config.Error
	require.True(t, errors.As(err, &ce), "got %v", err)
	assert.Equal(t, "engine.scheduler.max_model_len", ce.Field)
	assert.Contains(t, ce.Msg, "needs 7 KV blocks of 16 tokens")
	assert.Contains(t, ce.Msg, "4 blocks, 64 tokens")
	assert.Contains(t, ce.Msg, "GiB, num_gpu_blocks)")
	assert.Contains(t, ce.Msg, "the largest max_model_len that fits is 64")
	assert.Equal(t, 1, runYAML(t, yml).Summary.Completed)
}

// P/D: every pool must hold one max_model_len request; the message names the
// pool that cannot (here the decode pool at TP 1 next to a TP 2 prefill pool).
func TestStartupKVCheck_NamesThePool(t *testing.T) {
	spec := `
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  workers:
    disaggregated:
      prefill: {count: 1, tp: 2}
      decode: {count: 1, tp: 1}
      kv_transfer: {bandwidth_gb_per_s: 50}
traffic:
  source: {type: synthetic, num_requests: 1, isl: 128, osl: 4}
  load: {mode: concurrency, concurrency: 1}
`
	err := startErr(t, spec)
	var ce *config.Error
	require.True(t, errors.As(err, &ce), "got %v", err)
	assert.Equal(t, "engine.scheduler.max_model_len", ce.Field)
	assert.Contains(t, ce.Msg, "one decode worker (tp 1)")
}
