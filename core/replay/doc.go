// Package replay runs a workload against a deployment on a virtual clock and
// returns the report.
//
// Read first:
//   - loop.go: Run and the event loop. Events are ordered by time, then by
//     phase (phases.go: docs/design.md's "Time and determinism" order, one named constant each), then
//     by a sequence number, so a replay is a pure function of its spec. The
//     request's life: send → arrival (after the send leg) → placement → passes
//     → outputs received (at pass end, or when the worker's detokenization job
//     completes) → end → release (after the client's response overhead).
//   - pools.go: worker pools (one aggregated pool, or prefill + decode) and
//     placement (round robin, least outstanding, prefix affinity) over
//     workers, then, for a worker with data_parallel_size ranks, vLLM's DP
//     load balancer (lowest 4 × waiting + running); router.go: the KV-aware
//     placements (Dynamo's KV router, fed by the workers' KV events;
//     the vLLM production stack's prefix affinity) over blockindex.go. Each rank is an engine.Worker; the ranks of a
//     mixture-of-experts worker start every pass together (loop.go
//     startGroup) and are priced by perf's GroupPassTime.
//   - disagg.go: the P/D flow: prefill with held KV, decode block reservation,
//     KV transfer, failed handoffs.
//   - traffic.go: how requests are sent: open loop (trace timestamps or a rate)
//     or a closed loop of N clients; sessions' next turns (via client.Feed).
//   - build.go: spec → model, GPU system, perf model and KV capacity per pool;
//     the report's metadata.
//   - options.go: Go options that set the client path without YAML.
//
// Interfaces used: engine.Family and engine.Worker (the serving engine, from
// core/engines by engine.backend: the replay never knows which one runs),
// perf.Model (pass time in ns, ≥ 1), workload.Source (streamed requests),
// workload.Arrival (send times in ns), client.Path (client costs in ns).
// Dependencies point one way: replay → engine → perf; workload, client and
// report know nothing of the engine.
package replay
