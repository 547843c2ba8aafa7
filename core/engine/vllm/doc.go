// Package vllm is the vLLM v1 engine family (engine.Family): one serving
// worker whose scheduler forms passes (continuous batching with chunked
// prefill) over a KV block manager with prefix caching, LRU eviction and
// preemption by recompute. The replay drives it through engine.Worker alone.
//
// Read first:
//   - family.go: the family (requests, workers) and the engine.Worker methods
//     the moved code did not have (Counters, the cruising calls).
//   - worker.go: Worker, the two calls the replay makes (Add at arrival, then
//     StartPass / FinishPass around each pass) and what a pass emits. A P/D
//     decode worker takes its requests by Handoff (reserving their KV blocks,
//     or waiting for them in order), ReserveWaiting after each pass, and
//     KVArrived once the transfer is done: it holds every handoff placed on
//     it, so its Outstanding is the whole of its load.
//   - scheduler.go: how a pass is formed at its start (docs/design.md, "The vLLM engine"): running
//     requests first, then FCFS admission that stops at the first request that
//     does not fit; preemption of the newest running request.
//   - kv.go: the block manager: refcounted blocks, the prefix cache (prefix
//     groups of up to 32 blocks, found by group key in blocktable.go, each
//     block checked by its own hash; a request's private blocks, found only
//     by itself after a preemption) and the queue of unreferenced blocks in
//     release order (vLLM's free block queue). docs/kv-cache.md states the
//     rules and the vLLM source of each.
//
// Units: time in integer nanoseconds of the virtual clock; lengths in tokens;
// capacity in KV blocks of BlockSize tokens. The pass duration comes from a
// perf.Model. The engine knows nothing of clients, traces or other workers.
//
// Token accounting follows vLLM v1: a request has Prompt+generated tokens; each
// pass computes some of the tokens not yet in the KV cache, and the pass that
// brings the cache up to all of them samples one new token. A decode is the case
// of exactly one new token after the prompt is done. A preempted request
// releases its blocks (tail first) and, admitted again, computes as a prefill
// whatever of its prompt and generated tokens it does not find cached.
package vllm
