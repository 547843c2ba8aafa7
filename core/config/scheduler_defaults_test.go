package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vLLM's `vllm serve` defaults by GPU (vllm/engine/arg_utils.py): 1,024
// sequences and 8,192 tokens from 70 GiB unless the GPU is an A100; 256 and
// 2,048 otherwise. Memories are the built-in systems' gpu.mem_capacity.
func TestSchedulerDefaultsPerGPU(t *testing.T) {
	const gib = int64(1) << 30
	for _, c := range []struct {
		name         string
		mem          int64
		seqs, tokens int
	}{
		{"h100_sxm", 80 * gib, 1024, 8192},
		{"h200_sxm", 151397597184, 1024, 8192},
		{"b200_sxm", 180 * gib, 1024, 8192},
		{"gb200", 198674743296, 1024, 8192},
		{"rtx_pro_6000_server", 102641958912, 1024, 8192},
		{"a100_sxm", 80 * gib, 256, 2048},    // ≥ 70 GiB but an A100
		{"My-A100-Box", 80 * gib, 256, 2048}, // the name test is case-insensitive
		{"l40s", 48305799168, 256, 2048},     // 46,068 MiB < 70 GiB
		{"edge", 70 * gib, 1024, 8192},       // 70 GiB is enough
		{"edge", 70*gib - 1, 256, 2048},
	} {
		seqs, tokens := SchedulerDefaults(c.mem, c.name)
		assert.Equal(t, [2]int{c.seqs, c.tokens}, [2]int{seqs, tokens}, "%s %d", c.name, c.mem)
	}
}

func TestResolveSchedulerDefaults(t *testing.T) {
	const gib = int64(1) << 30
	spec := func(sched string) *Spec {
		s, err := DecodeYAML([]byte(`
engine: {model: m, system: h100_sxm` + sched + `}
traffic: {source: {type: synthetic, num_requests: 1, isl: 8, osl: 8}, load: {mode: concurrency, concurrency: 1}}
`))
		require.NoError(t, err)
		return s
	}
	s := spec("")
	require.NoError(t, s.ResolveSchedulerDefaults(80*gib, "h100_sxm"))
	assert.Equal(t, [2]int{1024, 8192}, [2]int{s.Engine.Scheduler.MaxNumSeqs, s.Engine.Scheduler.MaxNumBatchedTokens})
	require.NoError(t, s.ResolveSchedulerDefaults(80*gib, "a100_sxm"), "resolving twice keeps the first values")
	assert.Equal(t, [2]int{1024, 8192}, [2]int{s.Engine.Scheduler.MaxNumSeqs, s.Engine.Scheduler.MaxNumBatchedTokens})

	// a given value is kept; a default max_num_seqs is at most the given
	// max_num_batched_tokens (vLLM: min(1024, 512))
	s = spec(", scheduler: {max_num_batched_tokens: 512}")
	require.NoError(t, s.ResolveSchedulerDefaults(80*gib, "h100_sxm"))
	assert.Equal(t, [2]int{512, 512}, [2]int{s.Engine.Scheduler.MaxNumSeqs, s.Engine.Scheduler.MaxNumBatchedTokens})
	s = spec(", scheduler: {max_num_seqs: 8}")
	require.NoError(t, s.ResolveSchedulerDefaults(48305799168, "l40s"))
	assert.Equal(t, [2]int{8, 2048}, [2]int{s.Engine.Scheduler.MaxNumSeqs, s.Engine.Scheduler.MaxNumBatchedTokens})

	// 4,096 sequences on an A100 exceed its default 2,048-token budget: vLLM
	// refuses it, and so does the replay, naming the field to set
	s = spec(", scheduler: {max_num_seqs: 4096}")
	err := s.ResolveSchedulerDefaults(80*gib, "a100_sxm")
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "engine.scheduler.max_num_batched_tokens", ce.Field)
	assert.Contains(t, ce.Msg, "must be ≥ max_num_seqs (4096), got 2048 (vLLM's default on a100_sxm; set it)")
}

// 0 stands for "not given" inside the spec, so a 0 given is refused where it
// is still told apart.
func TestSchedulerZeroGivenIsRefused(t *testing.T) {
	for _, f := range []string{"max_num_seqs", "max_num_batched_tokens"} {
		ce := decodeErr(t, `
engine: {model: m, system: h100_sxm, scheduler: {`+f+`: 0}}
traffic: {source: {type: synthetic, num_requests: 1, isl: 8, osl: 8}, load: {mode: concurrency, concurrency: 1}}
`)
		assert.Equal(t, "engine.scheduler."+f, ce.Field)
		assert.Contains(t, ce.Msg, "got 0")
	}
}
