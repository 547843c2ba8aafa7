package hardware

import "fmt"

// Physical bounds of a system spec's values. The upper bounds are about a
// hundred times today's data-centre GPUs (H100 SXM: 3.35e12 B/s of HBM,
// 989e12 bf16 FLOP/s, 80 GiB, 450e9 B/s NVLink; B300: 288 GB); the lower ones
// only keep every rate at least 1 per second, so that a pass time stays
// finite (a bandwidth of 1e-300 B/s gave an infinite pass time and a panic;
// a merely slow one now ends at the virtual clock's horizon with engine.perf
// named). Outside them the file is refused with the field named.
const (
	MaxBandwidth   = 1e15    // B/s, HBM and links
	MaxFlops       = 1e18    // FLOP/s
	MaxMemCapacity = 1 << 44 // bytes, 16 TiB
	MaxGPUsPerNode = 1024
	MaxMemLatency  = 1.0 // s, gpu.mem_empirical_constant_latency
)

// Validate checks s against the physical bounds above; the error names the
// system file's field (where: the file, for the message).
func (s *System) Validate(where string) error {
	type rng struct {
		field    string
		v        float64
		min, max float64
		zeroOK   bool
	}
	mem := float64(s.MemCapacity)
	for _, r := range []rng{
		{"gpu.mem_bw", s.MemBW, 1, MaxBandwidth, false},
		{"gpu.bfloat16_tc_flops", s.BF16Flops, 1, MaxFlops, false},
		{"gpu.fp8_tc_flops", s.FP8Flops, 1, MaxFlops, true},
		{"gpu.fp4_tc_flops", s.FP4Flops, 1, MaxFlops, true},
		{"gpu.mem_capacity", mem, 1, MaxMemCapacity, false},
		{"gpu.mem_empirical_constant_latency", s.MemConstLatency, 0, MaxMemLatency, true},
		{"node.intra_node_bw", s.IntraNodeBW, 1, MaxBandwidth, false},
		{"node.inter_node_bw", s.InterNodeBW, 1, MaxBandwidth, true},
		{"node.num_gpus_per_node", float64(s.GPUsPerNode), 1, MaxGPUsPerNode, false},
		{"misc.other_mem", float64(s.OtherMem), 0, mem, true},
	} {
		if r.zeroOK && r.v == 0 {
			continue
		}
		if !(r.v >= r.min && r.v <= r.max) {
			return fmt.Errorf("hardware: %s: field %s = %g, out of range [%g, %g] (up to about a hundred times today's GPUs)",
				where, r.field, r.v, r.min, r.max)
		}
	}
	for tp, m := range s.NCCLMem {
		if tp > MaxGPUsPerNode || m > s.MemCapacity {
			return fmt.Errorf("hardware: %s: field misc.nccl_mem[%d] = %d, want TP ≤ %d and bytes ≤ gpu.mem_capacity", where, tp, m, MaxGPUsPerNode)
		}
	}
	return nil
}
