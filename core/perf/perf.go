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
	// priced without visiting them (core/engine, steady.go). For full
	// attention both perf sources need only D and this sum (the roofline's
	// bytes and FLOPs are linear in the KV lengths; aic prices the mean);
	// windowed layers also read DecodeWindowSums. As a float64 it equals
	// the sum of the lengths taken one by one in float64, the sum the
	// sources formed before, whenever that sum is below 2^53 tokens: every
	// partial sum of integers below 2^53 is exact.
	DecodeKVSum int64
	// DecodeWindowSums holds, for each window W of the perf model's
	// DecodeWindows (in that order), Σ WindowKeys(kv, W) over the decodes,
	// tokens: the keys a decode reads in a sliding-window layer (W its
	// window: min(kv+1, W)), a top-k sparse layer (W the kept keys) or a
	// chunked local-attention layer (W = −C for chunks of C: kv mod C + 1),
	// a sum that is not a function of DecodeKVSum. The engine keeps these incrementally too (steady.go: a
	// steady request's term grows by one a pass until it reaches W). Empty for
	// a model with no windows.
	DecodeWindowSums []int64
	// Samplers is the number of sequences that sample a token at the end of
	// the pass: every decode plus every prefill chunk that completes its prompt
	// (with speculative decoding, every position verified: SpecTokens more).
	Samplers int
	// SpecTokens is the draft tokens the decodes verify beyond their one
	// token each (speculative decoding: TensorRT-LLM's MTP, vLLM's and
	// SGLang's EAGLE proposers): the non-attention ops run over them too
	// (Tokens); decode attention reads each decode's KV once. 0 without
	// speculative decoding.
	SpecTokens int
	// DraftSteps is the draft model's sequential steps after the pass (MTP:
	// num_nextn_predict_layers runs of the model's MTP module), each priced
	// by DraftNs. 0 without speculative decoding.
	DraftSteps int
	// HostLaunchNs is the host's time to launch the pass's kernels one by
	// one, ns, when the engine runs the pass eagerly (no CUDA graph): the
	// kernels cannot finish before the host has launched them
	// (Breakdown.PassNs). The engine sets it (SGLang's extend passes); 0 for
	// a pass replayed from a CUDA graph, or when the engine's model leaves
	// the launch out.
	HostLaunchNs float64
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
// prompt tokens computed plus one per decoding request and its draft
// tokens (SpecTokens).
func (b *Batch) Tokens() int { return b.PrefillTokens() + b.Decodes + b.SpecTokens }

// DraftNs prices b's DraftSteps draft steps, ns: each is one decoder layer
// (the MTP module: the per-layer share of the batch's layer ops, priced at
// one token per request, the batch without its draft tokens) and the LM head
// over the requests. price is the source's Breakdown of a batch, layers the
// model's layer count. 0 without draft steps. An approximation: the MTP
// module is a decoder layer of the model's own shape (DeepSeek-V3's MTP
// module is one such layer with the shared head, arXiv 2412.19437 §2.2), and
// its first step's input is taken as one token per request.
func DraftNs(b *Batch, layers float64, price func(*Batch) Breakdown) float64 {
	if b.DraftSteps <= 0 || layers <= 0 {
		return 0
	}
	d := *b
	d.Samplers -= d.SpecTokens
	d.SpecTokens, d.DraftSteps = 0, 0
	bd := price(&d)
	layer := bd.GEMMNs + bd.ContextAttentionNs + bd.GenerationAttentionNs + bd.MemoryOpsNs + bd.AllReduceNs +
		bd.ExpertsNs + bd.DispatchNs + bd.KernelLatencyNs
	return float64(b.DraftSteps) * (layer/layers + bd.LogitsNs)
}

// Sequences is the number of requests scheduled in the pass: every prefill
// chunk and every decode.
func (b *Batch) Sequences() int { return len(b.Prefill) + b.Decodes }

// AddDecode adds one request decoding a token after kvLen tokens in cache.
func (b *Batch) AddDecode(kvLen int) {
	b.Decodes++
	b.DecodeKVSum += int64(kvLen)
}

// AddDecodeWindows adds one request decoding a token after kvLen tokens in
// cache, for a model with the given DecodeWindows: DecodeWindowSums grows to
// one sum per window and each gains WindowKeys(kvLen, W).
func (b *Batch) AddDecodeWindows(kvLen int, windows []int) {
	b.AddDecode(kvLen)
	for len(b.DecodeWindowSums) < len(windows) {
		b.DecodeWindowSums = append(b.DecodeWindowSums, 0)
	}
	for i, w := range windows {
		b.DecodeWindowSums[i] += int64(WindowKeys(kvLen, w))
	}
}

// WindowKeys is the keys a decode after kv cached tokens reads in a layer of
// decode window w: min(kv+1, w) for a window of w ≥ 1 tokens (sliding-window
// or top-k sparse attention), kv mod c + 1 for chunked local attention in
// chunks of c = −w tokens (Llama-4: a query attends to its own chunk only).
func WindowKeys(kv, w int) int {
	if w < 0 {
		return kv%(-w) + 1
	}
	return min(kv+1, w)
}

// ChunkedWindows reports whether any of the decode windows is a chunked
// one (WindowKeys: w < 0).
func ChunkedWindows(windows []int) bool {
	for _, w := range windows {
		if w < 0 {
			return true
		}
	}
	return false
}

// WindowSum is Σ min(kv+1, W) over the pass's decodes for window i of the
// model's DecodeWindows, tokens, as a float64 (exact: an integer below 2^53,
// so it equals the sum the sources formed term by term before). A batch with
// decodes but without its sums was formed for another model: a programming
// error, reported by a panic naming the window.
func (b *Batch) WindowSum(i int) float64 {
	if b.Decodes == 0 {
		return 0
	}
	if i >= len(b.DecodeWindowSums) {
		panic(fmt.Sprintf("perf: batch of %d decodes has no sum for decode window %d (DecodeWindowSums %v)", b.Decodes, i, b.DecodeWindowSums))
	}
	return float64(b.DecodeWindowSums[i])
}

// WindowUser is implemented by a perf model whose decode attention reads at
// most W keys per request in some layers (sliding-window or top-k sparse
// attention), so that it needs Batch.DecodeWindowSums, not only the KV sum.
type WindowUser interface {
	// DecodeWindows returns the windows W, tokens, whose sums PassTime reads
	// (Batch.DecodeWindowSums, same order; W < 0: chunks of −W tokens,
	// WindowKeys); nil for none.
	DecodeWindows() []int
}

// AddWindow appends decode window w (tokens; −chunk for chunked attention,
// WindowKeys) to windows, a model's DecodeWindows as it builds them, and
// returns its index there (the Batch.WindowSum the pricing reads).
func AddWindow(windows *[]int, w int) int {
	*windows = append(*windows, w)
	return len(*windows) - 1
}

// DecodeWindows returns model m's decode windows (WindowUser), nil when it
// has none.
func DecodeWindows(m any) []int {
	if u, ok := m.(WindowUser); ok {
		return u.DecodeWindows()
	}
	return nil
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
