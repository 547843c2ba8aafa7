package pybind

import (
	"container/list"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/aisimulate/aisimulate/core/replay"
)

// stepRequest is StepTime's request: a canonical spec (its engine and
// workers are priced; its traffic is not read), the pool to price ("" for
// the only one of an aggregated deployment) and the passes, each one batch
// per data-parallel rank of a worker (one for a worker without DP).
type stepRequest struct {
	Spec   json.RawMessage `json:"spec"`
	Pool   string          `json:"pool"`
	Passes [][]stepBatch   `json:"passes"`
}

// stepBatch is one rank's pass: each prefill chunk as [new tokens, cached
// prefix tokens, samples (1: the chunk completes its prompt and samples a
// token, 0: a chunk before the prompt's last)], each decode's context (the
// tokens already in its KV cache, the token being computed not counted),
// and speculative decoding's draft tokens verified and draft steps
// (perf.Batch.SpecTokens, DraftSteps).
type stepBatch struct {
	Prefill    [][3]int64 `json:"prefill"`
	Decode     []int64    `json:"decode"`
	SpecTokens int64      `json:"spec_tokens"`
	DraftSteps int64      `json:"draft_steps"`
}

// maxStepTokens bounds every count of a priced batch (2^31 − 1 tokens: far
// beyond any context, within perf's int arithmetic).
const maxStepTokens = 1<<31 - 1

// batch makes the perf.Batch of s for a model with the given decode windows;
// errors name the field under where (e.g. "passes[0][1].prefill[2]").
func (s stepBatch) batch(where string, windows []int) (perf.Batch, error) {
	var b perf.Batch
	bad := func(field, msg string, args ...any) (perf.Batch, error) {
		if field != "" {
			field = "." + field
		}
		return perf.Batch{}, &config.Error{Field: where + field, Msg: fmt.Sprintf(msg, args...)}
	}
	for i, c := range s.Prefill {
		if c[0] < 1 || c[0] > maxStepTokens {
			return bad(fmt.Sprintf("prefill[%d].tokens", i), "%d new tokens, want 1 to %d", c[0], maxStepTokens)
		}
		if c[1] < 0 || c[1] > maxStepTokens-c[0] {
			return bad(fmt.Sprintf("prefill[%d].cached", i), "%d cached tokens, want 0 to %d", c[1], maxStepTokens-c[0])
		}
		if c[2] != 0 && c[2] != 1 {
			return bad(fmt.Sprintf("prefill[%d].samples", i), "%d, want 0 or 1", c[2])
		}
		b.Prefill = append(b.Prefill, perf.Chunk{NewTokens: int(c[0]), PrefixTokens: int(c[1])})
		b.Samplers += int(c[2])
	}
	for i, kv := range s.Decode {
		if kv < 0 || kv > maxStepTokens {
			return bad(fmt.Sprintf("decode[%d]", i), "context of %d tokens, want 0 to %d", kv, maxStepTokens)
		}
		b.AddDecodeWindows(int(kv), windows)
	}
	b.Samplers += b.Decodes
	if s.SpecTokens < 0 || s.SpecTokens > maxStepTokens {
		return bad("spec_tokens", "%d, want 0 to %d", s.SpecTokens, maxStepTokens)
	}
	if s.SpecTokens > 0 && b.Decodes == 0 {
		return bad("spec_tokens", "%d draft tokens verified by no decode", s.SpecTokens)
	}
	if s.DraftSteps < 0 || s.DraftSteps > 64 {
		return bad("draft_steps", "%d, want 0 to 64", s.DraftSteps)
	}
	b.SpecTokens, b.DraftSteps = int(s.SpecTokens), int(s.DraftSteps)
	b.Samplers += b.SpecTokens
	if len(b.Prefill) == 0 && b.Decodes == 0 {
		return bad("", "an empty pass: give a prefill chunk or a decode")
	}
	return b, nil
}

// breakdowner is a perf source that prices a pass op family by op family
// (perf.Roofline, aic.Model).
type breakdowner interface {
	Breakdown(b *perf.Batch) perf.Breakdown
}

// pricedSpec is a spec's deployment built once for StepTime and MemoryPlan;
// mu serialises its perf models (they memoise).
type pricedSpec struct {
	mu  sync.Mutex
	d   *replay.DeploymentPricing
	err error
}

// pricingCache holds the deployments of the last pricingCacheSize specs
// priced, by canonical spec text, so that a parity suite's thousands of
// calls build each deployment (its perf tables, its per-(model, TP)
// tabulation) once.
var pricingCache = struct {
	sync.Mutex
	order *list.List // of string keys, most recent first
	byKey map[string]*list.Element
	entry map[string]*pricedSpec
}{order: list.New(), byKey: map[string]*list.Element{}, entry: map[string]*pricedSpec{}}

const pricingCacheSize = 16

