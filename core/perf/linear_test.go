package perf

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLinearWorkedExamples replays the passes of worked example 1 (docs/design.md) with
// base 2.0 ms, 0.01 ms per prompt token, 0.1 ms per decoding request.
func TestLinearWorkedExamples(t *testing.T) {
	l := Linear{BaseMs: 2.0, PerPrefillTokenMs: 0.01, PerDecodeSeqMs: 0.1}
	tests := []struct {
		name string
		b    Batch
		want int64
	}{
		// P1: 2 + 0.01·512 = 7.12 ms.
		{"P1 512-token chunk", Batch{Prefill: []Chunk{{NewTokens: 512}}}, 7_120_000},
		// P2: 2 + 0.01·488 = 6.88 ms; the chunk completes the prompt (1 sampler).
		{"P2 488-token last chunk", Batch{Prefill: []Chunk{{NewTokens: 488, PrefixTokens: 512}}, Samplers: 1}, 6_880_000},
		// P3: 2 + 0.01·100 + 0.1·1 = 3.10 ms.
		{"P3 decode plus completing prefill", Batch{Prefill: []Chunk{{NewTokens: 100}}, Decodes: 1, DecodeKVSum: 1000, Samplers: 2}, 3_100_000},
		// P4: 2 + 0.1·2 = 2.20 ms.
		{"P4 two decodes", Batch{Decodes: 2, DecodeKVSum: 1101, Samplers: 2}, 2_200_000},
		// Empty pass: the base, 2 ms.
		{"empty", Batch{}, 2_000_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, l.PassTime(&tc.b))
		})
	}
	assert.Equal(t, "linear", l.Name())
}

func TestLinearAtLeastOneNs(t *testing.T) {
	// 0 + 0 + 0 = 0 ms → floored to 1 ns; a negative fit → 1 ns.
	assert.Equal(t, int64(1), Linear{}.PassTime(&Batch{}))
	assert.Equal(t, int64(1), Linear{BaseMs: -5}.PassTime(&Batch{Decodes: 1, DecodeKVSum: 1}))
	// 0.0000004 ms = 0.4 ns rounds to 0 → 1; 0.0000026 ms = 2.6 ns → 3.
	assert.Equal(t, int64(1), Linear{BaseMs: 4e-7}.PassTime(&Batch{}))
	assert.Equal(t, int64(3), Linear{BaseMs: 2.6e-6}.PassTime(&Batch{}))
}
