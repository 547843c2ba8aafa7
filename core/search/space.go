package search

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
)

// Modes of a deployment.
const (
	Aggregated    = "aggregated"
	Disaggregated = "disaggregated"
)

// Space is what a capacity-planning question leaves free. A nil list takes
// its default (DefaultSpace); every list is taken in its order, which fixes
// the enumeration's.
type Space struct {
	// GPUs are the GPU counts a deployment may use in all (a budget B is
	// 1, 2, …, B).
	GPUs []int `json:"gpus"`
	// Modes: Aggregated, Disaggregated (default both; P/D needs two pools).
	Modes []string `json:"modes"`
	// TP: tensor-parallel degrees of a worker (default 1, 2, 4, 8 up to the
	// system's GPUs per node: TP spans one node).
	TP []int `json:"tp"`
	// DP: data-parallel ranks of one vLLM worker of a mixture-of-experts
	// model (--data-parallel-size; default 1, 2, 4, 8; a dense model's DP
	// ranks are separate engines, which Count enumerates). EP: expert
	// parallelism off and on (--enable-expert-parallel; MoE only).
	DP []int  `json:"dp"`
	EP []bool `json:"ep"`
	// MaxNumSeqs and MaxNumBatchedTokens: the aggregated candidates' batch
	// limits, in vLLM's names (TensorRT-LLM's max_batch_size and
	// max_num_tokens, SGLang's max_running_requests and
	// chunked_prefill_size; default the engine's own default and 64, 128,
	// 256, 512 sequences; 2048 and 16384 tokens beside the default).
	MaxNumSeqs          []int `json:"max_num_seqs"`
	MaxNumBatchedTokens []int `json:"max_num_batched_tokens"`
	// The P/D candidates' limits, each pool its own (vLLM: each pool's
	// servers are a `vllm serve` of their own, config.Pool.Scheduler):
	// the prefill pool's default the engine's default sequences and every
	// token budget of MaxNumBatchedTokens (a prefill worker's pass is its
	// chunk of prompt tokens); the decode pool's every sequence count of
	// MaxNumSeqs (its batch) and the engine's default tokens. With
	// SharedPDLimits the two pools take one pair, the decode lists'.
	PrefillMaxNumSeqs          []int `json:"prefill_max_num_seqs"`
	PrefillMaxNumBatchedTokens []int `json:"prefill_max_num_batched_tokens"`
	DecodeMaxNumSeqs           []int `json:"decode_max_num_seqs"`
	DecodeMaxNumBatchedTokens  []int `json:"decode_max_num_batched_tokens"`
	// SharedPDLimits: a P/D candidate's pools share one pair of limits in
	// the engine's own block (default for TensorRT-LLM and SGLang, whose
	// pools' own options the search does not set).
	SharedPDLimits bool `json:"shared_pd_limits"`
	// Weights: engine.quantization.weights ("" = the checkpoint's; default
	// also fp8 for a bf16 checkpoint on a GPU with fp8 tensor cores:
	// vLLM's --quantization fp8). KVCache: engine.quantization.kv_cache (""
	// = the question's; default also fp8 on such a GPU).
	Weights []string `json:"weights"`
	KVCache []string `json:"kv_cache"`
	// KVTransfer is the P/D pools' link (default: the question's, else the
	// system's NVLink bandwidth within a node, or its network between
	// nodes, and 0.2 ms).
	KVTransfer *config.KVTransfer `json:"kv_transfer"`
}

// Layout is one pool: Count workers of TP × DP GPUs (EP: experts whole on
// each GPU).
type Layout struct {
	Count int  `json:"count"`
	TP    int  `json:"tp"`
	DP    int  `json:"dp"`
	EP    bool `json:"ep"`
}

// GPUs is Count × TP × DP.
func (l Layout) GPUs() int { return l.Count * l.TP * max(l.DP, 1) }

// Parallel is the layout of one worker.
func (l Layout) Parallel() model.Parallel {
	return model.Parallel{TP: l.TP, DP: max(l.DP, 1), EP: l.EP}
}

// String is "2×TP4", "1×TP2 DP2 EP4".
func (l Layout) String() string { return fmt.Sprintf("%d×%s", l.Count, l.Parallel()) }

