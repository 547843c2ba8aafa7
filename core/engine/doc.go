// Package engine is the contract between the replay and the serving engines:
// the calls the replay makes of one worker (Worker), the family that makes
// workers and requests (Family), and what every engine shares (the request's
// shared part, a pass's outputs, the worker's counters, the block
// arithmetic). It holds no engine's rules.
//
// Read first:
//   - engine.go: Family and Worker, method by method (admit, form a pass,
//     price it through perf, finish it, preempt inside a pass, hand off KV in
//     P/D), and Request, the part of a request the replay fills and reads.
//
// Each engine is a package of its own beside this one (core/engine/vllm: vLLM
// v1's scheduler and KV block manager), whose rules, with the upstream source
// of each, are its own; core/engines maps engine.backend to the family, and
// the replay never imports an engine package (core/layers_test.go). A new
// engine is a package that implements Family and Worker, its row in
// core/engines and its value of engine.backend (docs/design.md, "The engine
// family").
package engine
