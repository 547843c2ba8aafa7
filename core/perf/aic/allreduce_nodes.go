package aic

import (
	"fmt"
	"strings"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/perf"
)

// collective prices a collective of e bf16 elements, seconds: an
// allReduceCurve (one NVLink domain), a netCollective (across nodes) or a
// multiNodeAllReduce (nodes of one NVLink domain).
type collective interface {
	Seconds(e float64) float64
}

// netCollective is an NCCL collective whose ranks span nodes, priced by
// NCCL's own cost model (perf.NCCLNet): no measured table covers the
// network (nccl_perf measures 2, 4 and 8 GPUs of one node).
type netCollective struct {
	net perf.NCCLNet
	op  perf.NCCLColl
}

// sglangBackend is SGLang's folder of tables; SGLang launches with
// NCCL_NVLS_ENABLE=0 unless --enable-nccl-nvls
// (python/sglang/srt/entrypoints/engine.py, _set_envs_and_config).
const sglangBackend = "sglang"

// netNCCL is NCCL's cost model of a collective over ranks GPUs of a worker
// of gpus GPUs (perf.NewNCCLNet), without the NVLS tree when the engine
// turns NVLS off; ok false when they do not cross a network.
func (m *Model) netNCCL(sys *hardware.System, ranks, gpus int) (perf.NCCLNet, bool) {
	net, ok := perf.NewNCCLNet(sys, ranks, gpus)
	if m.noNVLS {
		net.NVLS = false
	}
	return net, ok
}

// Seconds of the collective of e bf16 elements (the all-reduce's message,
// the all-gather's whole output).
func (c *netCollective) Seconds(e float64) float64 {
	t, _ := c.net.Seconds(c.op, 2*e)
	return t
}

// multiNodeAllReduce is the all-reduce of a TP group that spans nodes of g
// GPUs each, priced hierarchically (the NCCL tables measure 2, 4 and 8 GPUs,
// one node): a reduce-scatter of the message within each node (NVLink), an
// all-reduce of each GPU's 1/g share with the GPUs of the same local rank on
// the other nodes (the network: one NIC per GPU, node.inter_node_bw), then an
// all-gather within each node. The serving engines' custom all-reduce
// kernels are single-node: vLLM's and SGLang's disable themselves when the
// group spans nodes (vllm/distributed/device_communicators/custom_all_reduce.py,
// sglang/srt/distributed/device_communicators/custom_all_reduce.py) and
// TensorRT-LLM's strategy selection falls back to NCCL for ranks without
// NVLink between them (cpp/tensorrt_llm/thop/allreduceOp.cpp), so the node's phases are NCCL's
// measured reduce-scatter and all-gather over g GPUs (nccl_perf).
type multiNodeAllReduce struct {
	g, nodes        int64
	scatter, gather *allReduceCurve // within a node, g GPUs, the whole message
	inter           *allReduceCurve // across nodes, one GPU each, its 1/g share
}

// Seconds of an all-reduce of e elements (0 for none).
func (c *multiNodeAllReduce) Seconds(e float64) float64 {
	if e <= 0 {
		return 0
	}
	return c.scatter.Seconds(e) + c.inter.Seconds(e/float64(c.g)) + c.gather.Seconds(e)
}

