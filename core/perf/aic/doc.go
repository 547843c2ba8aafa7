// Package aic is the measured perf source ("aic-v1"): it prices an engine
// pass from the AIConfigurator-format kernel tables (parquet, zstd) of a
// system, backend and version — GEMM, context attention, generation
// attention and the CUDA-graph custom all-reduce; for mixture-of-experts
// models the fused-MoE table and the NCCL collectives — and implements
// perf.Model (docs/design.md, "Perf models"; docs/moe.md).
//
// # Reading order
//
//  1. model.go: Model, New and PassTime — the pass formula with units, what
//     is tabulated per (model, TP) and what is looked up per pass.
//  2. database.go and version.go: where a table is read from. The version
//     asked for, else the nearest (ties to the newer); reuse.yaml redirects
//     win over a file in the same folder; knownBad tables (h200_sxm 0.19.0
//     context attention) count as missing. Source records the choice and
//     Model.Metadata puts it in the report. fp8 / fp8_block weights read
//     their GEMMs from the nearest version whose low-precision rows are
//     plausible (faster than its bf16 rows on compute-bound shapes,
//     gemm.go MaxLowPrecisionRatio; model.go lowPrecisionGrid): vLLM 0.14.0
//     fails on h100_sxm and h200_sxm, so 0.12.0 requests read fp8 from the
//     next nearest version (a "gemm_perf (fp8)" source says which). nvfp4
//     weights read the nvfp4 rows (Blackwell tables) against the fp4 peak;
//     a table without them (Hopper) prices bf16 GEMMs, noted.
//  3. tables.go: the parquet rows, read once per process and file version
//     (tableCache, keyed by path, size and modification time: a replaced or
//     repaired file is read again; the package's only shared state, immutable
//     once loaded), duplicates dropped keeping the first row; a corrupt file
//     is an error naming it, never a panic.
//  4. gemm.go, attention.go, allreduce.go: the lookups. GEMM: linear in m
//     at a measured (n, k) site, the bilinear log2(n), log2(k) blend of the
//     neighbouring sites' efficiencies elsewhere. Attention: a batch ×
//     length grid for the model's heads per GPU (the nearest measured head
//     pair scaled when missing), √latency along the length for context
//     attention, holes where the tables stop filled by efficiency.
//     All-reduce: linear in message size, each measured size capped by
//     the time of any larger size (padEnvelope, as for a GEMM site).
//  5. interp.go: bracket/lerp and keepEfficiency, the one extrapolation
//     rule: outside the measured range keep the nearest point's
//     measured/roofline ratio and scale the query's roofline; never return
//     less than the roofline.
//  6. hybrid.go, moe.go, nccl.go: mixture-of-experts and mixed-attention
//     models. The routed experts from moe_perf's curve of the model's
//     shape, dtype, layout and routing (Options.MoERouting: balanced
//     corrected to uniform routing, or a power law as measured, auto by
//     architecture, MoERoutingFor; moeCurve.Seconds) — a version whose low-precision rows are
//     implausible is skipped, a shape no version measured borrows the
//     nearest shape's curve scaled by the roofline ratio; the data-parallel
//     all-gather and reduce-scatter from nccl_perf; sliding-window layers
//     from the attention tables' window_size rows; GroupPassTime for a
//     worker's lockstep data-parallel ranks. deepgemm_moe.go: vLLM
//     0.11.1–0.12's padded DeepGEMM experts on Hopper (every block of the
//     worst-case buffer computed), from the block-fp8 GEMM grid instead.
//  7. mla.go: MLA layers' attention cores from the MLA module tables (the
//     module's own projections taken off), the kernel tables or the roofline;
//     all2all.go: DeepEP's dispatch and combine tables for the point-to-point
//     all2all backends; shared_overlap.go: shared experts hidden under the
//     routed ones in small passes (vLLM's second stream); gdn.go: the
//     Gated DeltaNet kernels of linear-attention layers from gdn_perf
//     (the conv and chunked-rule rows by batch × seq_len, the conv-update
//     and recurrent-rule rows by batch; docs/hybrid.md).
//  8. fallback.go: what stands in for a missing table point (the nearest
//     measured shape, dtype or GPU count scaled, else the roofline with the
//     system's memory model), op by op, counted in Fallbacks
//     (perf_metadata.fallbacks) and said in Notes: no run is dropped for a
//     table point it lacks.
//
// # Contracts
//
//   - PassTime returns ns ≥ 1, does not allocate, and costs two attention
//     lookups and a few array reads (BenchmarkAICPassTime ≈ 0.15 µs).
//   - A bigger pass is never cheaper: the tabulated token costs and the
//     attention grids are non-decreasing (TestParityMonotone).
//   - A GEMM on a measured row returns that row's time
//     (TestGEMMOnATableRowReturnsThatRow); the sanity values of docs/design.md
//     hold (TestSanityValues).
//   - Pass times are pinned in tests/goldens/perf_parity.json
//     (core/perf/parity); a formula change bumps Name or re-pins with a
//     stated reason.
//
// # Units
//
// Tables are in ms; lookups work in seconds; PassTime and Breakdown in ns.
// Message sizes are bf16 elements, memory in bytes, rates in FLOP/s and B/s.
package aic
