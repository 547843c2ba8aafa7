package client

import "github.com/aisimulate/aisimulate/core/clock"

// OutputProcessor is one worker's detokenizer: a FIFO server. Each pass that
// produced outputs hands it one job; the job starts when both the pass has ended
// and the previous job is done, and lasts
//
//	base + per_token × tokens produced in the pass
//
// The client receives the pass's tokens and terminals when the job completes.
// It delays the client, never the engine.
type OutputProcessor struct {
	busyUntil int64
	// BusyNs is the total time spent on jobs.
	BusyNs int64
}

// Submit queues the job of a pass that ended at passEndNs with tokens output
// tokens and returns the time its outputs reach the client (saturating: a
// cost past the clock's range lands past clock.Horizon, where the replay
// stops, instead of wrapping).
func (o *OutputProcessor) Submit(p *Path, passEndNs int64, tokens int) int64 {
	cost := clock.Span(p.DetokBaseNs + p.DetokPerTokenNs*float64(tokens))
	start := max(passEndNs, o.busyUntil)
	o.busyUntil = clock.Add(start, cost)
	o.BusyNs = clock.Add(o.BusyNs, cost)
	return o.busyUntil
}
