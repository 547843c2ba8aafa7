package hardware

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/model"
)

// System is the spec of one GPU type and its node, per GPU.
type System struct {
	// Name is the system name, for example "h100_sxm".
	Name string
	// MemBW is the HBM bandwidth, B/s (gpu.mem_bw).
	MemBW float64
	// MemCapacity is the HBM size, bytes (gpu.mem_capacity).
	MemCapacity int64
	// BF16Flops is the dense bf16 tensor-core peak, FLOP/s
	// (gpu.bfloat16_tc_flops).
	BF16Flops float64
	// FP8Flops is the dense fp8 tensor-core peak, FLOP/s (gpu.fp8_tc_flops);
	// 0 on GPUs without fp8 tensor cores (A100).
	FP8Flops float64
	// FP4Flops is the dense fp4 tensor-core peak, FLOP/s (gpu.fp4_tc_flops);
	// 0 on GPUs without fp4 tensor cores (before Blackwell).
	FP4Flops float64
	// MemBWScaling is the empirical fraction of MemBW that small memory-bound
	// ops reach (gpu.mem_bw_empirical_scaling_factor), dimensionless.
	MemBWScaling float64
	// MemConstLatency is the empirical fixed latency of a memory-bound op,
	// seconds (gpu.mem_empirical_constant_latency).
	MemConstLatency float64
	// GPUsPerNode is node.num_gpus_per_node.
	GPUsPerNode int
	// IntraNodeBW is the NVLink bandwidth per GPU, one direction, B/s
	// (node.intra_node_bw).
	IntraNodeBW float64
	// InterNodeBW is the network bandwidth per GPU between nodes, one
	// direction, B/s (node.inter_node_bw: InfiniBand or RoCE NICs, one per
	// GPU; on GB200 NVL72 the rack's NVLink); 0 when the spec gives none.
	// Collectives whose GPUs span nodes run at it (CrossNodeBW).
	InterNodeBW float64
	// OtherMem is memory reserved outside weights, activations and KV cache
	// (CUDA context, allocator slack), bytes (misc.other_mem).
	OtherMem int64
	// NCCLMem is the NCCL buffer memory per GPU by TP degree, bytes
	// (misc.nccl_mem); keys are TP degrees (1, 2, 4, 8).
	NCCLMem map[int]int64
	// AllReduce is the measured TP all-reduce by GPU count (2, 4, 8): what
	// vLLM's custom all-reduce reaches on this system, which IntraNodeBW (a
	// link's nominal rate) does not say. nil when not measured (a YAML
	// system): the roofline then runs the ring at IntraNodeBW.
	AllReduce map[int]AllReduceLink
	// SMVersion is the GPU's compute capability as major·10 + minor
	// (gpu.sm_version: 90 for Hopper, 100 for B200); 0 when the spec gives
	// none. Kernel choices that depend on the architecture read it (vLLM's
	// DeepGEMM experts, Hopper only: perf/aic deepgemm_moe.go).
	SMVersion int
	// NCCLVersion is the NCCL release the system's collectives were measured
	// with (misc.nccl_version, for example "2.26.2"): the aic source reads
	// comm/nccl/<version>/nccl_perf.parquet, the nearest when missing; ""
	// means the newest measured.
	NCCLVersion string
}

// AllReduceLink is one measured all-reduce: T(bytes) = LatencyS +
// 2(t−1)/t · bytes / BusBW on t GPUs (nccl-tests' bus bandwidth), fitted to
// a system's custom_allreduce_perf table (scripts/fit_allreduce.py: CUDA-graph
// rows of 1,024 to 16,777,216 bf16 elements, least relative error).
type AllReduceLink struct {
	// LatencyS is the fixed cost of one all-reduce, seconds.
	LatencyS float64
	// BusBW is the bus bandwidth, B/s.
	BusBW float64
}

