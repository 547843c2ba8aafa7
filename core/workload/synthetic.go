package workload

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// Dist kinds.
const (
	DistFixed     = "fixed"
	DistUniform   = "uniform"
	DistNormal    = "normal"
	DistLognormal = "lognormal"
)

// Dist is a distribution of token counts (prompt or output lengths), in
// tokens. Which fields apply depends on Kind:
//
//	fixed      every draw is Value.
//	uniform    an integer uniform on [Min, Max], both inclusive:
//	           P(n) = 1 / (Max − Min + 1).
//	normal     x ~ N(Mean, Std²); the draw is round(clamp(x, Min, Max)).
//	lognormal  x = exp(μ + σ·z), z ~ N(0, 1), with μ and σ chosen so that x has
//	           mean Mean and standard deviation Std (both in tokens, not the
//	           log-space parameters): σ² = ln(1 + Std²/Mean²),
//	           μ = ln(Mean) − σ²/2. The draw is round(clamp(x, Min, Max)).
//
// Rounding is math.Round (half away from zero) after clamping, so a draw
// always lies in [Min, Max]. Clamping piles the tails onto Min and Max, which
// moves the mean when the bounds are close to it.
type Dist struct {
	Kind  string  // DistFixed, DistUniform, DistNormal or DistLognormal
	Value int     // fixed: the value, tokens
	Min   int     // uniform, normal, lognormal: lower bound, tokens, inclusive
	Max   int     // uniform, normal, lognormal: upper bound, tokens, inclusive
	Mean  float64 // normal, lognormal: mean, tokens
	Std   float64 // normal, lognormal: standard deviation, tokens, ≥ 0
}

// Validate checks d for drawing counts ≥ minValue (1 for prompt lengths, 0 for
// output lengths). Errors name the field: "min: must be ≥ 1, got 0".
//
//	fixed      Value ≥ minValue
//	uniform    minValue ≤ Min ≤ Max
//	normal     minValue ≤ Min ≤ Max, Max > 0, Mean and Std finite, Std ≥ 0
//	lognormal  as normal, and Mean > 0
func (d Dist) Validate(minValue int) error {
	bounds := func() error {
		if d.Min < minValue {
			return fmt.Errorf("min: must be ≥ %d, got %d", minValue, d.Min)
		}
		if d.Max < d.Min {
			return fmt.Errorf("max: must be ≥ min (%d), got %d", d.Min, d.Max)
		}
		return nil
	}
	moments := func() error {
		if math.IsNaN(d.Mean) || math.IsInf(d.Mean, 0) {
			return fmt.Errorf("mean: must be finite, got %v", d.Mean)
		}
		if math.IsNaN(d.Std) || math.IsInf(d.Std, 0) || d.Std < 0 {
			return fmt.Errorf("std: must be finite and ≥ 0, got %v", d.Std)
		}
		if d.Max <= 0 {
			return fmt.Errorf("max: must be > 0, got %d", d.Max)
		}
		return bounds()
	}
	switch d.Kind {
	case DistFixed:
		if d.Value < minValue {
			return fmt.Errorf("value: must be ≥ %d, got %d", minValue, d.Value)
		}
		return nil
	case DistUniform:
		return bounds()
	case DistNormal:
		return moments()
	case DistLognormal:
		if !(d.Mean > 0) || math.IsInf(d.Mean, 0) {
			return fmt.Errorf("mean: must be finite and > 0 for lognormal, got %v", d.Mean)
		}
		return moments()
	case "":
		return errors.New("kind: missing (want fixed, uniform, normal or lognormal)")
	default:
		return fmt.Errorf("kind: unknown %q (want fixed, uniform, normal or lognormal)", d.Kind)
	}
}

// Sample draws one count from d using rng. Precondition: d passed Validate
// (an unvalidated Dist may return values outside [Min, Max]). Draws per call:
// fixed none; uniform one Uint64N; normal and lognormal one NormFloat64.
func (d Dist) Sample(rng *rand.Rand) int {
	switch d.Kind {
	case DistFixed:
		return d.Value
	case DistUniform:
		// Max − Min ≤ MaxInt, so +1 cannot overflow uint64.
		return d.Min + int(rng.Uint64N(uint64(d.Max-d.Min)+1))
	case DistNormal:
		return roundClamp(d.Mean+d.Std*rng.NormFloat64(), d.Min, d.Max)
	case DistLognormal:
		s2 := math.Log1p(d.Std * d.Std / (d.Mean * d.Mean))
		mu := math.Log(d.Mean) - s2/2
		return roundClamp(math.Exp(mu+math.Sqrt(s2)*rng.NormFloat64()), d.Min, d.Max)
	}
	return d.Value
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

// SyntheticSpec describes a generated workload: NumRequests requests whose
// prompt lengths come from ISL (≥ 1) and output lengths from OSL (≥ 0). With
// a Dataset the requests send its entries' prompts again and again, as a load
// generator does; without one, every prompt is new.
type SyntheticSpec struct {
	NumRequests int         // number of requests, ≥ 0
	ISL         Dist        // input sequence length, tokens
	OSL         Dist        // output sequence length, tokens
	Dataset     DatasetSpec // the prompts the requests draw from; zero = none
}

// NewSynthetic returns a Source of spec.NumRequests requests. Request i has
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
//
// Errors name the field: "isl.min: must be ≥ 1, got 0",
// "dataset.entries: must be in [1, 1000000], got 0"; a nil streams is an
// error.
func NewSynthetic(spec SyntheticSpec, streams *Streams) (Source, error) {
	if streams == nil {
		return nil, errors.New("workload: synthetic: streams: missing (nil)")
	}
	if spec.NumRequests < 0 {
		return nil, fmt.Errorf("workload: synthetic: num_requests: must be ≥ 0, got %d", spec.NumRequests)
	}
	if err := spec.ISL.Validate(1); err != nil {
		return nil, fmt.Errorf("workload: synthetic: isl.%w", err)
	}
	if err := spec.OSL.Validate(0); err != nil {
		return nil, fmt.Errorf("workload: synthetic: osl.%w", err)
	}
	if err := spec.Dataset.Validate(); err != nil {
		return nil, fmt.Errorf("workload: synthetic: dataset.%w", err)
	}
	s := &syntheticSource{spec: spec, isl: streams.Get(StreamISL), osl: streams.Get(StreamOSL)}
	if spec.Dataset.Entries > 0 {
		s.dataset = newDataset(spec.Dataset, spec.ISL, spec.OSL, s.isl, s.osl, streams.Get(StreamDataset))
	}
	return s, nil
}

type syntheticSource struct {
	spec     SyntheticSpec
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
		r.HashIDs, r.HashBlockTokens = []int64{int64(e)}, ds.isl[e]
	} else {
		r.InputTokens = s.spec.ISL.Sample(s.isl)
		r.OutputTokens = s.spec.OSL.Sample(s.osl)
	}
	s.next++
	return nil
}
