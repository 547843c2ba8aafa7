package replay

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
)

// pdPoolLimits is a vLLM P/D deployment whose pools have their own batch
// limits (prefill, decode: YAML mappings or "" for none) beside
// engine.scheduler's 256 sequences and 8192 tokens.
func pdPoolLimits(prefill, decode string) string {
	pool := func(own string) string {
		if own == "" {
			return "{count: 1, tp: 1}"
		}
		return "{count: 1, tp: 1, scheduler: " + own + "}"
	}
	return fmt.Sprintf(`
engine:
  model: meta-llama/Llama-3.1-8B-Instruct
  system: h100_sxm
  workers:
    disaggregated: {prefill: %s, decode: %s}
  scheduler: {max_num_seqs: 256, max_num_batched_tokens: 8192}
traffic:
  source: {type: synthetic, num_requests: 20, isl: 600, osl: 20}
  load: {mode: concurrency, concurrency: 20}
`, pool(prefill), pool(decode))
}

// Each pool runs with its own limits where it gives them and
// engine.scheduler's where it leaves them out: the prefill pool's 4096-token
// budget with the engine's 256 sequences, the decode pool's 4 sequences with
// the engine's 8192 tokens.
func TestPoolSchedulerLimits(t *testing.T) {
	s, err := config.DecodeYAML([]byte(pdPoolLimits("{max_num_batched_tokens: 4096}", "{max_num_seqs: 4}")))
	require.NoError(t, err)
	d, err := Pricing(s, nil)
	require.NoError(t, err)
	require.Len(t, d.Pools, 2)
	assert.Equal(t, []int{256, 4096}, []int{d.Pools[0].MaxNumSeqs, d.Pools[0].MaxNumBatchedTokens})
	assert.Equal(t, []int{4, 8192}, []int{d.Pools[1].MaxNumSeqs, d.Pools[1].MaxNumBatchedTokens})

	// the decode pool's 4 sequences bound its batch: 20 requests of 19 decode
	// steps each run 4 at a time there, so no decode pass holds more than 4
	rep, err := Run(s, WithTimeline())
	require.NoError(t, err)
	assert.Equal(t, 20, rep.Summary.Completed)
	require.Equal(t, []string{"prefill", "decode"}, rep.Timeline.Pools)
	most := int32(0)
	for _, p := range rep.Timeline.Passes {
		if p.Pool == 1 {
			most = max(most, p.Running)
		}
	}
	assert.Equal(t, int32(4), most)
}

// A pool's own limits are checked as vLLM checks a server's: tokens ≥
// sequences, with engine.scheduler's value for the one the pool leaves out.
func TestPoolSchedulerRefused(t *testing.T) {
	for _, tc := range []struct{ prefill, decode, field string }{
		{"", "{max_num_seqs: 512, max_num_batched_tokens: 256}", "engine.workers.disaggregated.decode.scheduler.max_num_batched_tokens"},
		{"{max_num_seqs: 9000}", "", "engine.workers.disaggregated.prefill.scheduler.max_num_seqs"}, // over the engine's 8192 tokens
		{"{max_num_seqs: 0}", "", "engine.workers.disaggregated.prefill.scheduler.max_num_seqs"},
	} {
		_, err := config.DecodeYAML([]byte(pdPoolLimits(tc.prefill, tc.decode)))
		var ce *config.Error
		require.ErrorAs(t, err, &ce, "%+v", tc)
		assert.Equal(t, tc.field, ce.Field)
	}
}
