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
//
// With Path.SharedLoop it is the API server's whole event loop (vLLM's front
// end runs the output handling and every request's input processing in one
// asyncio loop): a request's input processing is a job too (Intake), in the
// same FIFO, so a request that reaches the API server while the loop handles
// the outputs of the running requests waits for that, and the outputs of a
// pass that ends while the loop processes a prompt wait for the prompt.
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

// Intake queues the input processing of a request of promptTokens prompt
// tokens that reached the API server at arriveNs (Path.SharedLoop) and
// returns when it is done, the time the request reaches the engine: the job
// starts at max(arrival, previous job done) and lasts Path.IntakeNs
// (saturating as Submit does).
func (o *OutputProcessor) Intake(p *Path, arriveNs int64, promptTokens int) int64 {
	cost := p.IntakeNs(promptTokens)
	start := max(arriveNs, o.busyUntil)
	o.busyUntil = clock.Add(start, cost)
	o.BusyNs = clock.Add(o.BusyNs, cost)
	return o.busyUntil
}
