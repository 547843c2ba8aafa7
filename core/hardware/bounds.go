package hardware

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Physical bounds of a system spec's values, in the units of the
// AIConfigurator system files: bytes per second, FLOP/s, bytes and seconds
// (ai-dynamo/aiconfigurator, src/aiconfigurator/sdk/perf_database.py,
// query_mem_op: mem_bytes / (gpu.mem_bw · gpu.mem_bw_empirical_scaling_factor)
// + gpu.mem_empirical_constant_latency, seconds; query_p2p: message_bytes /
// node.inter_node_bw; backends' set_memory_and_check_oom against
// gpu.mem_capacity, bytes).
//
// The upper bounds are about a hundred times today's data-centre GPUs (GB200:
// 8e12 B/s of HBM, 1e16 fp4 FLOP/s, 9e11 B/s NVLink; B300: 288 GB). The lower
// ones are a thousandth or less of the slowest or smallest shipped system
// (L40S: 8.64e11 B/s of GDDR, 3.2e10 B/s of PCIe, 45 GiB; A100: 3.12e14 bf16
// FLOP/s, 2.5e10 B/s a GPU between nodes) and far above what a value written
// in another unit reads as: 3350 (GB/s) is 3350 B/s, 80 (GiB) is 80 bytes,
// 989 (TFLOP/s) 989 FLOP/s, 3 (µs) 3 s. Outside them the file is refused with
// the field, its unit, and what the value would be if it was written in a
// common other unit (TestSystemBounds; every shipped system is inside them,
// TestEveryShippedSystemIsInsideTheBounds).
const (
	MinBandwidth   = 1e9     // B/s (1 GB/s), HBM and links
	MaxBandwidth   = 1e15    // B/s (1000 TB/s)
	MinFlops       = 1e12    // FLOP/s (1 TFLOP/s)
	MaxFlops       = 1e18    // FLOP/s (1 EFLOP/s)
	MinMemCapacity = 1 << 30 // bytes, 1 GiB
	MaxMemCapacity = 1 << 44 // bytes, 16 TiB
	MinReserve     = 1 << 20 // bytes, 1 MiB: misc.other_mem and misc.nccl_mem entries, when not 0
	MaxGPUsPerNode = 1024
	MaxMemLatency  = 1e-3 // s (1 ms), gpu.mem_empirical_constant_latency
)

// otherUnit is a unit a value may have been written in by mistake: factor
// converts it to the field's unit.
type otherUnit struct {
	name   string
	factor float64
}

// quantity is how a kind of field is bounded and explained.
type quantity struct {
	unit     string // the field's unit, as shown after the value ("B/s")
	in       string // "the field is in …"
	min, max float64
	minText  string // min in words ("1 GB/s")
	maxText  string
	integer  bool // the field takes whole numbers (bytes): hints give the digits only
	// typical bounds what a value converted from another unit must reach to be
	// offered as the likely meaning: the shipped systems' range, widened about
	// tenfold either way.
	typLo, typHi float64
	others       []otherUnit
}

