// Package perf prices one engine pass: given the prefill chunks (new tokens
// and cached prefix) and the decodes (KV lengths) of a pass, it returns the
// pass duration in nanoseconds. It also derives the KV cache capacity of a
// worker from GPU memory.
//
// # Reading order
//
//  1. perf.go: Batch, Chunk and the Model interface (ns, at least 1, the
//     pass as formed at pass start). The engine consumes Model. Also the
//     engine step's CPU cost both sources charge (OverheadNs).
//  2. linear.go: Linear, base + per prompt token + per decoding request
//     ("linear"; the worked examples of docs/design.md use it).
//  3. roofline.go: Roofline ("roofline-v3"), a dense decoder priced op by op
//     as max(FLOPs / (peak · e_c), bytes / (HBM bandwidth · e_m)) plus a
//     fixed kernel latency per layer, its TP all-reduces at the system's
//     measured latency and bus bandwidth (hardware.System.AllReduce); the
//     formulas with units are on gemmSeconds, contextAttentionSeconds,
//     generationAttentionSeconds and the Roofline type. The parameters have
//     no defaults here: the spec's defaults (core/config/defaults.go) reach
//     the models through the replay.
//  4. memory.go: PlanMemory and KVCapacityBlocks, vLLM's KV budget
//     (utilization × HBM − weights − activations − NCCL − reserve);
//     PlanMemoryParallel adds a layout's weights, the fused-MoE workspace
//     and the sliding-window reservation.
//  5. moe.go and roofline_moe.go: mixture-of-experts and mixed-attention
//     models (Roofline.hy): ExpectedDistinctExperts (the experts n tokens
//     reach under uniform routing), the routed experts' roofline, sliding-
//     window and block-sparse attention, the data-parallel all-gather and
//     reduce-scatter, and GroupPassTime (the lockstep pass of a worker's
//     data-parallel ranks). docs/moe.md has the formulas.
//  6. roofline_mla.go and all2all.go: multi-head latent attention's core
//     (MLACore: the prefill up-projection and attention, the decode's
//     absorbed GEMMs and latent attention, DSA's kept keys and indexer) and
//     the point-to-point all2all backends' dispatch and combine (A2A), as
//     documented formulas both sources share; moe.go's
//     SharedExpertsStreamTokens, below which shared experts run beside the
//     routed ones.
//  7. hybridkv.go and roofline_linear.go: vLLM's layout of a hybrid
//     model's cache (HybridKV: the attention block that holds a state, the
//     KV cache groups, the state blocks a request holds) and the Gated
//     DeltaNet kernels' roofline (GDNCore); docs/hybrid.md.
//  8. aic/ (sub-package): the measured source ("aic-v1"), pass times from
//     the AIConfigurator kernel tables; parity/ pins both sources' pass
//     times (tests/goldens/perf_parity.json).
//
// Sources: docs/design.md ("Perf models", "The measured tables and the
// dense-decoder arithmetic", "The KV capacity").
//
// # Units
//
// Pass times are int64 ns (Model.PassTime); Breakdown reports float ns.
// Internally the roofline works in seconds, bytes, FLOPs, FLOP/s and B/s.
// Parameters carry their unit as a suffix (PassOverheadUs, BaseMs). Memory
// is in bytes, KV capacity in blocks of block_size tokens.
//
// # Performance
//
// PassTime is called millions of times per replay: NewRoofline precomputes
// every per-(model, system, TP) constant, memoises the terms fixed by a pass's
// token count (a few thousand distinct counts per replay), and PassTime does
// not allocate but to grow that memo, at most a dozen times per model
// (TestRooflinePassTimeDoesNotAllocate, BenchmarkRooflinePassTime).
package perf