// Candidate is one deployment of the search.
type Candidate struct {
	// Index is its place in the enumeration (Enumerate's order).
	Index int    `json:"index"`
	Mode  string `json:"mode"`
	// Pools: the aggregated pool, or the prefill pool then the decode pool.
	Pools []Layout `json:"pools"`
	// MaxNumSeqs and MaxNumBatchedTokens: the aggregated pool's limits, or
	// the prefill pool's (P/D).
	MaxNumSeqs          int `json:"max_num_seqs"`
	MaxNumBatchedTokens int `json:"max_num_batched_tokens"`
	// DecodeMaxNumSeqs and DecodeMaxNumBatchedTokens: a P/D candidate's
	// decode pool's limits (0: the prefill pool's, in the engine's own block:
	// Space.SharedPDLimits).
	DecodeMaxNumSeqs          int    `json:"decode_max_num_seqs,omitempty"`
	DecodeMaxNumBatchedTokens int    `json:"decode_max_num_batched_tokens,omitempty"`
	Weights                   string `json:"weights"`
	KVCache                   string `json:"kv_cache"`
}

// PerPool reports whether c's pools have limits of their own (a P/D
// candidate's decode pool differs from its prefill pool's).
func (c *Candidate) PerPool() bool { return c.DecodeMaxNumSeqs > 0 }

// GPUs is the candidate's GPU count.
func (c *Candidate) GPUs() int {
	n := 0
	for _, p := range c.Pools {
		n += p.GPUs()
	}
	return n
}

// Key names the candidate in a result file: the same candidate gives the
// same key (a resumed search matches its results by it).
func (c *Candidate) Key() string {
	var pools []string
	for _, p := range c.Pools {
		pools = append(pools, p.String())
	}
	w, kv := c.Weights, c.KVCache
	if w == "" {
		w = "checkpoint"
	}
	if kv == "" {
		kv = "default"
	}
	seqs, tokens := fmt.Sprint(c.MaxNumSeqs), fmt.Sprint(c.MaxNumBatchedTokens)
	if c.PerPool() { // the prefill pool's + the decode pool's, as the pools
		seqs += fmt.Sprintf("+%d", c.DecodeMaxNumSeqs)
		tokens += fmt.Sprintf("+%d", c.DecodeMaxNumBatchedTokens)
	}
	return fmt.Sprintf("%s %s seqs=%s tokens=%s weights=%s kv=%s", c.Mode, strings.Join(pools, "+"),
		seqs, tokens, w, kv)
}

// Invalid is a layout the model cannot run, with the model's reason (never
// a candidate).
type Invalid struct {
	Layout Layout `json:"layout"`
	Reason string `json:"reason"`
}

// defaultSeqs and defaultTokens are the batch limits tried beside the
// engine's defaults.
var (
	defaultSeqs   = []int{64, 128, 256, 512}
	defaultTokens = []int{2048, 16384}
)

