package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Stats summarises one latency metric (ms). Percentiles use numpy's default
// "linear" method: for sorted x of n values, the p-th percentile sits at the
// virtual index v = (n − 1)·p/100 and is x[⌊v⌋] + (x[⌊v⌋+1] − x[⌊v⌋])·(v − ⌊v⌋),
// evaluated as numpy's _lerp does (from the upper end when the fraction ≥ 0.5).
// Std is the population standard deviation (numpy's ddof = 0).
type Stats struct {
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	// More is the chosen percentiles (Accumulator.SetPercentiles) other than
	// 50, 90, 95 and 99, ascending: JSON writes each after p99 as
	// PercentileKey(P) (p99.9). Nil unless percentiles were chosen.
	More []PercentileValue `json:"-"`
}

// PercentileValue is one chosen percentile P (0 < P ≤ 100) and its value.
type PercentileValue struct{ P, V float64 }

// FixedPercentiles are the percentiles every Stats holds.
var FixedPercentiles = [...]float64{50, 90, 95, 99}

// PercentileKey is the key of percentile p in a stats object: "p" and p's
// shortest form (p50, p99.9, p1e-05), as vLLM's --metric-percentiles names
// its keys (vllm/benchmarks/serve.py: str(int(p)) when p is whole, else
// str(p), which is Python's repr: an exponent below 1e-4). For p in
// [0, 100] strconv's 'g' with the shortest digits gives the same text, so a
// tiny percentile is named in a few characters, not hundreds of zeros.
func PercentileKey(p float64) string { return "p" + strconv.FormatFloat(p, 'g', -1, 64) }

// CheckPercentiles returns ps ascending without repeats, or an error (for
// the field that holds them) when one is not a finite number in (0, 100] or
// none is given.
func CheckPercentiles(ps []float64) ([]float64, error) {
	if len(ps) == 0 {
		return nil, errors.New("has none: give at least one percentile in (0, 100]")
	}
	for _, p := range ps {
		if !(p > 0 && p <= 100) {
			return nil, fmt.Errorf("%g is not a percentile: each must be a finite number in (0, 100]", p)
		}
	}
	out := slices.Clone(ps)
	slices.Sort(out)
	return slices.Compact(out), nil
}

// MarshalJSON writes mean, std, min, max, p50, p90, p95, p99 and then the
// More percentiles: without More, the bytes encoding/json writes for the
// fields alone.
func (s Stats) MarshalJSON() ([]byte, error) {
	type fields Stats // the same fields without this method
	b, err := json.Marshal(fields(s))
	if err != nil || len(s.More) == 0 {
		return b, err
	}
	b = b[:len(b)-1] // the closing brace
	for _, m := range s.More {
		v, err := json.Marshal(m.V)
		if err != nil {
			return nil, err
		}
		b = append(append(append(append(b, ',', '"'), PercentileKey(m.P)...), '"', ':'), v...)
	}
	return append(b, '}'), nil
}

// extraPercentiles is ps without the FixedPercentiles.
func extraPercentiles(ps []float64) []float64 {
	var out []float64
	for _, p := range ps {
		if !slices.Contains(FixedPercentiles[:], p) {
			out = append(out, p)
		}
	}
	return out
}

// Compute returns the statistics of xs (sorted in place), or nil for no values.
func Compute(xs []float64) *Stats {
	slices.Sort(xs)
	return weightedStats(xs, nil, nil)
}

// computeSamples is Compute with sortSamples' radix sort (buf: its buffer,
// returned for the next call) and the percentiles more beside the fixed ones.
func computeSamples(xs []float64, buf []uint64, more []float64) (*Stats, []uint64) {
	buf = sortSamples(xs, buf)
	return weightedStats(xs, nil, more), buf
}

// weightedStats is the Stats of the list in which vals[i] (ascending) appears
// counts[i] times (once each when counts is nil), or nil when it is empty.
// Compute and the pooled ITL share it, so both follow the same formulas.
// counts is overwritten with the cumulative counts (no second array of that
// length at the end of a long replay). more are percentiles to compute
// beside the fixed ones (Stats.More), ascending.
func weightedStats(vals []float64, counts []int64, more []float64) *Stats {
	if len(vals) == 0 {
		return nil
	}
	var cum []int64 // cum[i] = values ≤ vals[i], for the weighted case
	n, sum := int64(len(vals)), 0.0
	if counts != nil {
		cum, n = counts, 0
		for i, c := range counts {
			n += c
			cum[i] = n
		}
	}
	count := func(i int) float64 {
		switch {
		case cum == nil:
			return 1
		case i == 0:
			return float64(cum[0])
		}
		return float64(cum[i] - cum[i-1])
	}
	for i, v := range vals {
		sum += v * count(i)
	}
	mean := sum / float64(n)
	ss := 0.0
	for i, v := range vals {
		d := v - mean
		ss += d * d * count(i)
	}
	// at is the k-th smallest value (0-based) of the expanded list.
	at := func(k int64) float64 {
		if counts == nil {
			return vals[k]
		}
		i, _ := slices.BinarySearch(cum, k+1)
		return vals[i]
	}
	st := &Stats{
		Mean: mean, Std: math.Sqrt(ss / float64(n)), Min: vals[0], Max: vals[len(vals)-1],
		P50: linearPercentile(n, 50, at), P90: linearPercentile(n, 90, at),
		P95: linearPercentile(n, 95, at), P99: linearPercentile(n, 99, at),
	}
	for _, p := range more {
		st.More = append(st.More, PercentileValue{p, linearPercentile(n, p, at)})
	}
	return st
}

// Percentile is numpy.percentile(xs, p, method="linear") for sorted, non-empty xs.
func Percentile(sorted []float64, p float64) float64 {
	return linearPercentile(int64(len(sorted)), p, func(k int64) float64 { return sorted[k] })
}

// linearPercentile is the numpy-linear p-th percentile of n sorted values, the
// k-th of which is at(k).
func linearPercentile(n int64, p float64, at func(int64) float64) float64 {
	v := float64(n-1) * (p / 100)
	lo := math.Floor(v)
	k := int64(lo)
	if k >= n-1 {
		return at(n - 1)
	}
	return lerp(at(k), at(k+1), v-lo)
}

// lerp is numpy's _lerp: a + (b − a)·t, evaluated from b when t ≥ 0.5.
func lerp(a, b, t float64) float64 {
	d := b - a
	if t >= 0.5 {
		return b - d*(1-t)
	}
	return a + d*t
}
