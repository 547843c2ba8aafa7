package perf

import (
	"fmt"
	"math"

	"github.com/aisimulate/aisimulate/core/clock"
)

// Chunk is one prefill chunk of one request inside a pass.
type Chunk struct {
	// NewTokens is the number of prompt tokens computed in this pass (≥ 1).
	NewTokens int
	// PrefixTokens is the number of tokens already in the KV cache before this
	// chunk: the prefix-cache hit plus earlier chunks of the same prompt.
	PrefixTokens int
}

// Batch is one engine pass as formed at pass start.
type Batch struct {
	// Prefill holds one chunk per request that computes prompt tokens.
	Prefill []Chunk
	// Decodes is the number of requests decoding one token in this pass.
	Decodes int
	// DecodeKVSum is the sum of their KV lengths, tokens (each request's
	// context already in cache, excluding the token being computed). The
	// engine keeps it incrementally: a pass of steadily decoding requests is
	// priced without visiting them (core/engine, steady.go). Both perf
	// sources need only D and this sum (the roofline's bytes and FLOPs are
	// linear in the KV lengths; aic prices the mean). As a float64 it equals
	// the sum of the lengths taken one by one in float64, the sum the
	// sources formed before, whenever that sum is below 2^53 tokens: every
	// partial sum of integers below 2^53 is exact.
	DecodeKVSum int64
	// DecodeKVLens holds each decoding request's KV length, tokens, in running
	// order, only for a perf model whose price is not linear in the lengths
	// (NeedsDecodeKVLens: attention over a sliding window or the top-k kept
	// keys sums min(kv+1, w)); the engine then visits every decode
	// (engine.Config.DecodeKVLens). Otherwise it stays empty.
	DecodeKVLens []int
	// Samplers is the number of sequences that sample a token at the end of
	// the pass: every decode plus every prefill chunk that completes its prompt.
	Samplers int
}

// PrefillTokens is the number of prompt tokens computed in the pass.
func (b *Batch) PrefillTokens() int {
	n := 0
	for i := range b.Prefill {
		n += b.Prefill[i].NewTokens
	}
	return n
}

// Tokens is the number of tokens the non-attention ops run over:
// prompt tokens computed plus one per decoding request.
func (b *Batch) Tokens() int { return b.PrefillTokens() + b.Decodes }

// Sequences is the number of requests scheduled in the pass: every prefill
// chunk and every decode.
func (b *Batch) Sequences() int { return len(b.Prefill) + b.Decodes }

// AddDecode adds one request decoding a token after kvLen tokens in cache.
func (b *Batch) AddDecode(kvLen int) {
	b.Decodes++
	b.DecodeKVSum += int64(kvLen)
}

// KVLensUser is implemented by a perf model that may need each decode's KV
// length (Batch.DecodeKVLens), not only their sum.
type KVLensUser interface {
	// NeedsDecodeKVLens reports whether PassTime reads Batch.DecodeKVLens.
	NeedsDecodeKVLens() bool
}

// NeedsDecodeKVLens reports whether model m prices decodes by their
// individual KV lengths (KVLensUser).
func NeedsDecodeKVLens(m any) bool {
	u, ok := m.(KVLensUser)
	return ok && u.NeedsDecodeKVLens()
}

// OverheadNs is the CPU-side cost of a pass outside the kernels, ns:
//
//	fixedNs + perSeqNs × sequences
//
// vLLM's engine step prepares inputs, samples and hands outputs back once per
// pass and once per scheduled request; both perf sources charge it this way
// (the spec's pass_overhead_us and per_sequence_overhead_us; their defaults
// are in core/config/defaults.go).
func OverheadNs(fixedNs, perSeqNs float64, b *Batch) float64 {
	return fixedNs + perSeqNs*float64(b.Sequences())
}

// CheckCost returns an error "<prefix><name> = v, want finite ≥ 0" unless v is
// a finite number ≥ 0 (the check every overhead and latency parameter of the
// perf sources shares).
func CheckCost(prefix, name string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return fmt.Errorf("%s%s = %g, want finite ≥ 0", prefix, name, v)
	}
	return nil
}

// PassNs converts a pass time in ns, computed in float64, to the int64 ns a
// Model returns: rounded, at least 1 (so that the clock always advances), at
// most clock.MaxSpan; a time beyond that, or not finite, is clock.MaxSpan, and
// the replay stops with an error naming engine.perf when it would carry the
// clock past its horizon (a cast of +Inf to int64 used to turn the clock back).
func PassNs(ns float64) int64 {
	if math.IsNaN(ns) {
		return clock.MaxSpan
	}
	return max(1, clock.Span(ns))
}

// Model prices one pass.
type Model interface {
	// PassTime returns the duration of the pass in nanoseconds, in
	// [1, clock.MaxSpan] (PassNs), so that the virtual clock always advances
	// and never wraps. The batch is not retained after the call returns.
	PassTime(b *Batch) int64
	// Name identifies the source and its version for the report metadata,
	// for example "linear" or "roofline-v3".
	Name() string
}
