// Package hardware describes GPU systems, per GPU: HBM size and bandwidth,
// peak tensor-core FLOP/s by dtype, NVLink and network bandwidth, GPUs per
// node, the measured TP
// all-reduce, and the memory that vLLM cannot give to the KV cache (NCCL
// buffers, a fixed reserve).
//
// # Reading order
//
//  1. system.go: the System type, Flops (peak by weight dtype),
//     AllReduceFor (the measured all-reduce for a GPU count), Nodes and
//     CollectiveBW (a ring over GPUs on several nodes runs at the network).
//  2. builtin.go: h100_sxm, h200_sxm, b200_sxm, b300_sxm, gb200 (GB200 NVL72, 4
//     GPUs per node), a100_sxm, l40s and rtx_pro_6000_server (RTX PRO 6000
//     Blackwell Server Edition), with values read
//     from ../shared/data/aic/systems/<name>.yaml (ai-dynamo/aiconfigurator,
//     aic-core/src/aiconfigurator_core/systems/), and each system's
//     all-reduce fitted to its custom_allreduce_perf table
//     (scripts/fit_allreduce.py).
//  3. yaml.go: ReadYAML (the AIConfigurator system schema) and Lookup
//     (a built-in name, else a YAML path); bounds.go: Validate, the
//     physical bounds of every field, whose errors name the field, its
//     unit and what a value written in another unit (GB/s, GiB, TFLOP/s)
//     would be.
//
// # Units
//
// Bandwidths in bytes per second (B/s, one direction, per GPU), capacities
// and reserves in bytes, compute in FLOP/s (dense tensor-core peak),
// latencies in seconds. Nothing here applies an efficiency: the perf models
// in core/perf do.
package hardware
