package replay

import (
	"math"

	"github.com/aisimulate/aisimulate/core/perf"
)

// The queue of an overloaded open loop, for the memory estimate.
//
// Requests that arrive at λ per second on a deployment that serves μ per
// second (λ > μ) pile up. The last of n arrives at n/λ s, when about μ·n/λ
// have completed beyond those the running sets hold, so the requests in
// flight at the last arrival (the peak: the run drains after it) number about
//
//	running sets + n·(1 − μ/λ)
//
// The replay's own service rate is what the simulation finds; the estimate
// prices it from the steady state of a worker kept full (as vLLM's scheduler
// keeps it when its queue is never empty), with the deployment's own perf
// model. A request takes one pass that computes its prompt and samples its
// first token, then osl − 1 decode passes, so a rank that admits k requests a
// pass runs k·osl requests (k computing their prompt, the rest decoding),
// with k the largest that fits
//
//	k ≤ max_num_seqs / osl
//	k ≤ max_num_batched_tokens / (isl + osl − 1)   (a pass's tokens)
//	k ≤ num_gpu_blocks · block_size / ((isl + osl/2) · osl)   (the KV cache)
//
// and each pass computes k prompts and the other requests' decodes at a mean
// context of isl + osl/2 tokens. A fractional k is a mix of passes admitting
// ⌊k⌋ and ⌈k⌉ requests, whose times are weighted accordingly. μ of a rank is
// k over that pass time. With prefill/decode disaggregation, the prefill
// ranks' passes are prompts only (as many as max_num_seqs and
// max_num_batched_tokens hold) and the decode ranks' decodes only, osl
// passes a request (core/replay/disagg.go: the decode side produces every
// output token); μ is the slower pool's. Prompts served from the prefix
// cache (a synthetic dataset with prefix caching) are priced as one token
// computed each (isl above becomes 1 where it counts tokens computed): a
// bound, so that μ is not underestimated there.
//
// μ is an expectation, not a bound, so the up-front refusal (checkBudget) does
// not count the queue: a run whose queue passes the budget is stopped by the
// run-time guard (guardMemory), which charges the requests it really holds.

// steadyWorkload is the mean request the queue model prices.
type steadyWorkload struct {
	isl, osl float64
	cached   bool // prompts come from the prefix cache: one token computed each
}

// serviceRate is the requests per second the deployment completes when its
// queue is never empty (above), or 0 when it cannot be priced (no output or
// no prompt).
func serviceRate(dep *deployment, w steadyWorkload) float64 {
	if w.isl < 1 || w.osl < 1 {
		return 0
	}
	if !dep.disagg {
		return poolRate(dep.pools[0], w, true, true)
	}
	return math.Min(poolRate(dep.pools[0], w, true, false), poolRate(dep.pools[1], w, false, true))
}

// poolRate is the requests per second a pool's ranks complete in the steady
// state, computing prompts (prefill), decoding (decode) or both.
func poolRate(p *pool, w steadyWorkload, prefill, decode bool) float64 {
	cfg := &p.cfg
	computed := w.isl // prompt tokens computed per request
	if w.cached {
		computed = 1
	}
	// a rank that decodes holds k·osl requests: as many as max_num_seqs and
	// the KV cache hold
	decoding := math.Min(float64(cfg.MaxNumSeqs), float64(cfg.NumBlocks)*float64(cfg.BlockSize)/(w.isl+w.osl/2)) / w.osl
	var k float64 // requests admitted per pass
	switch {
	case prefill && decode:
		k = math.Min(decoding, float64(cfg.MaxNumBatchedTokens)/(computed+w.osl-1))
	case prefill:
		k = math.Min(float64(cfg.MaxNumSeqs), float64(cfg.MaxNumBatchedTokens)/computed)
	default: // decode: each request decodes its osl tokens here
		k = decoding
	}
	if !(k > 0) {
		return 0
	}
	seqs := 0.0 // requests running on the rank
	if decode {
		seqs = k * w.osl
	}
	lo := math.Floor(k)
	f := k - lo
	t := (1 - f) * passAt(p, w, lo, seqs, prefill)
	if f > 0 {
		t += f * passAt(p, w, lo+1, seqs, prefill)
	}
	if !(t > 0) {
		return 0
	}
	return float64(p.count*p.dp) * k / (t / 1e9)
}

// passAt prices, ns, one rank's pass of pool p (its dp ranks together when
// they run in lockstep) that computes j prompts (when prefill) and decodes
// one token for the rest of seqs running requests, at the mean context.
func passAt(p *pool, w steadyWorkload, j, seqs float64, prefill bool) float64 {
	var b perf.Batch
	if prefill {
		chunk := perf.Chunk{NewTokens: max(1, int(math.Round(w.isl)))}
		if w.cached {
			chunk = perf.Chunk{NewTokens: 1, PrefixTokens: chunk.NewTokens - 1}
		}
		for i := 0; i < int(j); i++ {
			b.Prefill = append(b.Prefill, chunk)
		}
	}
	d := max(0, int(math.Round(seqs-j)))
	if !prefill {
		d = int(math.Round(seqs))
	}
	kv := int(math.Round(w.isl + w.osl/2))
	windows := perf.DecodeWindows(p.perf) // none: AddDecodeWindows is AddDecode
	for i := 0; i < d; i++ {
		b.AddDecodeWindows(kv, windows)
	}
	b.Samplers = d + len(b.Prefill)
	if b.Sequences() == 0 {
		return 0
	}
	if p.lockstep {
		bs := make([]perf.Batch, p.dp)
		for i := range bs {
			bs[i] = b
		}
		return float64(p.perf.(groupPricer).GroupPassTime(bs))
	}
	return float64(p.perf.PassTime(&b))
}

// queuedAtLastArrival is n·(1 − μ/λ), the requests an open loop of n
// arrivals at λ per second leaves waiting beyond what a deployment serving μ
// per second completes (0 when λ ≤ μ or μ is unknown).
func queuedAtLastArrival(n, lambda, mu float64) float64 {
	if !(mu > 0) || lambda <= mu {
		return 0
	}
	return n * (1 - mu/lambda)
}
