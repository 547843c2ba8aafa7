package aic

import (
	"fmt"
	"math"
	"sort"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/perf"
)

// Fallback op names: the keys of Model.Fallbacks and of the report's
// perf_metadata.fallbacks.
const (
	OpGEMM                = "gemm"
	OpContextAttention    = "context_attention"
	OpGenerationAttention = "generation_attention"
	OpAllReduce           = "allreduce"
	OpMoE                 = "moe"
	OpNCCL                = "nccl"
	OpAll2All             = "all2all"
	OpMHC                 = "mhc"
)

// fallback records that op is priced, for count op instances of every pass
// (the layers it prices, or 1 for an op that runs once a pass), by a
// stand-in instead of a measured table point: the nearest measured shape,
// dtype or GPU count scaled by the roofline ratio, or the roofline itself.
// The note says which (Notes; the report's perf_metadata.notes) and the
// count adds up in Fallbacks (perf_metadata.fallbacks), so that no run is
// dropped for a missing table point and none hides that it used one.
func (m *Model) fallback(op string, count int, note string) {
	if m.fallbacks == nil {
		m.fallbacks = map[string]int{}
	}
	m.fallbacks[op] += count
	m.notes = append(m.notes, note)
}

// Fallbacks returns, per op, the op instances of a pass priced by a stand-in
// (a copy; empty when every lookup reads its own table point).
func (m *Model) Fallbacks() map[string]int {
	out := make(map[string]int, len(m.fallbacks))
	for k, v := range m.fallbacks {
		out[k] = v
	}
	return out
}

// fallbackOps lists the ops of Fallbacks, sorted (for messages).
func fallbackOps(f map[string]int) []string {
	ops := make([]string, 0, len(f))
	for k := range f {
		ops = append(ops, k)
	}
	sort.Strings(ops)
	return ops
}

// empiricalMemory is the system's model of a memory-bound kernel (the
// AIConfigurator system file's): bytes / (W·s) + c, W the HBM bandwidth,
// s gpu.mem_bw_empirical_scaling_factor (1 when absent), c
// gpu.mem_empirical_constant_latency (s). Stand-ins priced off the roofline
// use it for their memory side, so that they are no faster than the
// system's own small kernels.
type empiricalMemory struct{ bw, latencyS float64 }

func newEmpiricalMemory(sys *hardware.System) empiricalMemory {
	s := sys.MemBWScaling
	if !(s > 0) {
		s = 1
	}
	return empiricalMemory{bw: sys.MemBW * s, latencyS: sys.MemConstLatency}
}

// rooflineAttnGrid is the stand-in of an attention table that has no rows at
// all for the model (no head_dim, KV dtype or window near it, or no table):
// every cell is the grid's roofline with the system's memory model,
//
//	T = max(F / P, B / (W·s)) + c
//
// (attnGrid.roofline's F and B), on a batch × length grid wide enough for
// any pass (1 … 2^20 on both axes, powers of two), so that Seconds
// interpolates it like a measured grid.
func rooflineAttnGrid(sel attnSelect, em empiricalMemory) *attnGrid {
	g := &attnGrid{kind: sel.kind, sqrtLen: sel.kind == contextKind,
		heads: float64(sel.heads), kvHeads: float64(sel.kvHeads), headDim: float64(sel.headDim),
		kvBytes: sel.kvBytes, flops: sel.flops, memBW: sel.memBW, scale: 1}
	for v := 1.0; v <= 1<<20; v *= 2 {
		g.batches = append(g.batches, v)
		g.lengths = append(g.lengths, v)
	}
	emp := *g
	emp.memBW = em.bw
	g.sec = make([][]float64, len(g.batches))
	for i, b := range g.batches {
		g.sec[i] = make([]float64, len(g.lengths))
		for j, y := range g.lengths {
			g.sec[i][j] = emp.roofline(b, y) + em.latencyS
		}
	}
	return g
}

// nearestHeadDim is the head_dim, among the rows of sel's KV dtype and window,
// nearest to sel.headDim in log2 (ties: the larger, whose kernels tile the
// same way up to the model's size); ok is false when there is none.
func nearestHeadDim(rows []attnRow, sel attnSelect) (int64, bool) {
	best, bestD, ok := int64(0), math.Inf(1), false
	for i := range rows {
		r := &rows[i]
		if r.KVDtype != sel.kvDtype || r.Window != sel.window || r.HeadDim <= 0 {
			continue
		}
		d := math.Abs(math.Log2(float64(r.HeadDim) / float64(sel.headDim)))
		if d < bestD || (d == bestD && r.HeadDim > best) {
			best, bestD, ok = r.HeadDim, d, true
		}
	}
	return best, ok
}

