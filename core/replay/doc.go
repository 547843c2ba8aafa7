// Package replay runs a workload against a deployment on a virtual clock and
// returns the report.
//
// Read first:
//   - loop.go: the event loop. Events are ordered by time, then by phase
//     (phases.go: the DESIGN.md §3 order, one named constant each), then by a
//     sequence number, so a replay is a pure function of its spec.
//   - aggregated.go: the aggregated runtime: placement of arrivals on workers,
//     pass starts and ends, what the client receives.
//   - traffic.go: how requests are sent: open loop (trace timestamps or a rate)
//     or a closed loop of N clients that each send their next request when the
//     previous one has been acted on.
//   - build.go: spec → model, GPU system, perf model, workers, KV capacity.
//
// Interfaces used: perf.Model (pass time in ns, ≥ 1), workload.Source (streamed
// requests), workload.Arrival (send times in ns). Dependencies point one way:
// replay → engine → perf; workload and report know nothing of the engine.
package replay