// priced returns the deployment of spec (built on first use).
func priced(spec []byte) *pricedSpec {
	key := string(spec)
	c := &pricingCache
	c.Lock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		e := c.entry[key]
		c.Unlock()
		return e
	}
	e := &pricedSpec{}
	e.mu.Lock() // built below, outside the cache's lock
	c.byKey[key] = c.order.PushFront(key)
	c.entry[key] = e
	for c.order.Len() > pricingCacheSize {
		last := c.order.Back()
		k := last.Value.(string)
		c.order.Remove(last)
		delete(c.byKey, k)
		delete(c.entry, k)
	}
	c.Unlock()
	func() {
		defer e.mu.Unlock()
		defer func() { // a panic in the build is this entry's error, and the caller's
			if r := recover(); r != nil {
				e.err = fmt.Errorf("aisimulate core panic while building the deployment: %v", r)
				panic(r)
			}
		}()
		s, err := config.Decode(spec)
		if err == nil {
			e.d, err = replay.Pricing(s, nil)
		}
		e.err = err
	}()
	return e
}

// pool returns the pool named name ("" = the only pool, an error naming
// the choices when there are two).
func (e *pricedSpec) pool(name string) (*replay.PoolPricing, error) {
	pools := e.d.Pools
	if name == "" && len(pools) == 1 {
		return &pools[0], nil
	}
	var names []string
	for i := range pools {
		if pools[i].Name == name {
			return &pools[i], nil
		}
		names = append(names, pools[i].Name)
	}
	if name == "" {
		return nil, &config.Error{Field: "pool", Msg: fmt.Sprintf("the deployment has the pools %s: name one", strings.Join(names, " and "))}
	}
	return nil, &config.Error{Field: "pool", Msg: fmt.Sprintf("%q is not a pool of the deployment (%s)", name, strings.Join(names, ", "))}
}

// StepTime prices engine passes of a deployment with the perf model a
// replay of its spec would use (replay.Pricing): request is a JSON
// stepRequest; the result is {"step": {"pool", "perf_model", "overlap_cpu",
// "lockstep", "limits", "limit_fields", "passes": [{"time_ns", "breakdown_ns"}]}}, limits
// the pool's per-rank limits as its engine runs them (max_model_len,
// max_num_seqs, max_num_batched_tokens: replay.PoolPricing, which the
// Python API warns of a pass beyond), limit_fields the spec path that sets
// each (engine.trtllm.max_batch_size for TensorRT-LLM's max_num_seqs), and passes one entry per pass
// of the request: time_ns is the pass's duration (int ns, the replay's
// PassTime, or GroupPassTime for the ranks of a lockstep worker);
// breakdown_ns its parts by op family (perf.Breakdown, float ns, snake_case
// keys: gemm_ns, context_attention_ns, …, overhead_ns), null for a source
// without one (linear) or a pass of several ranks. time_ns is
// round(Σ breakdown_ns), or with overlap_cpu (vLLM's async scheduling)
// round(max(Σ − overhead_ns, overhead_ns)), at least 1; a pass the pool's
// engine runs eagerly (PoolPricing.ShapePass: SGLang's prefill passes with
// engine.sglang.eager_launch_us_per_layer) also has host_launch_ns, the
// host's launch of its kernels, which is no part of Σ and bounds the
// kernels instead (perf.Breakdown.PassNs). Errors: the spec's (as
// Replay's), or kind config naming the field of a bad batch.
func StepTime(request string) string {
	return guard(func() string {
		var rq stepRequest
		if err := decodeOptions(request, &rq); err != nil {
			return errorEnvelope(fmt.Errorf("step_time request: %w", err))
		}
		e := priced(rq.Spec)
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.err != nil {
			return errorEnvelope(e.err)
		}
		p, err := e.pool(rq.Pool)
		if err != nil {
			return errorEnvelope(err)
		}
		type passOut struct {
			TimeNs      int64          `json:"time_ns"`
			BreakdownNs map[string]any `json:"breakdown_ns"`
		}
		type limits struct {
			MaxModelLen         int `json:"max_model_len"`
			MaxNumSeqs          int `json:"max_num_seqs"`
			MaxNumBatchedTokens int `json:"max_num_batched_tokens"`
		}
		out := struct {
			Pool       string `json:"pool"`
			PerfModel  string `json:"perf_model"`
			OverlapCPU bool   `json:"overlap_cpu"`
			Lockstep   bool   `json:"lockstep"`
			Limits     limits `json:"limits"`
			// LimitFields: the spec path that sets each limit (PoolPricing.LimitFields)
			LimitFields map[string]string `json:"limit_fields"`
			Passes      []passOut         `json:"passes"`
		}{Pool: p.Name, PerfModel: p.Perf.Name(), OverlapCPU: p.Overlap, Lockstep: p.Lockstep,
			Limits:      limits{p.MaxModelLen, p.MaxNumSeqs, p.MaxNumBatchedTokens},
			LimitFields: p.LimitFields, Passes: []passOut{}}
		for i, ranks := range rq.Passes {
			if len(ranks) == 0 {
				return errorEnvelope(&config.Error{Field: fmt.Sprintf("passes[%d]", i), Msg: "no batch"})
			}
			if len(ranks) > 1 && len(ranks) != p.DP {
				return errorEnvelope(&config.Error{Field: fmt.Sprintf("passes[%d]", i), Msg: fmt.Sprintf(
					"%d batches: a worker of the %s pool has %d data-parallel ranks (give one batch, or one per rank)", len(ranks), p.Name, p.DP)})
			}
			bs := make([]perf.Batch, len(ranks))
			for r := range ranks {
				b, err := ranks[r].batch(fmt.Sprintf("passes[%d][%d]", i, r), p.DecodeWindows)
				if err != nil {
					return errorEnvelope(err)
				}
				p.ShapePass(&b) // as the pool's engine forms it (SGLang's eager launch)
				bs[r] = b
			}
			po := passOut{TimeNs: p.GroupPassTime(bs)}
			if bd, ok := p.Perf.(breakdowner); ok && len(bs) == 1 {
				po.BreakdownNs = breakdownJSON(bd.Breakdown(&bs[0]))
			}
			out.Passes = append(out.Passes, po)
		}
		b, err := json.Marshal(map[string]any{"step": out})
		if err != nil {
			return errorEnvelope(err)
		}
		return string(b)
	})
}