// attentionGrid builds the model's grid of one attention table (rows may be
// nil: no table), falling back step by step and saying so:
//  1. the model's head_dim, KV dtype and window (sel), at the nearest
//     measured (heads, KV heads) pair per GPU, scaled (newAttnGrid; a
//     fallback when the pair is not the model's);
//  2. a bf16 KV cache's rows for an fp8 cache the table did not measure
//     (the same kernel reading twice the bytes) — a fallback;
//  3. the nearest measured head_dim of the same KV dtype (then bf16) and
//     window, its times scaled by d/d' (context attention is compute
//     bound, its FLOPs ∝ d; a decode kernel's KV-bandwidth part ∝ d:
//     attnGrid.scaleHeads) — a fallback;
//  4. the roofline (rooflineAttnGrid) — a fallback.
//
// layers is the count of the layers the grid prices (Fallbacks).
func (m *Model) attentionGrid(rows []attnRow, sel attnSelect, table, path string, layers int, em empiricalMemory) *attnGrid {
	want := sel.kvDtype
	if len(rows) > 0 {
		g, err := newAttnGrid(rows, sel)
		if err != nil && want != "bfloat16" {
			bf := sel
			bf.kvDtype = "bfloat16"
			if g, err = newAttnGrid(rows, bf); err == nil {
				m.fallback(opOfAttnKind(sel.kind), layers, fmt.Sprintf("%s has no %s KV cache rows; bfloat16 used", table, want))
			}
		}
		if err == nil {
			if g.measuredHeads != sel.heads || g.measuredKVHeads != sel.kvHeads {
				how := "scaled by %.3g"
				if sel.kind == generationKind {
					how = "latency kept, KV-bandwidth part scaled by %.3g"
				}
				m.fallback(opOfAttnKind(sel.kind), layers, fmt.Sprintf("%s: %d heads / %d KV heads per GPU not measured; %d / %d, "+how,
					table, sel.heads, sel.kvHeads, g.measuredHeads, g.measuredKVHeads, g.scale))
			}
			return g
		}
		for _, kv := range []string{want, "bfloat16"} {
			s := sel
			s.kvDtype = kv
			d, ok := nearestHeadDim(rows, s)
			if !ok {
				continue
			}
			s.dataHeadDim = d
			if g, err := newAttnGrid(rows, s); err == nil {
				m.fallback(opOfAttnKind(sel.kind), layers, fmt.Sprintf(
					"%s has no rows with head_dim %d, kv_cache_dtype %s, window %d; head_dim %d (%s) scaled by %d/%d",
					table, sel.headDim, want, sel.window, d, kv, sel.headDim, d))
				return g
			}
		}
	}
	where := table + " is missing"
	if len(rows) > 0 {
		where = fmt.Sprintf("%s (%s) has no rows for kv_cache_dtype %s or bfloat16 at window %d", table, path, want, sel.window)
	}
	m.fallback(opOfAttnKind(sel.kind), layers, where+"; priced by the roofline with the system's memory model")
	return rooflineAttnGrid(sel, em)
}

func opOfAttnKind(k attnKind) string {
	if k == contextKind {
		return OpContextAttention
	}
	return OpGenerationAttention
}

// linearCollective is a ring collective priced from a fixed latency and a
// bus bandwidth, T(e) = latencyS + phases·(t−1)/t · 2·e / busBW for e bf16
// elements on t GPUs, as an allReduceCurve of two points (1 and 2^40
// elements: linear interpolation of a linear cost is the cost).
func linearCollective(gpus int64, phases, latencyS, busBW float64) *allReduceCurve {
	c := &allReduceCurve{gpus: gpus, bw: busBW, phases: phases, sizes: []float64{1, 1 << 40}}
	for _, e := range c.sizes {
		c.sec = append(c.sec, latencyS+c.roofline(e))
	}
	return c
}

// linearAllReduce stands in for a missing custom all-reduce table: the
// system's measured all-reduce fit (hardware.System.AllReduceFor: latency
// and bus bandwidth), else the link's nominal rate with vLLM's custom
// all-reduce latency (perf.CustomAllReduceLatencyUs, as the roofline
// source). Its note says which.
func linearAllReduce(sys *hardware.System, tp int64) *allReduceCurve {
	if l, ok := sys.AllReduceFor(int(tp)); ok {
		c := linearCollective(tp, 2, l.LatencyS, l.BusBW)
		c.note = fmt.Sprintf("the system's measured all-reduce fit (%.1f µs + bus bandwidth %.0f GB/s)", l.LatencyS*1e6, l.BusBW/1e9)
		return c
	}
	c := linearCollective(tp, 2, perf.CustomAllReduceLatencyUs*1e-6, sys.IntraNodeBW)
	c.note = fmt.Sprintf("a ring at node.intra_node_bw (%.0f GB/s) plus %.0f µs", sys.IntraNodeBW/1e9, perf.CustomAllReduceLatencyUs)
	return c
}
