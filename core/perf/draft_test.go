package perf

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Speculative decoding's batch: 8 decodes verifying 3 draft tokens each run
// the non-attention ops over 32 tokens (Tokens) and sample 32 positions; the
// decode attention is the 8 decodes' alone. Its 3 draft steps each cost one
// layer's share of the 8-decode pass (one token per request) and the LM head
// over 8: DraftNs = 3 × (layer ops / L + logits(8)).
func TestSpeculativeBatch(t *testing.T) {
	r, err := NewRoofline(tinyArch(), toySystem(), RooflineOptions{TP: 1, Params: exactParams})
	require.NoError(t, err)
	plain := &Batch{Samplers: 8}
	for range 8 {
		plain.AddDecode(100)
	}
	spec := *plain
	spec.SpecTokens, spec.Samplers, spec.DraftSteps = 24, 32, 3
	assert.Equal(t, 32, spec.Tokens())

	bp, bs := r.Breakdown(plain), r.Breakdown(&spec)
	assert.Equal(t, r.tokenTerms(32).gemm, bs.GEMMNs, "the GEMMs run over 8 + 24 tokens")
	assert.Equal(t, bp.GenerationAttentionNs, bs.GenerationAttentionNs, "each decode's KV read once")
	assert.Equal(t, r.logitsNs(32), bs.LogitsNs)
	layer := bp.GEMMNs + bp.GenerationAttentionNs + bp.MemoryOpsNs + bp.AllReduceNs + bp.KernelLatencyNs
	assert.InDelta(t, 3*(layer/r.layers+bp.LogitsNs), bs.DraftNs, 1e-6)
	assert.Zero(t, bp.DraftNs)
	assert.InDelta(t, bs.TotalNs()-bs.DraftNs, Breakdown{GEMMNs: bs.GEMMNs, GenerationAttentionNs: bs.GenerationAttentionNs,
		MemoryOpsNs: bs.MemoryOpsNs, AllReduceNs: bs.AllReduceNs, EmbeddingNs: bs.EmbeddingNs, LogitsNs: bs.LogitsNs,
		OverheadNs: bs.OverheadNs, KernelLatencyNs: bs.KernelLatencyNs}.TotalNs(), 1e-6)
	assert.Equal(t, PassNs(bs.PassNs(false)), r.PassTime(&spec), "no decode fast path for a speculative batch")
}
