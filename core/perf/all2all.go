package perf

import (
	"fmt"
	"math"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
)

// vLLM's --all2all-backend values (the spec's engine.workers.*.all2all_backend;
// vllm/distributed/device_communicators/all2all.py).
const (
	All2AllAgRs       = "allgather_reducescatter"
	All2AllNaive      = "naive"
	All2AllDeepEPHT   = "deepep_high_throughput"
	All2AllDeepEPLL   = "deepep_low_latency"
	All2AllFlashInfer = "flashinfer_all2allv"
)

// All2AllBackends lists the --all2all-backend values the perf sources know,
// in the spec's order (config.Enums' engine.workers.*.all2all_backend lists
// the same: TestAll2AllBackendsAgree in core/replay).
func All2AllBackends() []string {
	return []string{All2AllAgRs, All2AllNaive, All2AllDeepEPHT, All2AllDeepEPLL, All2AllFlashInfer}
}

// A2A is how a data-parallel, expert-parallel worker's MoE layers move
// tokens to the GPUs holding their experts and back (the backend's dispatch
// and combine), on one GPU, per MoE layer:
//
//   - allgather_reducescatter (vLLM's default; naive is its alias since vLLM
//     pull request 33728): every rank's tokens are all-gathered to every rank
//     before the experts and the outputs reduce-scattered after, X·h bf16
//     elements each way over the DP ranks (the ring's time; the perf sources
//     price it from their collective curves, not here);
//   - deepep_high_throughput and flashinfer_all2allv: a token goes to each
//     rank that holds at least one of its experts, once (q of the P ranks in
//     expectation), and its output comes back the same way;
//   - deepep_low_latency: each (token, expert) pair goes to the expert's
//     rank (k of them per token), in fixed buffers.
//
// The bytes a rank sends, per destination, over NVLink to the other g − 1
// GPUs of its node and over the network to the P − g others:
//
//	T = L + max(x·n_in·b / W_nvl, x·n_out·b / W_net)            (dispatch, then combine)
//
// x the rank's tokens, b the bytes of one token's hidden state (dispatch:
// fp8 with an fp32 scale per 128 where the backend quantizes — DeepEP
// low-latency always, the others for fp8 experts — else bf16; combine bf16),
// n_in = (g − 1)·q_r and n_out = (P − g)·q_r the expected destinations per
// token in and out of the node, q_r = 1 − C(E − E/P, k) / C(E, k) for
// deduplicated sends (a rank holds E/P of the E experts; uniform routing,
// k distinct experts per token) and k/P for pairs, W the system's NVLink
// and network bandwidth per GPU, L the kernel's fixed latency. DeepEP's
// high-throughput kernels across nodes send a token over the network once
// per other node that holds one of its experts, to the GPU of the same
// local index there, which forwards it over NVLink (deep_ep/buffer.py,
// internode_dispatch; csrc/kernels/internode.cu): for them n_out =
// (n − 1)·q_n, q_n = 1 − C(E − E/n, k) / C(E, k) over the n = P/g nodes.
type A2A struct {
	Backend string
	// P GPUs in the EP group, g of them per node; k of E experts per token
	P, G, K, E int
	// NodeDedup: a token crosses the network once per node (DeepEP's
	// high-throughput kernels), not once per rank.
	NodeDedup bool
	Hidden    float64
	// DispatchBytes and CombineBytes per element
	DispatchBytes, CombineBytes float64
	NVLinkBW, NetBW             float64
	// DispatchLatencyS and CombineLatencyS are the kernels' fixed times
	DispatchLatencyS, CombineLatencyS float64
}

// Default fixed latencies of the all-to-all kernels, seconds: the one-token
// times of h200_sxm's DeepEP tables (comm/sglang/0.5.12/
// wideep_deepep_{normal,ll}_perf: 8 GPUs, hidden 7168, 256 experts, top 8;
// high-throughput with vLLM's 20 SMs: 27.0 µs dispatch, 46.9 µs combine;
// low-latency 11.9 and 12.6 µs). FlashInfer's all-to-all-v is priced at
// DeepEP low-latency's (not measured).
const (
	DeepEPHTDispatchLatencyS = 27.0e-6
	DeepEPHTCombineLatencyS  = 46.9e-6
	DeepEPLLDispatchLatencyS = 11.9e-6
	DeepEPLLCombineLatencyS  = 12.6e-6
)