// newMultiNodeAllReduce prices the all-reduce of tp GPUs over tp/g nodes of
// g = sys.GPUsPerNode from the NCCL rows (nil: no table): the node's
// reduce-scatter and all-gather as measured over g GPUs, or a ring at
// node.intra_node_bw (ncclFallback) where not measured; the network's
// all-reduce a ring at node.inter_node_bw whose latency is the measured
// all-reduce's smallest message over the nearest GPU count (ncclFallback: the
// tables hold no network latency, so NVLink's stands in). notes says what was
// not measured. Errors: hardware.System.TPSpanError.
func newMultiNodeAllReduce(rows []ncclRow, sys *hardware.System, tp int64) (c *multiNodeAllReduce, notes []string, err error) {
	if err := sys.TPSpanError(int(tp)); err != nil {
		return nil, nil, err
	}
	g := int64(sys.GPUsPerNode)
	c = &multiNodeAllReduce{g: g, nodes: tp / g}
	for _, p := range []struct {
		op  string
		dst **allReduceCurve
	}{{"reduce_scatter", &c.scatter}, {"all_gather", &c.gather}} {
		curve, err := newNCCLCurve(rows, p.op, g, sys.IntraNodeBW)
		if err != nil {
			curve = ncclFallback(rows, p.op, g, sys.IntraNodeBW)
			notes = append(notes, fmt.Sprintf("%s over %d GPUs not measured: a ring at %.0f GB/s plus %.1f µs",
				p.op, g, sys.IntraNodeBW/1e9, curve.sec[0]*1e6))
		}
		*p.dst = curve
	}
	c.inter = ncclFallback(rows, "all_reduce", c.nodes, sys.InterNodeBW)
	notes = append(notes, fmt.Sprintf(
		"TP %d spans %d nodes: the all-reduce is the node's NCCL reduce-scatter and all-gather over %d GPUs around a ring all-reduce of a 1/%d share across the nodes at node.inter_node_bw (%.0f GB/s) plus %.1f µs",
		tp, c.nodes, g, g, sys.InterNodeBW/1e9, c.inter.sec[0]*1e6))
	return c, notes, nil
}

// nodeAllReduce sets the all-reduce of a TP group within one node: the
// backend's measured custom all-reduce (custom_allreduce_perf), else the
// system's measured fit or a ring at node.intra_node_bw (linearAllReduce).
func (m *Model) nodeAllReduce(sys *hardware.System, tp int64, find func(string) (string, error)) error {
	p, err := find(TableAllReduce)
	var rows []allReduceRow
	if err == nil {
		if rows, err = loadAllReduce(p); err != nil {
			return err
		}
	}
	var c *allReduceCurve
	if rows == nil {
		c = linearAllReduce(sys, tp)
		m.fallback(OpAllReduce, int(m.numAR), fmt.Sprintf("%s is missing; the all-reduce priced as %s", TableAllReduce, c.note))
		c.note = ""
	} else if c, err = newAllReduceCurve(rows, tp, sys.IntraNodeBW); err != nil {
		return fmt.Errorf("aic: %s: %w", p, err)
	}
	if c.note != "" {
		m.fallback(OpAllReduce, int(m.numAR), c.note)
	}
	m.allReduce = c
	if rows != nil && m.cgTop > 0 {
		eager, err := loadAllReduceEager(p)
		if err != nil {
			return err
		}
		if len(eager) > 0 {
			if m.allReduceEager, err = newAllReduceCurve(eager, tp, sys.IntraNodeBW); err != nil {
				return fmt.Errorf("aic: %s: %w", p, err)
			}
		}
	}
	return nil
}

// multiNodeAllReduce sets the all-reduce of a TP group over several nodes:
// NCCL's cost model across a network (netCollective; the serving engines
// run NCCL there, newMultiNodeAllReduce says why), else, for nodes of one
// NVLink domain, newMultiNodeAllReduce from the NCCL table of the system's
// NCCL version; the fallback entry says how it was priced.
func (m *Model) multiNodeAllReduce(sys *hardware.System, sysDir string, tp int64) error {
	if err := sys.TPSpanError(int(tp)); err != nil {
		return fmt.Errorf("aic: %w", err)
	}
	if net, ok := m.netNCCL(sys, int(tp), int(tp)); ok {
		m.allReduce = &netCollective{net: net, op: perf.NCCLAllReduce}
		m.fallback(OpAllReduce, int(m.numAR), fmt.Sprintf("TP %d spans %d nodes: no table measures an all-reduce across nodes; priced by %s", tp, net.Nodes, net.Note()))
		return nil
	}
	src, err := locateNewestIfEmpty(sysDir, m.system, sys.NCCLVersion)
	var rows []ncclRow
	if err == nil {
		if rows, err = loadNCCL(src.Path); err != nil {
			return err
		}
		m.sources = append(m.sources, src)
	}
	c, notes, err := newMultiNodeAllReduce(rows, sys, tp)
	if err != nil {
		return fmt.Errorf("aic: %w", err)
	}
	if rows == nil {
		notes = append([]string{TableNCCL + " is missing"}, notes...)
	}
	m.allReduce = c
	m.fallback(OpAllReduce, int(m.numAR), strings.Join(notes, "; "))
	return nil
}
