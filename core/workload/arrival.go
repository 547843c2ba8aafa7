package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Arrival gives send times in ns from the start of the replay, non-decreasing.
// Next returns the next send time and true, or (0, false) when the process has
// no more arrivals; after the first false every later call returns false.
//
// Overflow: a process whose next send time would exceed math.MaxInt64 ns
// (≈ 292 years) ends (returns false) instead of wrapping. NaN: constructors
// reject NaN and infinite parameters, so Next never sees one.
//
// Implementations: *Constant, *Poisson, *Gamma. Trace timestamps are not an
// Arrival (the send time comes from each Request.Timestamp): see TraceArrival.
type Arrival interface {
	Next() (sendNs int64, ok bool)
}

// Compile-time checks that each process satisfies Arrival.
var (
	_ Arrival = (*Constant)(nil)
	_ Arrival = (*Poisson)(nil)
	_ Arrival = (*Gamma)(nil)
)

const nsPerSecond = 1e9

// twoPow63 is float64(math.MaxInt64) rounded up: the first float64 that does
// not fit in int64.
const twoPow63 = float64(1 << 63)

func checkRate(rateRPS float64) error {
	if math.IsNaN(rateRPS) || math.IsInf(rateRPS, 0) || rateRPS <= 0 {
		return fmt.Errorf("workload: arrival: rate: must be finite and > 0 requests/s, got %v", rateRPS)
	}
	return nil
}

// TraceArrival maps trace timestamps to send times, compressing or stretching
// the trace by a speed-up factor:
//
//	send_ns = round(timestamp_ns / speedup)
//
// (speedup > 1 replays faster). With speedup exactly 1 the timestamp is used
// as is; otherwise the division is in float64 (exact to the ns below 2^53 ns ≈
// 104 days) and rounded half away from zero, which keeps non-decreasing
// timestamps non-decreasing. A result beyond math.MaxInt64 saturates to
// math.MaxInt64.
type TraceArrival struct {
	speedup float64
}

// Speedup is the factor the mapping divides timestamps by.
func (a *TraceArrival) Speedup() float64 { return a.speedup }

// NewTraceArrival returns the timestamp mapping for speedup (> 0, finite).
// It panics on any other speedup: the config layer validates it, so a bad
// value here is a caller bug.
func NewTraceArrival(speedup float64) *TraceArrival {
	if math.IsNaN(speedup) || math.IsInf(speedup, 0) || speedup <= 0 {
		panic(fmt.Sprintf("workload: NewTraceArrival: speedup must be finite and > 0, got %v", speedup))
	}
	return &TraceArrival{speedup: speedup}
}

// At returns the send time in ns of a request with trace timestamp
// timestampNs (ns from the trace start).
func (a *TraceArrival) At(timestampNs int64) int64 {
	if a.speedup == 1 {
		return timestampNs
	}
	v := math.Round(float64(timestampNs) / a.speedup)
	switch {
	case v >= twoPow63:
		return math.MaxInt64
	case v < -twoPow63:
		return math.MinInt64
	}
	return int64(v)
}

// Constant sends at a fixed rate, first at 0:
//
//	send_k = round(k · 10⁹ / rate)   ns, k = 0, 1, 2, …
//
// rate in requests/s. Each send time is computed from k (not by adding
// rounded gaps), so gaps are exactly 10⁹/rate ns when that is a whole number,
// and otherwise alternate between its floor and ceiling with no drift
// (rate 3: 0, 333333333, 666666667, 1000000000).
type Constant struct {
	rateRPS float64
	period  int64 // exact integer period in ns, or 0 when 10⁹/rate is not whole
	k       int64
	done    bool
}

// NewConstant returns a constant-rate process. rateRPS must be finite and > 0.
func NewConstant(rateRPS float64) (*Constant, error) {
	if err := checkRate(rateRPS); err != nil {
		return nil, err
	}
	c := &Constant{rateRPS: rateRPS}
	if p := nsPerSecond / rateRPS; p >= 1 && p < twoPow63 && p == math.Trunc(p) {
		c.period = int64(p)
	}
	return c, nil
}

// Next implements Arrival.
func (c *Constant) Next() (int64, bool) {
	if c.done {
		return 0, false
	}
	var t int64
	if c.period > 0 {
		if c.k > math.MaxInt64/c.period {
			c.done = true
			return 0, false
		}
		t = c.k * c.period
	} else {
		v := math.Round(float64(c.k) * nsPerSecond / c.rateRPS)
		if v >= twoPow63 {
			c.done = true
			return 0, false
		}
		t = int64(v)
	}
	c.k++
	return t, true
}

// Poisson is a Poisson process of rate λ requests/s: gaps are independent
// exponentials with mean 1/λ s,
//
//	gap_ns = round(E · 10⁹ / λ),  E ~ Exp(1) (rng.ExpFloat64)
//
// and the first arrival comes after one gap (not at 0). Each gap is rounded to
// the nearest ns before it is added, so send times are sums of whole-ns gaps.
type Poisson struct {
	scaleNs float64 // 10⁹ / λ, mean gap in ns
	rng     *rand.Rand
	t       int64
	done    bool
}

