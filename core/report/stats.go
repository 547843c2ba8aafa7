package report

import (
	"math"
	"slices"
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
}

// Compute returns the statistics of xs (sorted in place), or nil for no values.
func Compute(xs []float64) *Stats {
	n := len(xs)
	if n == 0 {
		return nil
	}
	slices.Sort(xs)
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(n)
	ss := 0.0
	for _, x := range xs {
		d := x - mean
		ss += d * d
	}
	return &Stats{
		Mean: mean, Std: math.Sqrt(ss / float64(n)), Min: xs[0], Max: xs[n-1],
		P50: Percentile(xs, 50), P90: Percentile(xs, 90), P95: Percentile(xs, 95), P99: Percentile(xs, 99),
	}
}

// Percentile is numpy.percentile(xs, p, method="linear") for sorted, non-empty xs.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	v := float64(n-1) * (p / 100)
	lo := math.Floor(v)
	t := v - lo
	i := int(lo)
	if i >= n-1 {
		return sorted[n-1]
	}
	return lerp(sorted[i], sorted[i+1], t)
}

// lerp is numpy's _lerp: a + (b − a)·t, evaluated from b when t ≥ 0.5.
func lerp(a, b, t float64) float64 {
	d := b - a
	if t >= 0.5 {
		return b - d*(1-t)
	}
	return a + d*t
}