// DefaultSpace fills sp's nil lists for a question: model arch on system sys
// served by the question's engine (q, whose scheduler defaults are
// resolved). GPUs must be given.
func DefaultSpace(sp Space, q *config.Spec, arch *model.Arch, sys *hardware.System) (Space, error) {
	if len(sp.GPUs) == 0 {
		return sp, &config.Error{Field: "gpus", Msg: "give the GPU budget (or the GPU counts allowed)"}
	}
	for i, g := range sp.GPUs { // the count named, never the list (a budget of 100,000 is 600 kB of it)
		if g < 1 || i > 0 && g <= sp.GPUs[i-1] {
			return sp, &config.Error{Field: "gpus", Msg: fmt.Sprintf("%d (count %d of %d): want ascending counts from 1", g, i+1, len(sp.GPUs))}
		}
	}
	top := sp.GPUs[len(sp.GPUs)-1]
	if top > model.MaxWorkerGPUs*64 {
		return sp, &config.Error{Field: "gpus", Msg: fmt.Sprintf("%d GPUs: at most %d", top, model.MaxWorkerGPUs*64)}
	}
	if sp.Modes == nil {
		sp.Modes = []string{Aggregated}
		if top >= 2 {
			sp.Modes = append(sp.Modes, Disaggregated)
		}
	}
	for _, m := range sp.Modes {
		if m != Aggregated && m != Disaggregated {
			return sp, &config.Error{Field: "modes", Msg: fmt.Sprintf("%q: use %s or %s", m, Aggregated, Disaggregated)}
		}
	}
	node := max(sys.GPUsPerNode, 1)
	if sp.TP == nil {
		for tp := 1; tp <= min(node, top); tp *= 2 {
			sp.TP = append(sp.TP, tp)
		}
	}
	moe := arch.IsMoE()
	if sp.DP == nil {
		sp.DP = []int{1}
		if moe && q.Engine.Backend == config.BackendVLLM {
			for dp := 2; dp <= min(8, top); dp *= 2 {
				sp.DP = append(sp.DP, dp)
			}
		}
	}
	if sp.EP == nil {
		sp.EP = []bool{false}
		if moe {
			sp.EP = append(sp.EP, true)
		}
	}
	seqs, tokens := batchLimits(q)
	if sp.MaxNumSeqs == nil {
		sp.MaxNumSeqs = sortedUnique(append(slices.Clone(defaultSeqs), seqs))
	}
	if sp.MaxNumBatchedTokens == nil {
		sp.MaxNumBatchedTokens = sortedUnique(append(slices.Clone(defaultTokens), tokens))
	}
	if q.Engine.Backend != config.BackendVLLM {
		sp.SharedPDLimits = true
	}
	if sp.PrefillMaxNumSeqs == nil {
		sp.PrefillMaxNumSeqs = []int{seqs}
	}
	if sp.PrefillMaxNumBatchedTokens == nil {
		sp.PrefillMaxNumBatchedTokens = slices.Clone(sp.MaxNumBatchedTokens)
	}
	if sp.DecodeMaxNumSeqs == nil {
		sp.DecodeMaxNumSeqs = slices.Clone(sp.MaxNumSeqs)
	}
	if sp.DecodeMaxNumBatchedTokens == nil {
		sp.DecodeMaxNumBatchedTokens = []int{tokens}
	}
	fp8 := sys.FP8Flops > 0
	if sp.Weights == nil {
		sp.Weights = []string{""}
		if fp8 && arch.WeightDtype == model.BF16 {
			sp.Weights = append(sp.Weights, string(model.FP8))
		}
	}
	if sp.KVCache == nil {
		sp.KVCache = []string{""}
		if fp8 && kvCacheOf(q) != config.DtypeFP8 {
			sp.KVCache = append(sp.KVCache, config.DtypeFP8)
		}
	}
	if sp.KVTransfer == nil {
		if dg := q.Engine.Workers.Disaggregated; dg != nil {
			t := dg.KVTransfer
			sp.KVTransfer = &t
		} else {
			bw := sys.IntraNodeBW
			if top > node {
				bw = sys.InterNodeBW
			}
			sp.KVTransfer = &config.KVTransfer{BandwidthGBPerS: bw / 1e9, LatencyMs: 0.2}
		}
	}
	for _, l := range [][]int{sp.TP, sp.DP, sp.MaxNumSeqs, sp.MaxNumBatchedTokens, sp.PrefillMaxNumSeqs,
		sp.PrefillMaxNumBatchedTokens, sp.DecodeMaxNumSeqs, sp.DecodeMaxNumBatchedTokens} {
		for _, v := range l {
			if v < 1 {
				return sp, &config.Error{Field: "space", Msg: fmt.Sprintf("%v: every size must be ≥ 1", l)}
			}
		}
	}
	return sp, nil
}

// kvCacheOf is the question's KV cache format (engine.quantization.kv_cache).
func kvCacheOf(q *config.Spec) string {
	if qq := q.Engine.Quantization; qq != nil {
		return qq.KVCache
	}
	return ""
}

func sortedUnique(xs []int) []int {
	slices.Sort(xs)
	return slices.Compact(xs)
}

// Enumerate lists the candidates of space sp for model arch, in a fixed
// order: mode, then layouts (aggregated: TP, DP, EP, worker count; P/D: the
// prefill pool's layout, then the decode pool's), then batch limits (P/D:
// the prefill pool's, then the decode pool's; a pair of fewer tokens than
// sequences, which vLLM refuses, is left out), weight and KV formats. A candidate uses one of sp.GPUs in all. Layouts the model
// cannot run (TP not dividing the heads, more EP ranks than experts, fp8
// blocks split: model.Arch.ValidateParallel) are left out and returned as
// invalid, each once.
func Enumerate(sp Space, arch *model.Arch) ([]Candidate, []Invalid) {
	top := sp.GPUs[len(sp.GPUs)-1]
	workers, invalid := workerLayouts(sp, arch)
	aggLimits, prefillLimits, decodeLimits := limitPairs(sp)
	var out []Candidate
	add := func(mode string, pools []Layout, limits [][2]int, decode [][2]int) {
		for _, l := range limits {
			for _, dl := range decode {
				for _, w := range sp.Weights {
					for _, kv := range sp.KVCache {
						out = append(out, Candidate{Index: len(out), Mode: mode, Pools: slices.Clone(pools),
							MaxNumSeqs: l[0], MaxNumBatchedTokens: l[1], DecodeMaxNumSeqs: dl[0],
							DecodeMaxNumBatchedTokens: dl[1], Weights: w, KVCache: kv})
					}
				}
			}
		}
	}
	none := [][2]int{{0, 0}} // no decode pool of its own
	for _, mode := range sp.Modes {
		if mode == Aggregated {
			for _, w := range workers {
				for _, g := range sp.GPUs { // Count workers of g GPUs in all, fewest first
					if l := w; g%w.GPUs() == 0 {
						l.Count = g / w.GPUs()
						add(mode, []Layout{l}, aggLimits, none)
					}
				}
			}
			continue
		}
		for _, pw := range workers {
			for np := 1; np*pw.GPUs() < top; np++ {
				p := pw
				p.Count = np
				// the decode pools beside p, fewest workers first: one per GPU
				// count of sp.GPUs above p's that their workers fill
				above, _ := slices.BinarySearch(sp.GPUs, p.GPUs()+1)
				for _, dw := range workers {
					for _, g := range sp.GPUs[above:] {
						d := dw
						d.Count = (g - p.GPUs()) / dw.GPUs()
						switch {
						case (g-p.GPUs())%dw.GPUs() != 0:
						case sp.SharedPDLimits:
							add(mode, []Layout{p, d}, decodeLimits, none)
						default:
							add(mode, []Layout{p, d}, prefillLimits, decodeLimits)
						}
					}
				}
			}
		}
	}
	return out, invalid
}