// breakdownJSON is b as {snake_case field: ns}, in the struct's field order
// (json.Marshal sorts a map's keys, which keeps the output deterministic).
func breakdownJSON(b perf.Breakdown) map[string]any {
	v := reflect.ValueOf(b)
	out := make(map[string]any, v.NumField())
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		if name == "HostLaunchNs" && v.Field(i).Float() == 0 {
			continue // a pass without the engine's eager launch: its keys stay as they were
		}
		out[snake(name)] = v.Field(i).Float()
	}
	return out
}

// snake is a Go field name in snake_case: GEMMNs → gemm_ns, AllReduceNs →
// all_reduce_ns.
func snake(name string) string {
	rs := []rune(name)
	var sb strings.Builder
	for i, r := range rs {
		if i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			sb.WriteByte('_')
		}
		sb.WriteRune(unicode.ToLower(r))
	}
	return sb.String()
}

// MemoryPlan returns the memory plan of each pool of a spec's deployment
// (replay.Pricing): {"memory": {"pools": [{"pool", "workers", "tp", "dp",
// "ep", "num_gpu_blocks", "block_size", "kv_tokens", "max_model_len",
// "max_num_seqs", "max_num_batched_tokens", "plan": {usable_bytes,
// weight_bytes, activation_bytes, nccl_bytes, other_bytes, sliding_bytes,
// kv_budget_bytes, kv_bytes_per_token} or null}]}}, per GPU of one rank
// (perf.MemoryPlan; null when the spec gives num_gpu_blocks or the engine
// sizes its pools itself). Errors as Replay's build of the deployment (a
// model that does not fit is kind config, infeasible).
func MemoryPlan(spec string) string {
	return guard(func() string {
		e := priced([]byte(spec))
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.err != nil {
			return errorEnvelope(e.err)
		}
		pools := make([]map[string]any, len(e.d.Pools))
		for i, p := range e.d.Pools {
			var plan any
			if m := p.Memory; m != nil {
				plan = map[string]int64{"usable_bytes": m.UsableBytes, "weight_bytes": m.WeightBytes,
					"activation_bytes": m.ActivationBytes, "nccl_bytes": m.NCCLBytes, "other_bytes": m.OtherBytes,
					"sliding_bytes": m.SlidingBytes, "kv_budget_bytes": m.KVBudgetBytes, "kv_bytes_per_token": m.KVBytesPerToken}
			}
			pools[i] = map[string]any{"pool": p.Name, "workers": p.Workers, "tp": p.TP, "dp": p.DP, "ep": p.EP,
				"num_gpu_blocks": p.NumBlocks, "block_size": p.BlockSize, "kv_tokens": int64(p.NumBlocks) * int64(p.BlockSize),
				"max_model_len": p.MaxModelLen, "max_num_seqs": p.MaxNumSeqs, "max_num_batched_tokens": p.MaxNumBatchedTokens,
				"perf_model": p.Perf.Name(), "weight_dtype": string(e.d.WeightDtype), "kv_cache_dtype": string(e.d.KVCacheDtype), "plan": plan}
		}
		b, err := json.Marshal(map[string]any{"memory": map[string]any{"pools": pools}})
		if err != nil {
			return errorEnvelope(err)
		}
		return string(b)
	})
}
