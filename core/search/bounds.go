package search

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/aisimulate/aisimulate/core/replay"
)

// Kinds of prune, and of early stop.
const (
	// KindInvalid: the engine refuses the candidate's settings (a
	// *config.Error that is not a deployment that cannot start).
	KindInvalid = "invalid"
	// KindMemory: the weights, activations and reserves leave no KV block
	// (vLLM refuses to start: perf.ErrDoesNotFit).
	KindMemory = "memory"
	// KindKVCache: the start-up KV check: the cache cannot hold one request
	// of max_model_len (vllm/v1/core/kv_cache_utils.py
	// check_enough_kv_cache_memory).
	KindKVCache = "kv_cache"
	// KindTPOTFloor: one decode step already takes longer than the TPOT
	// bound.
	KindTPOTFloor = "tpot_floor"
	// KindThroughput: the offered load's decode work outruns what the
	// deployment decodes at its best, so more requests miss their deadline
	// than the SLO's percentile allows.
	KindThroughput = "throughput"
	// KindSLO (an early stop): the replay was stopped once the SLO's miss was
	// certain (tracker).
	KindSLO = "slo"
	// KindDominated: not replayed: a deployment of its GPU count reports at
	// most MaxOutputTPS / GPUs output tokens/s per GPU, less (by the best
	// rule's tie) than a candidate of fewer GPUs that met the SLO, so it
	// cannot be recommended (the Python package decides it, between GPU
	// counts: python/aisimulate/analysis/search/__init__.py).
	KindDominated = "dominated"
)

// load is what the bounds read of the offered load, computed once.
type load struct {
	n       int
	osl     []int // each request's output tokens, in send order
	minISL  int
	maxISL  int
	minOSL  int
	decodes []int   // OSL − 1 of each request, sorted ascending, and their prefix sums:
	prefix  []int64 // prefix[m] = Σ of the m smallest
	sendNs  []int64 // nil when sends depend on the deployment
}

func newLoad(o *replay.Offer) *load {
	l := &load{n: len(o.OutputTokens), sendNs: o.SendNs, minISL: math.MaxInt, minOSL: math.MaxInt}
	for i, out := range o.OutputTokens {
		l.minISL, l.maxISL = min(l.minISL, o.InputTokens[i]), max(l.maxISL, o.InputTokens[i])
		l.minOSL = min(l.minOSL, out)
		l.decodes = append(l.decodes, max(out-1, 0))
		l.osl = append(l.osl, out)
	}
	slices.Sort(l.decodes)
	l.prefix = make([]int64, len(l.decodes)+1)
	for i, d := range l.decodes {
		l.prefix[i+1] = l.prefix[i] + int64(d)
	}
	return l
}

// completable is how many requests can have completed once w decode tokens
// have been computed in all: the most requests whose decodes (OSL − 1 each,
// the first token comes with the prefill) sum to at most w, the smallest
// first.
func (l *load) completable(w float64) int {
	if w >= float64(l.prefix[len(l.prefix)-1]) {
		return l.n
	}
	// the largest m with prefix[m] ≤ w
	m, _ := slices.BinarySearchFunc(l.prefix, w, func(p int64, w float64) int {
		if float64(p) <= w {
			return -1
		}
		return 1
	})
	return m - 1
}

// startupPrune turns the error of building a candidate's deployment into its
// prune: a deployment that cannot start (memory, the KV check), or settings
// the engine refuses (invalid); other errors are returned.
func startupPrune(err error) (kind, reason string, ok bool) {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return "", "", false
	}
	switch {
	case !ce.Infeasible:
		return KindInvalid, ce.Error(), true
	case strings.HasSuffix(ce.Field, "max_model_len"):
		return KindKVCache, ce.Msg, true
	}
	return KindMemory, ce.Msg, true
}

// tokenPool is the pool whose passes produce the tokens the client sees: the
// aggregated pool, or P/D's decode pool.
func tokenPool(d *replay.DeploymentPricing) *replay.PoolPricing { return &d.Pools[len(d.Pools)-1] }

