package clock

import "math"

// Horizon is the latest virtual time an event may have: 2^60 ns, about 36.5
// years of simulated time.
const Horizon int64 = 1 << 60

// MaxSpan bounds one duration (a pass, a send leg, a delay, an overhead):
// 2^62 ns, about 146 years. Span saturates to it.
const MaxSpan int64 = 1 << 62

// Span converts a duration in ns, computed in float64, to int64 ns: rounded
// half away from zero and clamped to [−MaxSpan, MaxSpan]; NaN gives MaxSpan
// (a cost that is not a number can only be "too long", never silently short).
// A Go conversion of a float64 beyond int64's range is implementation-defined
// (it gives math.MinInt64 on amd64, which turned the clock back); this never is.
func Span(ns float64) int64 {
	switch {
	case !(ns < float64(MaxSpan)): // also NaN
		return MaxSpan
	case ns <= -float64(MaxSpan):
		return -MaxSpan
	}
	return int64(math.Round(ns))
}

// Add is t + d saturated to [math.MinInt64, math.MaxInt64]: a sum past the
// range stays past Horizon instead of wrapping to a time in the past.
func Add(t, d int64) int64 {
	s := t + d
	switch {
	case d > 0 && s < t:
		return math.MaxInt64
	case d < 0 && s > t:
		return math.MinInt64
	}
	return s
}

// Years is ns in years of 365.25 days, for messages.
func Years(ns int64) float64 { return float64(ns) / (365.25 * 24 * 3600 * 1e9) }
