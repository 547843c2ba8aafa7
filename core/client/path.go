package client

import (
	"math/rand/v2"

	"github.com/aisimulate/aisimulate/core/clock"
)

// StreamJitter is the name of the random stream (workload.Streams) the
// response-overhead jitter is drawn from, one draw per finished response.
const StreamJitter = "client_jitter"

// Path holds the client-path costs of a replay. The zero value costs nothing:
// outputs reach the client at their pass end and a finished response is acted
// on at once.
type Path struct {
	// SendNs is the send leg and IntakePerTokenNs the API server's input
	// processing per prompt token: a request sent at t reaches the engine at
	// t + ArrivalDelayNs (see there).
	SendNs           int64
	IntakePerTokenNs float64
	// SharedLoop: the input processing is a job on the worker's output
	// processor (the API server's event loop), FIFO with its output
	// handling (OutputProcessor.Intake), instead of a delay of its own.
	SharedLoop bool
	// Detokenize turns on the output processors; DetokBaseNs + DetokPerTokenNs ×
	// tokens is the cost of one pass's job.
	Detokenize      bool
	DetokBaseNs     float64
	DetokPerTokenNs float64
	// OverheadBaseNs + OverheadPerTokenNs × output tokens is the load
	// generator's cost of finishing a response before it acts on it.
	OverheadBaseNs     float64
	OverheadPerTokenNs float64
	// OverheadJitterNs is the mean of the exponential noise added to each
	// response overhead (JitterNs); 0 turns it off.
	OverheadJitterNs float64
	// OverheadSerial: the client finishes one response at a time (a FIFO
	// server); see SerialReleaseNs.
	OverheadSerial bool
	// InterTurnDelayNs is the authored wait between a session turn's release
	// and the next turn's send, when the workload does not give one per turn.
	InterTurnDelayNs int64
	// TimeoutNs: the client cancels a request whose response has not ended
	// TimeoutNs after its send (0 = never).
	TimeoutNs int64
}

// Costs of the client path in the spec's units: each finite and ≥ 0, as the
// spec's validation guarantees (config.Spec.Validate).
type Costs struct {
	SendMs, IntakePerTokenUs                 float64
	SharedLoop                               bool
	Detokenize                               bool
	DetokBaseUs, DetokPerTokenUs             float64
	OverheadBaseMs, OverheadPerOutputTokenUs float64
	OverheadJitterMs                         float64
	OverheadSerial                           bool
	InterTurnDelayMs                         float64
	RequestTimeoutMs                         float64
}

// NewPath converts spec units (ms, µs) to ns.
func NewPath(c Costs) Path {
	return Path{
		SendNs: clock.Span(c.SendMs * 1e6), IntakePerTokenNs: c.IntakePerTokenUs * 1e3, SharedLoop: c.SharedLoop,
		Detokenize: c.Detokenize, DetokBaseNs: c.DetokBaseUs * 1e3, DetokPerTokenNs: c.DetokPerTokenUs * 1e3,
		OverheadBaseNs: c.OverheadBaseMs * 1e6, OverheadPerTokenNs: c.OverheadPerOutputTokenUs * 1e3,
		OverheadJitterNs: c.OverheadJitterMs * 1e6, OverheadSerial: c.OverheadSerial,
		InterTurnDelayNs: clock.Span(c.InterTurnDelayMs * 1e6),
		TimeoutNs:        timeoutNs(c.RequestTimeoutMs),
	}
}

// ArrivalDelayNs is how long after its send a request with promptTokens
// prompt tokens reaches the engine:
//
//	delay = send leg + intake per token × prompt tokens
//
// (docs/design.md, "The client path"), rounded to the ns and saturated at
// clock.MaxSpan, so a huge cost lands past clock.Horizon instead of wrapping.
// Without an intake cost it is the send leg alone.
func (p *Path) ArrivalDelayNs(promptTokens int) int64 {
	if !(p.IntakePerTokenNs > 0) {
		return p.SendNs
	}
	return clock.Add(p.SendNs, p.IntakeNs(promptTokens))
}

// IntakeNs is the API server's input processing of a prompt of promptTokens
// tokens, IntakePerTokenNs × prompt tokens rounded to the ns (saturated at
// clock.MaxSpan).
func (p *Path) IntakeNs(promptTokens int) int64 {
	return clock.Span(p.IntakePerTokenNs * float64(promptTokens))
}

// ReleaseNs is when the client acts on a response whose end it received at
// endNs with outputTokens tokens:
//
//	release = end + base + per_output_token × output tokens
//
// (docs/design.md, "The client path"; a response without output waits base only). Rounded to the
// ns; the overhead saturates at clock.MaxSpan and the sum at math.MaxInt64, so
// a huge overhead lands past clock.Horizon instead of wrapping.
func (p *Path) ReleaseNs(endNs int64, outputTokens int) int64 {
	return clock.Add(endNs, clock.Span(p.OverheadBaseNs+p.OverheadPerTokenNs*float64(outputTokens)))
}

// SerialReleaseNs is ReleaseNs for a client that finishes one response at a
// time: the overhead of a response received at endNs starts when the client
// is free (busyNs, the previous release) and adds jitterNs:
//
//	release = max(end, busy) + base + per_output_token × output tokens + J
//
// Without OverheadSerial, busyNs is ignored (release = ReleaseNs + J).
func (p *Path) SerialReleaseNs(endNs, busyNs int64, outputTokens int, jitterNs int64) int64 {
	if p.OverheadSerial && busyNs > endNs {
		endNs = busyNs
	}
	return clock.Add(p.ReleaseNs(endNs, outputTokens), jitterNs)
}

// JitterNs draws the client's timing noise added to one response overhead:
//
//	J = round(μ · E),  E ~ Exponential(1) (rng.ExpFloat64)
//
// μ = OverheadJitterNs (ns), so E[J] = μ and J ≥ 0: a real client's
// network, scheduling and parsing delays are positive and occasionally long.
// A closed loop whose c clients start together and see equal cycle lengths
// stays in lockstep without it; with it, their phases random-walk apart as on
// real hardware. With μ = 0 it returns 0 and draws nothing (the stream is not
// advanced). rng must be non-nil when μ > 0.
func (p *Path) JitterNs(rng *rand.Rand) int64 {
	if !(p.OverheadJitterNs > 0) {
		return 0
	}
	return clock.Span(p.OverheadJitterNs * rng.ExpFloat64())
}

// TurnDelayNs is the wait before a session's next turn: the turn's own delay
// when the workload gives one, else the load's inter_turn_delay_ms.
func (p *Path) TurnDelayNs(own int64, hasOwn bool) int64 {
	if hasOwn {
		return own
	}
	return p.InterTurnDelayNs
}

// timeoutNs converts a timeout to ns; a positive timeout is at least 1 ns (it
// must never round to 0, which means "no timeout").
func timeoutNs(ms float64) int64 {
	if ms <= 0 {
		return 0
	}
	return max(1, clock.Span(ms*1e6))
}