// NewPoisson returns a Poisson process. rateRPS must be finite and > 0; rng
// (normally streams.Get(StreamArrival)) must not be nil. One ExpFloat64 draw
// per arrival.
func NewPoisson(rateRPS float64, rng *rand.Rand) (*Poisson, error) {
	if err := checkRate(rateRPS); err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, errors.New("workload: arrival: rng: missing (nil)")
	}
	return &Poisson{scaleNs: nsPerSecond / rateRPS, rng: rng}, nil
}

// Next implements Arrival.
func (p *Poisson) Next() (int64, bool) {
	if p.done {
		return 0, false
	}
	return advance(&p.t, &p.done, math.Round(p.rng.ExpFloat64()*p.scaleNs))
}

// advance adds gapNs (a whole, non-negative float) to *t, or ends the process
// when the sum would pass math.MaxInt64.
func advance(t *int64, done *bool, gapNs float64) (int64, bool) {
	if !(gapNs < twoPow63) || int64(gapNs) > math.MaxInt64-*t { // !(<) also catches NaN
		*done = true
		return 0, false
	}
	*t += int64(gapNs)
	return *t, true
}

// Gamma is a renewal process with gamma-distributed gaps of mean 1/λ s and
// coefficient of variation cv (std/mean of a gap):
//
//	gap ~ Gamma(k, θ),  k = 1/cv² (shape),  θ = cv²/λ s (scale)
//	mean = kθ = 1/λ,  std = √k·θ = cv/λ
//
// cv = 1 is a Poisson process, cv < 1 is more regular, cv > 1 burstier. Gaps are
// rounded to the nearest ns; the first arrival comes after one gap. Sampling:
// Marsaglia & Tsang, "A simple method for generating gamma variables", ACM
// TOMS 26(3), 2000, with G(k) = G(k+1)·U^(1/k) for k < 1.
type Gamma struct {
	shape   float64 // k
	scaleNs float64 // θ in ns
	rng     *rand.Rand
	t       int64
	done    bool
}

// NewGamma returns a gamma renewal process. rateRPS must be finite and > 0,
// cv finite and > 0 with 1/cv² finite and > 0 (about 1e-154 < cv < 1e154),
// rng not nil.
func NewGamma(rateRPS, cv float64, rng *rand.Rand) (*Gamma, error) {
	if err := checkRate(rateRPS); err != nil {
		return nil, err
	}
	shape := 1 / (cv * cv)
	if math.IsNaN(cv) || math.IsInf(cv, 0) || cv <= 0 || math.IsInf(shape, 0) || shape <= 0 {
		return nil, fmt.Errorf("workload: arrival: cv: must be finite and > 0, got %v", cv)
	}
	if rng == nil {
		return nil, errors.New("workload: arrival: rng: missing (nil)")
	}
	return &Gamma{shape: shape, scaleNs: cv * cv / rateRPS * nsPerSecond, rng: rng}, nil
}

// Next implements Arrival.
func (g *Gamma) Next() (int64, bool) {
	if g.done {
		return 0, false
	}
	return advance(&g.t, &g.done, math.Round(sampleGamma(g.rng, g.shape)*g.scaleNs))
}

// sampleGamma draws from Gamma(k, 1), k > 0 (Marsaglia–Tsang). The rejection
// loop accepts with probability > 0.95 for every k ≥ 1, so it is capped at 64
// rounds (a miss has probability < 0.05⁶⁴); past the cap it returns the
// distribution's mode region d = k − 1/3 rather than looping forever.
func sampleGamma(rng *rand.Rand, k float64) float64 {
	if k < 1 {
		// G(k) = G(k+1)·U^(1/k): Marsaglia & Tsang §6.
		return sampleGamma(rng, k+1) * math.Pow(rng.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for range 64 {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		x2 := x * x
		if u < 1-0.0331*x2*x2 || math.Log(u) < 0.5*x2+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
	return d
}

// Scaled is a process whose send times are another's times × a factor, as
// vLLM's benchmark (get_request, vllm/benchmarks/serve.py, from 0.10.0)
// rescales the cumulative delays it drew so that the last of its n requests
// is sent at n/rate ("to close the gap for stabilizing the throughput
// data"): NewScaledTo.
type Scaled struct {
	a      Arrival
	factor float64
}

// NewScaledTo scales a so that its nth send time is spanNs: probe is the
// same process drawn from an identical stream, read n times to find that
// time (n ≥ 1). A process whose nth time is 0 is left as it is (vLLM's
// rescaling needs a last delay ≠ 0).
func NewScaledTo(a, probe Arrival, n int, spanNs int64) (*Scaled, error) {
	if n < 1 || spanNs < 0 {
		return nil, fmt.Errorf("workload: arrival: scale to %d ns over %d sends: want n ≥ 1 and a span ≥ 0", spanNs, n)
	}
	var last int64
	for i := 0; i < n; i++ {
		t, ok := probe.Next()
		if !ok {
			return nil, errors.New("workload: arrival: the sends to rescale run past the end of the virtual clock")
		}
		last = t
	}
	s := &Scaled{a: a, factor: 1}
	if last > 0 {
		s.factor = float64(spanNs) / float64(last)
	}
	return s, nil
}

// Next implements Arrival.
func (s *Scaled) Next() (int64, bool) {
	t, ok := s.a.Next()
	if !ok {
		return 0, false
	}
	v := math.Round(float64(t) * s.factor)
	if !(v < twoPow63) {
		return 0, false
	}
	return int64(v), true
}
