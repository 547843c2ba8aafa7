package perf

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/hardware"
)

// multiNodeAllReduce sets the roofline's all-reduce of a TP group of tp GPUs
// over n = tp/g nodes of g GPUs (hardware.System.GPUsPerNode), priced
// hierarchically as the aic source does (core/perf/aic/allreduce_nodes.go):
// a reduce-scatter and an all-gather of the x·h-element message within each
// node, together one all-reduce of g GPUs (2(g−1)/g of the 2·x·h bytes at
// the node's bus bandwidth: the system's measured all-reduce of g GPUs, else
// node.intra_node_bw, with its latency), and between them a ring all-reduce
// of each GPU's 1/g share over the n nodes (2(n−1)/n · 2·x·h/g bytes at
// node.inter_node_bw, one NIC per GPU) carrying one more kernel latency
// (netLatencyS). Errors: hardware.System.TPSpanError.
func (r *Roofline) multiNodeAllReduce(sys *hardware.System, tp int, h, netLatencyS float64) error {
	if err := sys.TPSpanError(tp); err != nil {
		return fmt.Errorf("perf: roofline: %w", err)
	}
	g := sys.GPUsPerNode
	n := tp / g
	lat, bw := netLatencyS, sys.IntraNodeBW
	if l, ok := sys.AllReduceFor(g); ok {
		lat, bw, r.arMeasured = l.LatencyS, l.BusBW, true
	} else {
		r.arMeasured = false
	}
	fg, fn, t := float64(g), float64(n), float64(tp)
	r.arNodes = n
	r.arFixedS = lat + netLatencyS
	r.arSPerToken = 2*(fg-1)/fg*h*2/bw + 2*(fn-1)/fn*h*2/fg/sys.InterNodeBW
	r.arBusBW = 2 * (t - 1) / t * h * 2 / r.arSPerToken // the whole's, as one ring would be
	return nil
}
