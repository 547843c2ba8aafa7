package workload

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/aisimulate/aisimulate/core/config"
)

// sampleLength draws one token count from l (config.Length: its kinds and
// formulas are documented there) using rng:
//
//	fixed      Value, no draw.
//	uniform    Min + U, U uniform on {0, …, Max − Min}: one Uint64N.
//	normal     round(clamp(Mean + Std·z, Min, Max)), z ~ N(0, 1): one NormFloat64.
//	lognormal  round(clamp(exp(μ + σ·z), Min, Max)) with σ² = ln(1 + Std²/Mean²),
//	           μ = ln(Mean) − σ²/2, so that the draw before clamping has mean
//	           Mean and standard deviation Std: one NormFloat64.
//
// Rounding is math.Round (half away from zero) after clamping, so a draw
// always lies in [Min, Max]. Clamping piles the tails onto Min and Max, which
// moves the mean when the bounds are close to it. Precondition: l passed
// Validate.
func sampleLength(l config.Length, rng *rand.Rand) int {
	switch d := l.Kind.(type) {
	case config.FixedLength:
		return d.Value
	case config.UniformLength:
		// Max − Min ≤ MaxInt, so +1 cannot overflow uint64.
		return d.Min + int(rng.Uint64N(uint64(d.Max-d.Min)+1))
	case config.NormalLength:
		return roundClamp(d.Mean+d.Std*rng.NormFloat64(), d.Min, d.Max)
	case config.LognormalLength:
		s2 := math.Log1p(d.Std * d.Std / (d.Mean * d.Mean))
		mu := math.Log(d.Mean) - s2/2
		return roundClamp(math.Exp(mu+math.Sqrt(s2)*rng.NormFloat64()), d.Min, d.Max)
	}
	panic(fmt.Sprintf("workload: length kind %T has no sampler", l.Kind))
}

// roundClamp returns math.Round(clamp(x, lo, hi)); NaN gives lo.
func roundClamp(x float64, lo, hi int) int {
	switch {
	case !(x > float64(lo)): // also NaN
		return lo
	case x >= float64(hi):
		return hi
	}
	return int(math.Round(x))
}

// NewSynthetic returns a Source of spec.NumRequests requests (a synthetic
// traffic.source): prompt lengths from spec.ISL (≥ 1) and output lengths from
// spec.OSL (≥ 0). With a Dataset the requests send its entries' prompts again
// and again, as a load generator does; without one, every prompt is new. Request i has
// ID i, Timestamp 0, Line 0 and SessionID −1. Send times come from an Arrival.
//
// Without a dataset, request i has HashIDs nil (no prefix reuse), its
// InputTokens drawn from spec.ISL with streams.Get(StreamISL) and its
// OutputTokens from spec.OSL with streams.Get(StreamOSL); draws happen in Next,
// so the values depend only on the seed and on how many requests were taken
// before, never on the other stream.
//
// With a dataset of N entries, NewSynthetic draws the N entries' lengths
// first, entry k's ISL and OSL as the k-th draws of the same two streams.
// Request i sends entry e(i): i mod N (sequential), a uniform draw from
// streams.Get(StreamDataset) (random), or position i mod N of a permutation
// of the entries drawn from that stream at the start of every pass of N
// requests (shuffle). It has the entry's lengths and HashIDs = [e(i)] with
// HashBlockTokens = its InputTokens: one source block covering the whole
// prompt, so two requests share prompt blocks iff they send the same entry.
// With the dataset's shared prefixes (config.DatasetPrefix: G groups of T
// tokens) entry k's prompt is T + its isl draw tokens, in blocks of T: the
// first is its group's id k mod G, the others ids of its own (2^40 + k·B + j,
// B the most blocks an entry spans), so the entries of a group share their
// first T tokens and nothing else.
//
// Errors are config.SyntheticSource.Validate's, prefixed "workload:
// synthetic: " ("workload: synthetic: isl.min: must be ≥ 1, got 0"); a nil
// streams is an error.
func NewSynthetic(spec config.SyntheticSource, streams *Streams) (Source, error) {
	if streams == nil {
		return nil, errors.New("workload: synthetic: streams: missing (nil)")
	}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("workload: synthetic: %w", err)
	}
	s := &syntheticSource{spec: spec, isl: streams.Get(StreamISL), osl: streams.Get(StreamOSL)}
	if d := spec.Dataset; d != nil {
		s.dataset = newDataset(*d, spec.ISL, spec.OSL, s.isl, s.osl, streams.Get(StreamDataset))
	}
	return s, nil
}

type syntheticSource struct {
	spec     config.SyntheticSource
	isl, osl *rand.Rand
	dataset  *dataset // nil: every prompt new
	next     int
}

// Next implements Source.
func (s *syntheticSource) Next(r *Request) error {
	if s.next >= s.spec.NumRequests {
		return io.EOF
	}
	*r = Request{ID: int64(s.next), SessionID: -1}
	if ds := s.dataset; ds != nil {
		e := ds.pick()
		r.InputTokens, r.OutputTokens = ds.isl[e], ds.osl[e]
		r.HashIDs, r.HashBlockTokens = ds.hashIDs(e)
	} else {
		r.InputTokens = sampleLength(s.spec.ISL, s.isl)
		r.OutputTokens = sampleLength(s.spec.OSL, s.osl)
	}
	s.next++
	return nil
}
