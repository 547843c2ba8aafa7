package perf

// Linear is the linear pass-time model (docs/design.md, "Perf models" and the worked examples):
//
//	T = BaseMs + PerPrefillTokenMs · P + PerDecodeSeqMs · D
//
// T pass time (ms), P prompt tokens computed in the pass
// (Batch.PrefillTokens), D requests decoding one token (Batch.Decodes).
// A chunk that completes its prompt is a prefill, not a decode. PassTime
// rounds T to the nearest ns and returns at least 1 ns (PassNs). The coefficients are
// used as given (a fitted model may carry a negative one); the floor of 1 ns
// keeps the clock moving.
type Linear struct {
	// BaseMs is the fixed cost of a pass, ms.
	BaseMs float64
	// PerPrefillTokenMs is the cost of one prompt token computed, ms.
	PerPrefillTokenMs float64
	// PerDecodeSeqMs is the cost of one decoding request, ms.
	PerDecodeSeqMs float64
}

var _ Model = Linear{}

// PassTime returns T in ns (see Linear), at least 1.
func (l Linear) PassTime(b *Batch) int64 {
	ms := l.BaseMs + l.PerPrefillTokenMs*float64(b.PrefillTokens()) + l.PerDecodeSeqMs*float64(b.Decodes)
	return PassNs(ms * 1e6)
}

// Name is "linear".
func (Linear) Name() string { return "linear" }
