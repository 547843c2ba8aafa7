package perf

import (
	"fmt"
	"math"
	"strings"

	"github.com/aisimulate/aisimulate/core/hardware"
)

// NCCLVersionModelled is the NCCL release whose cost model NCCLNet follows:
// the latencies and bandwidth refinements of src/graph/tuning.cc (tags
// v2.27.3-1, the release h100_sxm's NCCL tables were measured with, and
// v2.30.7-1 hold the same ring and tree constants).
const NCCLVersionModelled = "2.27.3"

// NCCLColl is a collective NCCLNet prices.
type NCCLColl int

// The collectives NCCLNet prices.
const (
	NCCLAllReduce NCCLColl = iota
	NCCLAllGather
	NCCLReduceScatter
)

// String is NCCL's name of the collective (nccl_perf's op_name).
func (op NCCLColl) String() string {
	return [...]string{"all_reduce", "all_gather", "reduce_scatter"}[op]
}

// NCCL's protocols (tuning.cc's index order).
const (
	protoLL = iota
	protoLL128
	protoSimple
)

var protoNames = [3]string{"LL", "LL128", "Simple"}

// NCCL's tuning constants, µs (NCCL 2.27.3 src/graph/tuning.cc, baseLat and
// hwLat): the fixed latency of a ring or tree collective per protocol, and
// the latency of one step over NVLink within a node and over the network
// between nodes.
var (
	ncclBaseRing  = [3]float64{6.6, 14.0, 8.4}
	ncclBaseTree  = [3]float64{6.8, 14.0, 8.4}
	ncclNVLRing   = [3]float64{0.6, 1.9, 3.4}
	ncclNVLTree   = [3]float64{0.6, 1.25, 4.0}
	ncclNetRing   = [3]float64{2.7, 4.0, 14.0}
	ncclNetTree   = [3]float64{5.0, 8.5, 14.0}
	ncclNVLSTreeS = 25.0 // NVLSTree Simple over NVLink
	ncclNetNVLSTS = 14.0 // NVLSTree Simple over the network (2.30 raised it to 20.9)
)