// IsAll2All reports whether backend sends tokens point to point (DeepEP,
// FlashInfer) rather than gathering them all (allgather_reducescatter, naive,
// "" for vLLM's default).
func IsAll2All(backend string) bool {
	return backend == All2AllDeepEPHT || backend == All2AllDeepEPLL || backend == All2AllFlashInfer
}

// NewA2A prices backend for the MoE layers of arch under layout par on sys
// (the experts of format ed), with the fixed latencies above. Error: a
// backend that is not point to point.
func NewA2A(backend string, arch *model.Arch, par model.Parallel, sys *hardware.System) (*A2A, error) {
	if !IsAll2All(backend) {
		return nil, fmt.Errorf("perf: all2all backend %q is not point to point", backend)
	}
	p := par.GPUs()
	g := p
	if sys.GPUsPerNode > 0 {
		g = min(p, sys.GPUsPerNode)
	}
	a := &A2A{Backend: backend, P: p, G: g, K: arch.MoE.TopK, E: arch.MoE.Experts, Hidden: float64(arch.ExpertHidden()),
		CombineBytes: 2, NVLinkBW: sys.IntraNodeBW, NetBW: sys.CollectiveBW(p), NodeDedup: backend == All2AllDeepEPHT}
	fp8 := 1 + 4.0/128 // fp8 and an fp32 scale per 128 elements
	switch backend {
	case All2AllDeepEPLL:
		a.DispatchBytes, a.DispatchLatencyS, a.CombineLatencyS = fp8, DeepEPLLDispatchLatencyS, DeepEPLLCombineLatencyS
	case All2AllDeepEPHT:
		a.DispatchBytes, a.DispatchLatencyS, a.CombineLatencyS = 2, DeepEPHTDispatchLatencyS, DeepEPHTCombineLatencyS
	default:
		a.DispatchBytes, a.DispatchLatencyS, a.CombineLatencyS = 2, DeepEPLLDispatchLatencyS, DeepEPLLCombineLatencyS
	}
	if d := arch.ExpertDtype(); backend != All2AllDeepEPLL && (d == model.FP8 || d == model.FP8Block) {
		a.DispatchBytes = fp8
	}
	return a, nil
}

// Destinations is the expected destinations of one token, q_r (see A2A):
// the ranks holding one of its experts at least (deduplicated backends), or
// k/P per rank for the low-latency backend's pairs.
func (a *A2A) Destinations() float64 {
	if a.Backend == All2AllDeepEPLL {
		return float64(a.K) / float64(a.P)
	}
	return a.holding(a.E / a.P)
}

// holding is the probability that a group holding per of the E experts
// holds at least one of a token's k: 1 − C(E − per, k) / C(E, k).
func (a *A2A) holding(per int) float64 {
	miss := 1.0 // C(E − per, k) / C(E, k): no expert of the token in the group
	for i := 0; i < a.K; i++ {
		miss *= float64(a.E-per-i) / float64(a.E-i)
	}
	return 1 - math.Max(miss, 0)
}

// NetDestinations is n_out (see A2A): the copies of one token that cross
// the network, (P − g)·q_r, or (n − 1)·q_n with NodeDedup.
func (a *A2A) NetDestinations() float64 {
	if a.P <= a.G {
		return 0
	}
	if a.NodeDedup {
		n := (a.P + a.G - 1) / a.G
		return float64(n-1) * a.holding(a.E/n)
	}
	return float64(a.P-a.G) * a.Destinations()
}

// Seconds is the dispatch and combine of one MoE layer when the rank holds x
// tokens (see A2A).
func (a *A2A) Seconds(x float64) float64 {
	if x <= 0 {
		return 0
	}
	in, out := float64(a.G-1)*a.Destinations(), a.NetDestinations()
	move := func(b float64) float64 {
		t := x * in * b * a.Hidden / a.NVLinkBW
		if out > 0 {
			t = math.Max(t, x*out*b*a.Hidden/a.NetBW)
		}
		return t
	}
	return a.DispatchLatencyS + move(a.DispatchBytes) + a.CombineLatencyS + move(a.CombineBytes)
}