// AllReduceFor is the measured all-reduce for t GPUs: the entry for t, else
// that of the largest measured count below t (a stand-in that is, if
// anything, fast: more GPUs never all-reduce faster over the same links);
// false when none is measured at or below t.
func (s *System) AllReduceFor(t int) (AllReduceLink, bool) {
	if l, ok := s.AllReduce[t]; ok {
		return l, true
	}
	best, l := 0, AllReduceLink{}
	for k, v := range s.AllReduce {
		if k <= t && k > best {
			best, l = k, v
		}
	}
	return l, best > 0
}

// Flops is the dense tensor-core peak, FLOP/s, for GEMMs with weights of
// dtype d: FP8Flops for fp8 and fp8_block, FP4Flops for nvfp4, BF16Flops
// otherwise. A GPU without tensor cores of the format (FP8Flops or FP4Flops
// = 0, such as A100 for fp8 or H100 for fp4) runs the checkpoint weight-only
// with bf16 math (vLLM's Marlin fp8 and fp4 kernels), so Flops returns
// BF16Flops there. Never an error.
func (s *System) Flops(d model.Dtype) float64 {
	switch {
	case (d == model.FP8 || d == model.FP8Block) && s.FP8Flops > 0:
		return s.FP8Flops
	case d == model.NVFP4 && s.FP4Flops > 0:
		return s.FP4Flops
	}
	return s.BF16Flops
}

// NCCLMemFor is the NCCL buffer memory for TP degree tp, bytes: the entry of
// NCCLMem for tp, else the entry of the largest listed degree below tp
// (tp = 3 uses the tp = 2 entry), else 0.
func (s *System) NCCLMemFor(tp int) int64 {
	if v, ok := s.NCCLMem[tp]; ok {
		return v
	}
	best, v := 0, int64(0)
	for k, m := range s.NCCLMem {
		if k <= tp && k > best {
			best, v = k, m
		}
	}
	return v
}

// Nodes is the number of nodes gpus GPUs occupy, ⌈gpus / GPUsPerNode⌉ (1
// when GPUsPerNode is not set).
func (s *System) Nodes(gpus int) int {
	if s.GPUsPerNode <= 0 || gpus <= s.GPUsPerNode {
		return 1
	}
	return (gpus + s.GPUsPerNode - 1) / s.GPUsPerNode
}

// TPSpanError says why a tensor-parallel group of tp GPUs that spans nodes
// cannot be priced (nil when it fits one node or can be): the perf sources
// price its all-reduce by NCCL's cost model across a network
// (core/perf/ncclnet.go) or hierarchically (core/perf/aic/allreduce_nodes.go,
// core/perf/roofline_nodes.go), which needs every node to hold the same share
// of the group and a network bandwidth between the nodes.
func (s *System) TPSpanError(tp int) error {
	if s.Nodes(tp) == 1 {
		return nil
	}
	if tp%s.GPUsPerNode != 0 {
		return fmt.Errorf("TP %d spans nodes of %d GPUs (%s) without filling them: a TP group across nodes is simulated at a multiple of node.num_gpus_per_node", tp, s.GPUsPerNode, s.Name)
	}
	if !(s.InterNodeBW > 0) {
		return fmt.Errorf("TP %d spans %d nodes of system %s, which gives no network bandwidth (node.inter_node_bw) to price its all-reduce", tp, s.Nodes(tp), s.Name)
	}
	return nil
}

// CollectiveBW is the per-GPU bandwidth, B/s, of a ring collective over gpus
// GPUs placed on consecutive nodes: IntraNodeBW within one node, else the
// slowest link of the ring, min(IntraNodeBW, InterNodeBW) (IntraNodeBW when
// the spec gives no InterNodeBW).
func (s *System) CollectiveBW(gpus int) float64 {
	if s.Nodes(gpus) == 1 || !(s.InterNodeBW > 0) {
		return s.IntraNodeBW
	}
	return min(s.IntraNodeBW, s.InterNodeBW)
}