// ncclTreeCorrection is NCCL's static factor on a tree all-reduce's bandwidth
// by log2(bytes/64) (tuning.cc treeCorrectionFactor, 64 B to 256 MB), per
// protocol.
var ncclTreeCorrection = [3][24]float64{
	{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
	{1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
	{.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}

// ncclArchCaps are tuning.cc's per-channel bandwidth caps of one GPU
// generation, GB/s, indexed by nodes (1, 2, ≥3): perChMaxRingLL128Bws,
// perChMaxTreeLL128Bws, perChMaxTreeBws; nvls says whether the GPU has
// NVLink SHARP (Hopper on).
type ncclArchCaps struct {
	name                       string
	ringLL128, treeLL128, tree [3]float64
	nvls                       bool
}

var (
	ncclAmpere    = ncclArchCaps{"Ampere", [3]float64{20, 20, 20}, [3]float64{20, 20, 20}, [3]float64{24.0, 23.6, 17.8}, false}
	ncclHopper    = ncclArchCaps{"Hopper", [3]float64{36.7, 36.7, 36.7}, [3]float64{36.7, 36.7, 29.0}, [3]float64{38.7, 41.4, 36.0}, true}
	ncclBlackwell = ncclArchCaps{"Blackwell", [3]float64{73.4, 73.4, 73.4}, [3]float64{73.4, 73.4, 58.0}, [3]float64{77.4, 82.8, 72.0}, true}
)

// ncclLLMaxBW is tuning.cc's cap on the LL protocol's bus bandwidth across
// nodes, GB/s, on x86 Intel hosts (llMaxBws row 0: 2 nodes, ≥3 nodes).
var ncclLLMaxBW = [2]float64{39.0, 20.4}

// ncclNetOverheadUs is getNetOverhead's network post overhead on an x86
// Intel host (the DGX H100's and HGX nodes' Xeons; AMD hosts 2 µs), tripled
// for Simple: a ring's NVLink steps take at least this when it spans nodes.
const ncclNetOverheadUs = 1.0

// NCCLNet prices one NCCL collective over GPUs that span Nodes nodes of
// PerNode GPUs each (ranks = Nodes·PerNode) the way NCCL's own cost model
// does (ncclTopoTuneModel and ncclTopoGetAlgoTime, NCCL 2.27.3
// src/graph/tuning.cc): for every algorithm (ring; tree and NVLS tree for
// an all-reduce) and protocol (LL, LL128, Simple) it enabled,
//
//	T = latency + bytes / algorithm bandwidth,
//
// and NCCL runs the fastest. With N ranks, n nodes, p = N/n per node:
//
//   - ring latency = base + (s − s_net)·max(l_nvl, o) + s_net·l_net, s the
//     ring's steps (2(N−1) for an all-reduce, N−1 for an all-gather or a
//     reduce-scatter), s_net = 2(n−1) or n−1 of them over the network, o
//     the network post overhead (1 µs, 3 for Simple); ×1.4 for a Simple
//     ring all-reduce of ≥ 64 B per channel and rank (the ring's plateau);
//   - tree all-reduce latency = base + 2·((p−1)·l_nvl + log2(n)·l_net);
//   - NVLS tree all-reduce latency = l_nvls + 2·log2(n)·l_net,nvls (Simple,
//     Hopper on, NVSwitch nodes; off where the engine sets
//     NCCL_NVLS_ENABLE=0, as SGLang does by default);
//
// base and l the constants above (the network's own latency, NCCL's
// net.latency, is 0 for InfiniBand: src/transport/net_ib.cc). The bus
// bandwidth B is Channels channels of ChannelBW each (one channel per NIC,
// one NIC per GPU at node.inter_node_bw: a DGX H100 node has 8 ConnectX-7
// 400 Gb/s NDR InfiniBand ports, 50 GB/s each), at most the GPU's NVLink
// (node.intra_node_bw), refined per protocol as NCCL does: LL half of it, at
// most 39 GB/s on 2 nodes (20.4 beyond), LL128 120/128 of it at most the
// generation's per-channel cap; a tree all-reduce 0.92 of it at most its
// per-channel cap, LL a further 1/3.8, with NCCL's size correction. The
// algorithm bandwidth is B·N/s for a ring, B/2 for a tree, B·5/6 for the NVLS
// tree; bytes are the all-reduce's message or the all-gather's whole output
// (the reduce-scatter's input).
type NCCLNet struct {
	Nodes, PerNode int
	// ChannelBW is one channel's bandwidth, B/s; Channels of them
	ChannelBW float64
	Channels  int
	// NVLinkBW caps the bus bandwidth, B/s
	NVLinkBW float64
	// NVLS: the NVLS tree runs (NVLink SHARP: the GPU generation has it and
	// the engine leaves NCCL_NVLS_ENABLE on)
	NVLS bool
	arch ncclArchCaps
}

// NewNCCLNet is the NCCL cost model of a collective over ranks GPUs of a
// worker of gpus GPUs of sys (the ranks spread evenly over its nodes,
// ⌈ranks/nodes⌉ a node, each with its own NIC); ok false when the worker
// fits one node or when sys's nodes are one NVLink domain
// (node.inter_node_bw at least node.intra_node_bw: GB200 NVL72's rack,
// which NCCL's multi-node NVLink runs as one node) or give no network
// bandwidth.
func NewNCCLNet(sys *hardware.System, ranks, gpus int) (NCCLNet, bool) {
	n := sys.Nodes(gpus)
	if n <= 1 || ranks < n || !(sys.InterNodeBW > 0) || sys.InterNodeBW >= sys.IntraNodeBW {
		return NCCLNet{}, false
	}
	per := (ranks + n - 1) / n
	arch := ncclArchOf(sys.Name)
	return NCCLNet{Nodes: n, PerNode: per, ChannelBW: sys.InterNodeBW, Channels: per,
		NVLinkBW: sys.IntraNodeBW, NVLS: arch.nvls, arch: arch}, true
}

// Note says how the model prices the collective, for perf metadata.
func (c NCCLNet) Note() string {
	return fmt.Sprintf("NCCL %s's cost model (src/graph/tuning.cc: ring, tree and NVLS tree × LL, LL128, Simple, the fastest) over %d nodes × %d ranks, network bus bandwidth %.0f GB/s (%d NICs at node.inter_node_bw)",
		NCCLVersionModelled, c.Nodes, c.PerNode, c.busBW()/1e9, c.Channels)
}

// ncclArchOf is the GPU generation of a system by its name (NCCL keys its
// caps on the compute capability): a100 and l40s (8.0, 8.9) Ampere's,
// b200, b300, gb200 and rtx_pro_6000 Blackwell's, any other Hopper's.
func ncclArchOf(name string) ncclArchCaps {
	switch {
	case strings.HasPrefix(name, "a100"), strings.HasPrefix(name, "l40"):
		return ncclAmpere
	case strings.HasPrefix(name, "b2"), strings.HasPrefix(name, "b3"), strings.HasPrefix(name, "gb"), strings.HasPrefix(name, "rtx"):
		return ncclBlackwell
	}
	return ncclHopper
}

// Seconds is the collective's time for bytes B (0 for none), and which
// algorithm and protocol NCCL's model picks ("tree/LL").
func (c NCCLNet) Seconds(op NCCLColl, bytes float64) (float64, string) {
	if bytes <= 0 {
		return 0, ""
	}
	best, pick := math.Inf(1), ""
	try := func(algo string, p int, latUs, algBW float64) {
		if algBW <= 0 {
			return
		}
		if t := latUs*1e-6 + bytes/algBW; t < best {
			best, pick = t, algo+"/"+protoNames[p]
		}
	}
	for p := protoLL; p <= protoSimple; p++ {
		try("ring", p, c.ringLatencyUs(op, p, bytes), c.ringBW(op, p))
	}
	if op == NCCLAllReduce {
		for p := protoLL; p <= protoSimple; p++ {
			try("tree", p, c.treeLatencyUs(p), c.treeBW(p, bytes))
		}
		if c.NVLS {
			try("nvls_tree", protoSimple, ncclNVLSTreeS+2*math.Floor(math.Log2(float64(c.Nodes)))*ncclNetNVLSTS, c.nvlsTreeBW())
		}
	}
	return best, pick
}

func (c NCCLNet) ranks() int { return c.Nodes * c.PerNode }

// nodeIndex is tuning.cc's index2: 0 one node, 1 two, 2 more.
func (c NCCLNet) nodeIndex() int { return min(c.Nodes, 3) - 1 }

// busBW is the graph's bus bandwidth before the protocol's refinements, B/s.
func (c NCCLNet) busBW() float64 {
	return min(float64(c.Channels)*c.ChannelBW, c.NVLinkBW)
}

func (c NCCLNet) ringSteps(op NCCLColl) (steps, net int) {
	if op == NCCLAllReduce {
		return 2 * (c.ranks() - 1), 2 * (c.Nodes - 1)
	}
	return c.ranks() - 1, c.Nodes - 1
}

func (c NCCLNet) ringLatencyUs(op NCCLColl, p int, bytes float64) float64 {
	steps, net := c.ringSteps(op)
	o := ncclNetOverheadUs
	if p == protoSimple {
		o *= 3
	}
	lNet := ncclNetRing[p]
	if c.PerNode == 1 { // one GPU a node: NCCL takes the tree's network latency
		lNet = ncclNetTree[p]
	}
	lat := ncclBaseRing[p] + float64(steps-net)*max(ncclNVLRing[p], o) + float64(net)*lNet
	if p == protoSimple && op == NCCLAllReduce && bytes/float64(c.Channels*c.ranks()) >= 64 {
		lat *= 1.4
	}
	return lat
}

func (c NCCLNet) ringBW(op NCCLColl, p int) float64 {
	b := c.busBW()
	switch p {
	case protoLL:
		b = min(c.llMaxBW(), b*0.5)
	case protoLL128:
		b = min(b*0.92, float64(c.Channels)*c.arch.ringLL128[c.nodeIndex()]*1e9)
	}
	steps, _ := c.ringSteps(op)
	return b * float64(c.ranks()) / float64(steps)
}

func (c NCCLNet) llMaxBW() float64 {
	return ncclLLMaxBW[min(c.Nodes, 3)-2] * 1e9
}

func (c NCCLNet) treeLatencyUs(p int) float64 {
	return ncclBaseTree[p] + 2*(float64(c.PerNode-1)*ncclNVLTree[p]+math.Floor(math.Log2(float64(c.Nodes)))*ncclNetTree[p])
}

func (c NCCLNet) treeBW(p int, bytes float64) float64 {
	ch := float64(c.Channels)
	b := min(c.busBW()*0.92, ch*c.arch.tree[c.nodeIndex()]*1e9)
	switch p {
	case protoLL:
		b = min(b/3.8, c.llMaxBW())
	case protoLL128:
		b = min(b*120/128, ch*c.arch.treeLL128[c.nodeIndex()]*1e9)
	}
	if k := int(math.Floor(math.Log2(math.Floor(bytes / 64)))); bytes >= 64 && k < 23 {
		b *= ncclTreeCorrection[p][k]
	}
	return b * 0.5
}

func (c NCCLNet) nvlsTreeBW() float64 {
	b := c.ChannelBW
	if c.Nodes > 2 {
		b /= 2
	}
	return min(float64(c.Channels)*b, c.NVLinkBW) * 5 / 6
}
