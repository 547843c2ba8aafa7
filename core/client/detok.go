package client

import "math"

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
// tokens and returns the time its outputs reach the client.
func (o *OutputProcessor) Submit(p *Path, passEndNs int64, tokens int) int64 {
	cost := int64(math.Round(p.DetokBaseNs + p.DetokPerTokenNs*float64(tokens)))
	start := max(passEndNs, o.busyUntil)
	o.busyUntil = start + cost
	o.BusyNs += cost
	return o.busyUntil
}