var (
	hbmBW = quantity{unit: "B/s", in: "bytes per second", min: MinBandwidth, max: MaxBandwidth,
		minText: "1 GB/s", maxText: "1000 TB/s", typLo: 1e11, typHi: 1e14,
		others: []otherUnit{{"GB/s", 1e9}, {"TB/s", 1e12}, {"MB/s", 1e6}}}
	nvlinkBW = quantity{unit: "B/s", in: "bytes per second per GPU, one direction", min: MinBandwidth, max: MaxBandwidth,
		minText: "1 GB/s", maxText: "1000 TB/s", typLo: 1e9, typHi: 1e13,
		others: []otherUnit{{"GB/s", 1e9}, {"TB/s", 1e12}}}
	// NICs are quoted in Gbit/s (the files' "CX7 NDR 400Gb/s" is 5e10 B/s).
	networkBW = quantity{unit: "B/s", in: "bytes per second per GPU, one direction", min: MinBandwidth, max: MaxBandwidth,
		minText: "1 GB/s", maxText: "1000 TB/s", typLo: 1e9, typHi: 1e13,
		others: []otherUnit{{"GB/s", 1e9}, {"Gbit/s", 1e9 / 8}}}
	flops = quantity{unit: "FLOP/s", in: "FLOP per second (dense)", min: MinFlops, max: MaxFlops,
		minText: "1 TFLOP/s", maxText: "1 EFLOP/s", typLo: 1e13, typHi: 1e17,
		others: []otherUnit{{"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}, {"GFLOP/s", 1e9}}}
	capacity = quantity{unit: "bytes", in: "bytes", min: MinMemCapacity, max: MaxMemCapacity,
		minText: "1 GiB", maxText: "16 TiB", integer: true, typLo: 4 << 30, typHi: 4 << 40,
		others: []otherUnit{{"GiB", 1 << 30}, {"GB", 1e9}, {"MiB", 1 << 20}}}
	reserve = quantity{unit: "bytes", in: "bytes", min: MinReserve, max: MaxMemCapacity,
		minText: "1 MiB (or 0)", maxText: "16 TiB", integer: true, typLo: 1 << 20, typHi: 64 << 30,
		others: []otherUnit{{"GiB", 1 << 30}, {"GB", 1e9}, {"MiB", 1 << 20}}}
	latency = quantity{unit: "s", in: "seconds", min: 0, max: MaxMemLatency,
		minText: "0", maxText: "1 ms", typLo: 1e-7, typHi: 1e-4,
		others: []otherUnit{{"µs", 1e-6}, {"ms", 1e-3}, {"ns", 1e-9}}}
)

// check is nil when v lies in [q.min, q.max], else the error naming where
// (the file), the field, the value with its unit, the bound, the field's unit
// and — when v written in another unit lands among real systems — what that
// would be: "gpu.mem_bw: 3350 B/s is below 1 GB/s — the field is in bytes per
// second; 3350 GB/s is 3350000000000 (3.35e12)".
func (q quantity) check(where, field string, v float64) error {
	var side, bound string
	switch {
	case v < q.min:
		side, bound = "below", q.minText
	case v > q.max:
		side, bound = "above", q.maxText
	case v >= q.min && v <= q.max:
		return nil
	default: // NaN
		return fmt.Errorf("hardware: %s: %s: %g is not a number (the field is in %s)", where, field, v, q.in)
	}
	written := num(v)
	if q.integer { // bytes as digits, as the field takes them
		written = strconv.FormatFloat(v, 'f', 0, 64)
	}
	msg := fmt.Sprintf("hardware: %s: %s: %s %s is %s %s — the field is in %s", where, field, written, q.unit, side, bound, q.in)
	if side == "above" && (q.max == MaxBandwidth || q.max == MaxFlops) {
		msg += " (its bound is about a hundred times today's GPUs)"
	}
	var hints []string
	for _, u := range q.others {
		w := round15(v * u.factor)
		if !(w >= q.typLo && w <= q.typHi) {
			continue
		}
		if q.integer {
			w = float64(int64(w + 0.5))
			hints = append(hints, fmt.Sprintf("%s %s is %s", written, u.name, strconv.FormatFloat(w, 'f', -1, 64)))
		} else {
			hints = append(hints, fmt.Sprintf("%s %s is %s (%s)", num(v), u.name, strconv.FormatFloat(w, 'f', -1, 64), sci(w)))
		}
	}
	if len(hints) > 0 {
		msg += "; " + strings.Join(hints, ", ")
	}
	return fmt.Errorf("%s", msg)
}

// num is v as written: the shortest digits that read back to it.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// round15 is v to 15 significant digits: 0.003 · 1e-3 is 3e-6, not
// 3.0000000000000001e-06.
func round15(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
	return r
}

// sci is v in short scientific notation: 3.35e12, 3e-6.
func sci(v float64) string {
	s := strconv.FormatFloat(v, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	sign := ""
	if strings.HasPrefix(exp, "-") {
		sign = "-"
	}
	exp = strings.TrimLeft(strings.TrimLeft(exp, "+-"), "0")
	if exp == "" {
		exp = "0"
	}
	return mant + "e" + sign + exp
}

// Validate checks s against the physical bounds above; the error names the
// system file's field, its unit and, for a value that looks written in
// another unit, what it would be in this one (where: the file, for the
// message). Capacity is checked before misc.other_mem, which must fit in it,
// so that a capacity given in GiB is named as itself.
func (s *System) Validate(where string) error {
	for _, r := range []struct {
		field  string
		v      float64
		q      quantity
		zeroOK bool
	}{
		{"gpu.mem_bw", s.MemBW, hbmBW, false},
		{"gpu.bfloat16_tc_flops", s.BF16Flops, flops, false},
		{"gpu.fp8_tc_flops", s.FP8Flops, flops, true},
		{"gpu.fp4_tc_flops", s.FP4Flops, flops, true},
		{"gpu.mem_capacity", float64(s.MemCapacity), capacity, false},
		{"gpu.mem_empirical_constant_latency", s.MemConstLatency, latency, true},
		{"node.intra_node_bw", s.IntraNodeBW, nvlinkBW, false},
		{"node.inter_node_bw", s.InterNodeBW, networkBW, true},
		{"misc.other_mem", float64(s.OtherMem), reserve, true},
	} {
		if r.zeroOK && r.v == 0 {
			continue
		}
		if err := r.q.check(where, r.field, r.v); err != nil {
			return err
		}
	}
	if !(s.MemBWScaling > 0 && s.MemBWScaling <= 1) {
		msg := fmt.Sprintf("hardware: %s: gpu.mem_bw_empirical_scaling_factor: %g, want in (0, 1] (a fraction of gpu.mem_bw)", where, s.MemBWScaling)
		if s.MemBWScaling > 1 && s.MemBWScaling <= 100 {
			msg += fmt.Sprintf("; %s %% is %s", num(s.MemBWScaling), num(round15(s.MemBWScaling/100)))
		}
		return fmt.Errorf("%s", msg)
	}
	if s.GPUsPerNode < 1 || s.GPUsPerNode > MaxGPUsPerNode {
		return fmt.Errorf("hardware: %s: node.num_gpus_per_node: %d, want in [1, %d]", where, s.GPUsPerNode, MaxGPUsPerNode)
	}
	if s.OtherMem > s.MemCapacity {
		return fmt.Errorf("hardware: %s: misc.other_mem: %d bytes is more than gpu.mem_capacity (%d bytes)", where, s.OtherMem, s.MemCapacity)
	}
	tps := make([]int, 0, len(s.NCCLMem))
	for tp := range s.NCCLMem {
		tps = append(tps, tp)
	}
	sort.Ints(tps) // the first bad entry, the same in every run
	for _, tp := range tps {
		m := s.NCCLMem[tp]
		field := fmt.Sprintf("misc.nccl_mem[%d]", tp)
		if tp > MaxGPUsPerNode {
			return fmt.Errorf("hardware: %s: %s: TP %d, want ≤ %d", where, field, tp, MaxGPUsPerNode)
		}
		if m == 0 {
			continue
		}
		if err := reserve.check(where, field, float64(m)); err != nil {
			return err
		}
		if m > s.MemCapacity {
			return fmt.Errorf("hardware: %s: %s: %d bytes is more than gpu.mem_capacity (%d bytes)", where, field, m, s.MemCapacity)
		}
	}
	return nil
}
