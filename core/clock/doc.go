// Package clock holds the virtual clock's bounds and its overflow-safe
// arithmetic. The clock is int64 nanoseconds from the start of a replay
// (an integer clock keeps event order exact); every time an event may
// carry is at most Horizon, and every single cost or delay is at most MaxSpan,
// so that a time plus a cost never wraps int64:
//
//	Horizon + MaxSpan = 2^60 + 2^62 < 2^63 − 1
//
// A replay that would schedule an event past Horizon stops with an error
// naming the cost that got it there (replay), instead of wrapping the clock.
//
// Reading order: clock.go (Horizon, MaxSpan, Span, Add). Users: perf (pass
// times), client (client-path costs), replay (every scheduled event, and the
// error that names the cost when one would pass the horizon, horizon.go).
package clock
