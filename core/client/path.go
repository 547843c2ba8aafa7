package client

import (
	"fmt"
	"math"
)

// Path holds the client-path costs of a replay. The zero value costs nothing:
// outputs reach the client at their pass end and a finished response is acted
// on at once.
type Path struct {
	// SendNs is the send leg: a request sent at t reaches the engine at t + SendNs.
	SendNs int64
	// Detokenize turns on the output processors; DetokBaseNs + DetokPerTokenNs ×
	// tokens is the cost of one pass's job.
	Detokenize      bool
	DetokBaseNs     float64
	DetokPerTokenNs float64
	// OverheadBaseNs + OverheadPerTokenNs × output tokens is the load
	// generator's cost of finishing a response before it acts on it.
	OverheadBaseNs     float64
	OverheadPerTokenNs float64
	// InterTurnDelayNs is the authored wait between a session turn's release
	// and the next turn's send, when the workload does not give one per turn.
	InterTurnDelayNs int64
}

// Costs of the client path in the spec's units. Each must be finite and ≥ 0.
type Costs struct {
	SendMs                                   float64
	Detokenize                               bool
	DetokBaseUs, DetokPerTokenUs             float64
	OverheadBaseMs, OverheadPerOutputTokenUs float64
	InterTurnDelayMs                         float64
}

// NewPath converts spec units (ms, µs) to ns. The error names the bad cost.
func NewPath(c Costs) (Path, error) {
	for _, v := range []struct {
		name string
		x    float64
	}{{"send_ms", c.SendMs}, {"base_us", c.DetokBaseUs}, {"per_token_us", c.DetokPerTokenUs},
		{"base_ms", c.OverheadBaseMs}, {"per_output_token_us", c.OverheadPerOutputTokenUs},
		{"inter_turn_delay_ms", c.InterTurnDelayMs}} {
		if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 {
			return Path{}, fmt.Errorf("%s must be a finite number ≥ 0, got %v", v.name, v.x)
		}
	}
	return Path{
		SendNs:     int64(math.Round(c.SendMs * 1e6)),
		Detokenize: c.Detokenize, DetokBaseNs: c.DetokBaseUs * 1e3, DetokPerTokenNs: c.DetokPerTokenUs * 1e3,
		OverheadBaseNs: c.OverheadBaseMs * 1e6, OverheadPerTokenNs: c.OverheadPerOutputTokenUs * 1e3,
		InterTurnDelayNs: int64(math.Round(c.InterTurnDelayMs * 1e6)),
	}, nil
}

// ReleaseNs is when the client acts on a response whose end it received at
// endNs with outputTokens tokens:
//
//	release = end + base + per_output_token × output tokens
//
// (DESIGN.md §6; a response without output waits base only). Rounded to the ns.
func (p *Path) ReleaseNs(endNs int64, outputTokens int) int64 {
	return endNs + int64(math.Round(p.OverheadBaseNs+p.OverheadPerTokenNs*float64(outputTokens)))
}

// TurnDelayNs is the wait before a session's next turn: the turn's own delay
// when the workload gives one, else the load's inter_turn_delay_ms.
func (p *Path) TurnDelayNs(own int64, hasOwn bool) int64 {
	if hasOwn {
		return own
	}
	return p.InterTurnDelayNs
}
