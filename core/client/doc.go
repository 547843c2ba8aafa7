// Package client models what happens outside the engine on a request's way
// from the load generator and back (docs/design.md, "The client path"):
//
//   - path.go: Path, the costs in ns: the send leg (client → engine), the
//     engine's detokenization (one FIFO output processor per worker) and the
//     load generator's response overhead, which delays whatever waits on a
//     finished response (a closed-loop client's next request, a session's next
//     turn).
//   - detok.go: OutputProcessor, the FIFO server that turns pass ends into the
//     times the client receives their tokens; with Path.SharedLoop it is the
//     API server's event loop, which runs each request's input processing
//     (Intake) in the same queue.
//   - feed.go: Feed, which reads a workload.Source and hands out requests that
//     start something (a lone request or a session's first turn) and, on
//     demand, a session's next turn.
//
// The package knows workloads but not the engine: the replay asks it for
// times and requests and wires them into its event loop.
package client
