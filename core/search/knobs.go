package search

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/config"
)

// batchLimits are the engine's batch limits in question q (its scheduler
// defaults resolved): vLLM's max_num_seqs and max_num_batched_tokens,
// TensorRT-LLM's max_batch_size and max_num_tokens, SGLang's
// max_running_requests and chunked_prefill_size.
func batchLimits(q *config.Spec) (seqs, tokens int) {
	e := &q.Engine
	switch {
	case e.Backend == config.BackendTRTLLM && e.TRTLLM != nil:
		return e.TRTLLM.MaxBatchSize, e.TRTLLM.MaxNumTokens
	case e.Backend == config.BackendSGLang && e.SGLang != nil:
		return e.SGLang.MaxRunningRequests, e.SGLang.ChunkedPrefillSize
	}
	return e.Scheduler.MaxNumSeqs, e.Scheduler.MaxNumBatchedTokens
}

// setBatchLimits sets the engine's batch limits of s to seqs and tokens in
// the engine's own fields (batchLimits).
func setBatchLimits(s *config.Spec, seqs, tokens int) {
	e := &s.Engine
	switch {
	case e.Backend == config.BackendTRTLLM && e.TRTLLM != nil:
		e.TRTLLM.MaxBatchSize, e.TRTLLM.MaxNumTokens = seqs, tokens
	case e.Backend == config.BackendSGLang && e.SGLang != nil:
		e.SGLang.MaxRunningRequests, e.SGLang.ChunkedPrefillSize = seqs, tokens
	default:
		e.Scheduler.MaxNumSeqs, e.Scheduler.MaxNumBatchedTokens = seqs, tokens
	}
}

// Spec is candidate c as a replay spec: question q (its scheduler defaults
// resolved) with c's workers, batch limits and formats; a P/D candidate's
// pools are joined by the space's KV transfer, and keep the placement of
// the question's pool of the same role (or its aggregated pool's). A P/D
// candidate with limits per pool (Candidate.PerPool) gives each pool its
// own (config.Pool.Scheduler: vLLM's flags per server); else the engine's
// own block holds the limits.
func (c *Candidate) Spec(q *config.Spec, sp *Space) *config.Spec {
	s := q.Clone()
	e := &s.Engine
	template := func(role string) config.Pool {
		if dg := q.Engine.Workers.Disaggregated; dg != nil {
			if role == "prefill" {
				return dg.Prefill
			}
			return dg.Decode
		}
		if a := q.Engine.Workers.Aggregated; a != nil {
			return *a
		}
		return config.Pool{}
	}
	pool := func(role string, l Layout, seqs, tokens int) config.Pool {
		p := template(role)
		p.Count, p.TP, p.EnableExpertParallel = l.Count, l.TP, l.EP
		if p.TRTLLM != nil { // a pool's own TensorRT-LLM options take the candidate's limits too
			t := *p.TRTLLM
			t.MaxBatchSize, t.MaxNumTokens = seqs, tokens
			p.TRTLLM = &t
		}
		p.Scheduler = nil
		if c.PerPool() { // each vLLM pool's servers with their own flags
			p.Scheduler = &config.PoolScheduler{MaxNumSeqs: seqs, MaxNumBatchedTokens: tokens}
		}
		p.DataParallelSize = nil
		if l.DP > 1 {
			dp := l.DP
			p.DataParallelSize = &dp
		}
		return p
	}
	seqs, tokens := c.MaxNumSeqs, c.MaxNumBatchedTokens
	if c.Mode == Disaggregated {
		dSeqs, dTokens := seqs, tokens
		if c.PerPool() {
			dSeqs, dTokens = c.DecodeMaxNumSeqs, c.DecodeMaxNumBatchedTokens
		}
		e.Workers = config.Workers{Disaggregated: &config.Disaggregated{
			Prefill: pool("prefill", c.Pools[0], seqs, tokens), Decode: pool("decode", c.Pools[1], dSeqs, dTokens),
			KVTransfer: *sp.KVTransfer}}
	} else {
		a := pool("aggregated", c.Pools[0], seqs, tokens)
		e.Workers = config.Workers{Aggregated: &a}
	}
	if !c.PerPool() { // else engine.scheduler stays the question's: each pool gives its own
		setBatchLimits(s, seqs, tokens)
	}
	if c.Weights != "" || c.KVCache != "" {
		qq := config.Quantization{}
		if e.Quantization != nil {
			qq = *e.Quantization
		}
		if c.Weights != "" {
			qq.Weights = c.Weights
		}
		if c.KVCache != "" {
			qq.KVCache = c.KVCache
		}
		e.Quantization = &qq
	}
	return s
}

// String describes c for messages.
func (c *Candidate) String() string { return fmt.Sprintf("candidate %d (%s)", c.Index, c.Key()) }
