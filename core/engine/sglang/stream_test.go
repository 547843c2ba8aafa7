package sglang

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aisimulate/aisimulate/core/engine"
)

// tokensSent runs r alone on w to its end and returns, for each pass, the
// output length it reached and the tokens it sent.
func tokensSent(w *Worker, r *engine.Request) (lens, sent []int) {
	w.Add(r)
	for {
		if _, ok := w.StartPass(); !ok {
			return lens, sent
		}
		outs, _ := w.FinishPass()
		n := 0
		for _, o := range outs {
			if o.Kind == engine.OutToken {
				n++
			}
		}
		lens, sent = append(lens, r.Generated), append(sent, n)
	}
}

// --stream-interval 10 (stream_output_generation), R1 of 10 prompt tokens
// and 25 output tokens, one a pass (the prefill, then 24 decodes). From
// 0.4.9 the output is sent at the lengths ≡ 1 (mod 10): token 1 at once at
// pass 1, tokens 2–11 at pass 11, 12–21 at pass 21, and 22–25 with the
// finish at pass 25. Before 0.4.9 at the multiples of 10: tokens 1–10 at
// pass 10, 11–20 at pass 20, 21–25 at pass 25. At interval 1 every pass
// sends its token.
func TestStreamIntervalSendsAtTheReleasesLengths(t *testing.T) {
	at := func(pairs ...int) []int {
		s := make([]int, 25)
		for i := 0; i < len(pairs); i += 2 {
			s[pairs[i]-1] = pairs[i+1]
		}
		return s
	}
	ones := make([]int, 25)
	for i := range ones {
		ones[i] = 1
	}
	for _, c := range []struct {
		interval    int
		firstAtOnce bool
		want        []int
	}{
		{10, true, at(1, 1, 11, 10, 21, 10, 25, 4)},
		{10, false, at(10, 10, 20, 10, 25, 5)},
		{1, true, ones},
		{1, false, ones},
	} {
		opt := testOptions(0.1)
		opt.StreamInterval, opt.StreamsFirstToken = c.interval, c.firstAtOnce
		w, _ := newTestWorker(t, 1000, opt)
		_, sent := tokensSent(w, newRequest(1, 10, 25))
		assert.Equal(t, c.want, sent, "interval %d, first at once %v", c.interval, c.firstAtOnce)
	}
}

// Only the length after a pass is tested: with EAGLE (2 draft steps, each
// accepted at 0.5 when those before were: 0.75 accepted a decode, carried in
// fractions) R1 of 12 output tokens reaches lengths 1 (its prefill), 2, 4,
// 6, 8, 9, 11 and 12 (1, 2, 2, 2, 1, 2, 1 tokens a decode). At interval 3
// from 0.4.9 it sends token 1 at once, tokens 2–4 at length 4 (≡ 1 mod 3),
// nothing at 6, 8, 9 or 11, which step over 7 and 10, and tokens 5–12 with
// its finish.
func TestEAGLEDecodesStepOverSendingLengths(t *testing.T) {
	opt := testOptions(0.1)
	opt.DraftSteps, opt.Acceptance = 2, []float64{0.5, 0.5}
	opt.StreamInterval, opt.StreamsFirstToken = 3, true
	w, _ := newTestWorker(t, 1000, opt)
	lens, sent := tokensSent(w, newRequest(1, 10, 12))
	assert.Equal(t, []int{1, 2, 4, 6, 8, 9, 11, 12}, lens)
	assert.Equal(t, []int{1, 0, 3, 0, 0, 0, 0, 8}, sent)
}

// From 0.5.22 (StreamByUnsent) the same EAGLE lengths 1, 2, 4, 6, 8, 9, 11,
// 12 at interval 3 send token 1 at once, then whenever 3 or more are held:
// at 4 (tokens 2–4), 8 (5–8; 6 holds 2), 11 (9–11) and 12 with the finish.
func TestEAGLEDecodesSendByHeldTokensFrom0522(t *testing.T) {
	opt := testOptions(0.1)
	opt.DraftSteps, opt.Acceptance = 2, []float64{0.5, 0.5}
	opt.StreamInterval, opt.StreamsFirstToken, opt.StreamByUnsent = 3, true, true
	w, _ := newTestWorker(t, 1000, opt)
	lens, sent := tokensSent(w, newRequest(1, 10, 12))
	assert.Equal(t, []int{1, 2, 4, 6, 8, 9, 11, 12}, lens)
	assert.Equal(t, []int{1, 0, 3, 0, 4, 0, 3, 1}, sent)
}
