// Package search answers a capacity-planning question by simulation: given a
// replay spec whose engine names the model, the GPU system and the serving
// engine, the GPU counts allowed and an SLO, it enumerates the deployments
// the engine can run, prunes those that cannot work before simulating them,
// replays the rest (in parallel, stopping one as soon as it is certain to
// miss the SLO) and reports each candidate's fate and metrics. The Python
// package (aisimulate.search) turns the results into the Pareto front, the
// recommended deployment and its launch flags.
//
// # Reading order
//
//  1. space.go: Space (what the question leaves free: GPU counts, modes,
//     TP/DP/EP, the engine's batch limits, weight and KV formats), Layout
//     and Candidate, Enumerate (every valid combination in a fixed order; an
//     invalid layout is listed with the model's reason, never enumerated).
//  2. knobs.go: a candidate as a spec (Candidate.Spec): its workers, the
//     engine's own batch-limit fields, engine.quantization.
//  3. slo.go: SLO (bounds on a percentile of TTFT, TPOT, E2E) and the
//     tracker that stops a replay once its miss is certain (a
//     replay.Watcher): the p-th percentile of n values exceeds B once
//     n − ⌊(n−1)·p/100⌋ of them do, whatever the others are.
//  4. bounds.go: the analytic prunes: the deployment does not start
//     (memory, the start-up KV check: replay.Pricing), a single decode step
//     already exceeds the TPOT bound, the offered load's decode work outruns
//     what the deployment can do at full batches by more than the SLO allows.
//  5. run.go: Evaluate (one candidate: prune or replay) and Run (candidates
//     on Jobs goroutines, results in candidate order through a callback).
//
// Determinism: a candidate's result depends on the question and the
// candidate only (never on the other candidates, the goroutine it ran on or
// the order results came back), so the same search gives the same results,
// whatever Jobs, and a resumed search those it would have given.
package search