// decodePassNs is the time of a pass of k decodes on pool p's rank at the
// least context any decode of the load has (a decode of a P-token prompt
// holds at least P − 1 tokens: P/D's first decode pass recomputes the
// prompt's last token), ns. Both sources price a pass no shorter for more
// context or one more decode (core/perf/parity TestParityMonotone); the
// least over a context of 0 and that context guards the bound against a
// measured table that is not monotone there.
func decodePassNs(p *replay.PoolPricing, k, minContext int) float64 {
	t := math.Inf(1)
	for _, c := range []int{0, minContext} {
		var b perf.Batch
		for range k {
			b.AddDecodeWindows(c, p.DecodeWindows)
		}
		b.Samplers = k
		bs := make([]perf.Batch, max(p.DP, 1))
		for r := range bs {
			bs[r] = b // a lockstep worker's ranks, each with the same batch (its fastest per token)
		}
		t = math.Min(t, float64(p.GroupPassTime(bs)))
	}
	return t
}

// tpotFloorMs is the least time, ms, between a request's first and last
// token per token after the first: its tokens come one per pass of the
// token pool, each pass at least a one-decode pass; with an output
// processor (engine.detokenization) the client may receive them closer, but
// no closer than its per-pass job (a FIFO: each job starts after the
// previous one ends). 0 when tokens can come several per pass (speculative
// decoding, TensorRT-LLM's stream_interval): no floor.
func tpotFloorMs(q *config.Spec, d *replay.DeploymentPricing, minContext int) float64 {
	e := &q.Engine
	if t := e.TRTLLM; t != nil && (t.SpeculativeConfig != nil || t.StreamInterval > 1) {
		return 0
	}
	for _, p := range []*config.Pool{e.Workers.Aggregated, decodePoolOf(e)} {
		if p != nil && p.TRTLLM != nil && (p.TRTLLM.SpeculativeConfig != nil || p.TRTLLM.StreamInterval > 1) {
			return 0
		}
	}
	floor := decodePassNs(tokenPool(d), 1, minContext) / 1e6
	if dt := e.Detokenization; dt != nil {
		floor = math.Min(floor, (dt.BaseUs+dt.PerTokenUs)/1e3)
	}
	return floor
}

func decodePoolOf(e *config.Engine) *config.Pool {
	if dg := e.Workers.Disaggregated; dg != nil {
		return &dg.Decode
	}
	return nil
}

// decodeRate is the most decode tokens per second the deployment's token
// pool computes (ranks × max over k of k / T(k), T(k) a pass of k decodes
// at the least context: decodePassNs), k up to max_num_seqs and, without
// prefix caching (no two requests share a block), the KV cache over the
// least context. A pass that also computes prompt tokens takes no less
// time (the sources are monotone), so no mix of passes decodes faster.
func decodeRate(d *replay.DeploymentPricing, minContext int) float64 {
	p := tokenPool(d)
	kMax := p.MaxNumSeqs
	if !p.PrefixCaching {
		kMax = min(kMax, p.NumBlocks*p.BlockSize/max(minContext+1, 1))
	}
	best := 0.0
	for k := 1; k <= max(kMax, 1); k++ {
		if t := decodePassNs(p, k, minContext); t > 0 {
			best = math.Max(best, float64(k)/t)
		}
	}
	ranks := p.Workers * max(p.DP, 1)
	return best * 1e9 * float64(ranks)
}