// Count is the number of candidates Enumerate lists for sp, worked out
// without making them: a family of pools (Enumerate's add) holds its limit pairs ×
// weight × KV formats, and the P/D families of a prefill pool p and a decode
// worker of b GPUs are one per GPU count g of sp.GPUs above p's with b
// dividing g − p (counted per residue of g mod b), so that a space of
// billions is counted in a few million steps.
func Count(sp Space, arch *model.Arch) int {
	workers, _ := workerLayouts(sp, arch)
	agg, prefill, decode := limitPairs(sp)
	per := len(sp.Weights) * len(sp.KVCache)
	top := sp.GPUs[len(sp.GPUs)-1]
	// from[b][x]: the GPU counts g ≥ x of sp.GPUs with g ≡ x (mod b)
	allowed := make([]bool, top+1)
	for _, g := range sp.GPUs {
		allowed[g] = true
	}
	from := map[int][]int{}
	for _, w := range workers {
		b := w.GPUs()
		if from[b] != nil {
			continue
		}
		f := make([]int, top+b+1)
		for x := top; x >= 0; x-- {
			f[x] = f[x+b]
			if allowed[x] {
				f[x]++
			}
		}
		from[b] = f
	}
	pd := len(decode) // a P/D family's limit pairs
	if !sp.SharedPDLimits {
		pd *= len(prefill)
	}
	n := 0
	for _, mode := range sp.Modes {
		for _, w := range workers {
			b := w.GPUs()
			if mode == Aggregated {
				n += from[b][b] * len(agg) * per // g a multiple of b: g ≡ 0 (mod b), g ≥ b
				continue
			}
			for _, dw := range workers {
				d := dw.GPUs()
				for p := b; p < top; p += b { // the prefill pool: np workers of b GPUs
					n += from[d][p+d] * pd * per
				}
			}
		}
	}
	return n
}

// workerLayouts are one worker of each layout of sp that the model can run,
// and those it cannot (Enumerate's order: TP, DP, EP).
func workerLayouts(sp Space, arch *model.Arch) (workers []Layout, invalid []Invalid) {
	top := sp.GPUs[len(sp.GPUs)-1]
	for _, tp := range sp.TP {
		for _, dp := range sp.DP {
			for _, ep := range sp.EP {
				l := Layout{Count: 1, TP: tp, DP: dp, EP: ep}
				// a dense model's DP ranks are separate engines (Count), and EP
				// on one GPU is no expert parallelism: neither is a layout
				if l.GPUs() > top || !arch.IsMoE() && (dp > 1 || ep) || ep && l.GPUs() == 1 {
					continue
				}
				if err := arch.ValidateParallel(l.Parallel()); err != nil {
					invalid = append(invalid, Invalid{Layout: l, Reason: err.Error()})
					continue
				}
				workers = append(workers, l)
			}
		}
	}
	return workers, invalid
}

// limitPairs are the batch limits of the aggregated pool, a P/D prefill
// pool and a decode pool (prefill nil with SharedPDLimits: one pair for both
// pools, the decode lists').
func limitPairs(sp Space) (agg, prefill, decode [][2]int) {
	// every pair that vLLM would start with (a pass holds one token of every
	// running sequence: tokens ≥ sequences, SchedulerConfig.verify_max_model_len)
	pairs := func(seqs, tokens []int) (ps [][2]int) {
		for _, s := range seqs {
			for _, t := range tokens {
				if t >= s {
					ps = append(ps, [2]int{s, t})
				}
			}
		}
		return ps
	}
	agg, prefill, decode = pairs(sp.MaxNumSeqs, sp.MaxNumBatchedTokens), pairs(sp.PrefillMaxNumSeqs, sp.PrefillMaxNumBatchedTokens), pairs(sp.DecodeMaxNumSeqs, sp.DecodeMaxNumBatchedTokens)
	if sp.SharedPDLimits {
		prefill = nil
	}
	return agg, prefill, decode
}
