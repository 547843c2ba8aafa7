package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Spread sends n requests over a span of spanNs, as inference-perf's
// ConstantLoadTimer does (inference_perf/loadgen/load_timer.py): n gaps
// drawn as independent exponentials, scaled so that they sum to the span,
//
//	t_k = round(span · (E_1 + … + E_k) / (E_1 + … + E_n)),  k = 1 … n
//
// so the last request is sent at exactly the span's end and none at 0 (the
// counts are exact; the times are those of n Poisson arrivals conditioned on
// the n-th at the span's end). All n draws are made when the spread starts.
type Spread struct {
	times []int64
	i     int
}

// NewSpread returns n sends over spanNs (n ≥ 0, spanNs ≥ 0); rng must not be
// nil when n > 0.
func NewSpread(n int, spanNs int64, rng *rand.Rand) (*Spread, error) {
	if n < 0 || spanNs < 0 {
		return nil, fmt.Errorf("workload: arrival: spread: want n ≥ 0 and a span ≥ 0, got %d and %d ns", n, spanNs)
	}
	s := &Spread{times: make([]int64, n)}
	if n == 0 {
		return s, nil
	}
	if rng == nil {
		return nil, errors.New("workload: arrival: rng: missing (nil)")
	}
	gaps := make([]float64, n)
	var sum float64
	for k := range gaps {
		gaps[k] = rng.ExpFloat64()
		sum += gaps[k]
	}
	var acc float64
	for k, g := range gaps {
		acc += g
		s.times[k] = int64(math.Round(float64(spanNs) * acc / sum))
	}
	s.times[n-1] = spanNs // the normalised sum is the span exactly
	return s, nil
}

// Next implements Arrival.
func (s *Spread) Next() (int64, bool) {
	if s.i == len(s.times) {
		return 0, false
	}
	t := s.times[s.i]
	s.i++
	return t, true
}

// PerSecondPoisson is inference-perf's PoissonLoadTimer: for each second in
// turn a Poisson(rate) count of requests, spread over that second as Spread
// spreads them (a second with none is skipped), until n requests are sent:
//
//	second j: c_j ~ Poisson(rate); its requests at j s + Spread(c_j, 1 s)
//
// The count is drawn by inversion of one uniform (exact for the rates a load
// stage takes; above 500 requests/s a normal approximation with continuity
// correction, rounded, stands in).
type PerSecondPoisson struct {
	rate   float64
	left   int
	rng    *rand.Rand
	second int64
	cur    *Spread
}

// NewPerSecondPoisson returns n sends at rateRPS (finite, > 0); rng must not
// be nil.
func NewPerSecondPoisson(rateRPS float64, n int, rng *rand.Rand) (*PerSecondPoisson, error) {
	if err := checkRate(rateRPS); err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, errors.New("workload: arrival: rng: missing (nil)")
	}
	if n < 0 {
		return nil, fmt.Errorf("workload: arrival: per-second Poisson: n must be ≥ 0, got %d", n)
	}
	return &PerSecondPoisson{rate: rateRPS, left: n, rng: rng}, nil
}

// Next implements Arrival.
func (p *PerSecondPoisson) Next() (int64, bool) {
	for p.left > 0 {
		if p.cur != nil {
			if t, ok := p.cur.Next(); ok {
				p.left--
				return clampAdd(p.second*nsPerSecondInt, t), true
			}
			p.cur = nil
			p.second++
		}
		c := poissonCount(p.rate, p.rng)
		if c == 0 {
			p.second++
			continue
		}
		p.cur, _ = NewSpread(c, nsPerSecondInt, p.rng)
	}
	return 0, false
}

const nsPerSecondInt = int64(nsPerSecond)

// clampAdd is a + b saturated at math.MaxInt64 (both ≥ 0).
func clampAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// poissonCount draws a Poisson(λ) count: inversion of one uniform for λ ≤ 500
// (the cumulative sum of e^−λ λ^k / k!), else round(λ + √λ·z + 0.5) clamped at 0.
func poissonCount(lambda float64, rng *rand.Rand) int {
	if lambda > 500 {
		return max(0, int(math.Floor(lambda+math.Sqrt(lambda)*rng.NormFloat64()+0.5)))
	}
	u := rng.Float64()
	p := math.Exp(-lambda)
	cdf := p
	k := 0
	for u > cdf && k < 10_000 {
		k++
		p *= lambda / float64(k)
		cdf += p
	}
	return k
}