// throughputPrune says whether the load certainly misses the SLO on a
// deployment that decodes at most rate tokens per second (decodeRate), and
// why. A request that meets E2E completes within E2E's bound of its send;
// one that meets TTFT and TPOT within TTFT + (OSL − 1) × TPOT. By time τ at
// most completable(rate × τ) requests can have completed, so of the m
// requests with the earliest deadlines at least m − completable(rate ×
// deadline_m) miss. A miss of the joint TTFT-and-TPOT rule is a miss of one
// of its two bounds, so that rule settles the SLO once its misses reach
// 2·(need − 1) + 1 (one of the two bounds then has need of them); E2E's at
// need. need is mustExceed(n, p).
func throughputPrune(l *load, slo SLO, rate float64) (bool, string) {
	if l.sendNs == nil || rate <= 0 || l.n == 0 {
		return false, ""
	}
	need := mustExceed(l.n, slo.Percentile)
	rules := []struct {
		on       bool
		join     int
		what     string
		deadline func(i int) float64 // s from the start
	}{
		{slo.E2EMs > 0, 1, fmt.Sprintf("E2E %g ms", slo.E2EMs),
			func(i int) float64 { return float64(l.sendNs[i])/1e9 + slo.E2EMs/1e3 }},
		{slo.TTFTMs > 0 && slo.TPOTMs > 0, 2, fmt.Sprintf("TTFT %g ms + (OSL − 1) × TPOT %g ms", slo.TTFTMs, slo.TPOTMs),
			func(i int) float64 {
				return float64(l.sendNs[i])/1e9 + (slo.TTFTMs+float64(max(l.osl[i]-1, 0))*slo.TPOTMs)/1e3
			}},
	}
	dl := make([]float64, l.n)
	for _, r := range rules {
		if !r.on {
			continue
		}
		for i := range dl {
			dl[i] = r.deadline(i)
		}
		slices.Sort(dl)
		missed := 0
		for m := 1; m <= l.n; m++ {
			missed = max(missed, m-l.completable(rate*dl[m-1]))
		}
		if missed >= r.join*(need-1)+1 {
			return true, fmt.Sprintf("at most %.0f decode tokens/s (full batches at the shortest context): at least %d of the %d requests cannot complete within %s of their send, and %d misses settle p%g",
				rate, missed, l.n, r.what, r.join*(need-1)+1, slo.Percentile)
		}
	}
	return false, ""
}

// maxOutputTPS is the most output tokens/s a deployment that meets the SLO
// can report for the load (report.Summary.OutputTokenThroughputTPS: the
// output tokens of the completed requests over AIPerf's window, from the
// first completed request's send to the last completed response: docs/metrics.md
// duration_ms), with the interval it was taken over; ok is false when the
// sends depend on the deployment (sendNs nil) or the bound is not finite.
// A request that does not complete misses every bound (slo.go), so a
// deployment that meets the SLO completes all but at most need − 1 of the n
// requests (need: mustExceed): its window holds the sends of at least
// m = n − need + 1 requests and spans no less than the shortest interval
// holding m sends, and its tokens are at most every request's.
func (l *load) maxOutputTPS(slo SLO) (tps, spanS float64, m int, ok bool) {
	if l.sendNs == nil || l.n == 0 {
		return 0, 0, 0, false
	}
	m = l.n - mustExceed(l.n, slo.Percentile) + 1
	sends := slices.Clone(l.sendNs)
	slices.Sort(sends)
	span := int64(math.MaxInt64)
	for j := 0; j+m-1 < len(sends); j++ {
		span = min(span, sends[j+m-1]-sends[j])
	}
	if span <= 0 || span == math.MaxInt64 {
		return 0, 0, m, false
	}
	var tokens int64
	for _, o := range l.osl {
		tokens += int64(o)
	}
	spanS = float64(span) / 1e9
	return float64(tokens) / spanS, spanS, m, true
}

// MaxOutputTPS is maxOutputTPS of the question's load and SLO: a candidate
// of g GPUs that meets the SLO reports at most tps / g output tokens/s per
// GPU, so once another has met it with more than that (by the best rule's
// tie), it cannot be recommended (python/aisimulate/analysis/search/_front.py:
// dominated). Only with every measured request known (Offer.Exact).
func (q *Question) MaxOutputTPS() (tps, spanS float64, m int, ok bool) {
	if !q.Offer.Exact {
		return 0, 0, 0, false
	}
	return q.load.maxOutputTPS(q.SLO)
}
