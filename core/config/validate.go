package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Validate checks ranges, enumerations and combinations of a spec whose
// defaults are filled (Decode's result, or a spec built in Go). The first
// problem is returned as an *Error with its dotted path.
func (s *Spec) Validate() error {
	return firstErr(s.validateEngine(), s.validateTraffic(), s.validateExecution())
}

// checkEnum checks a string field against its list (key in stringEnums).
func checkEnum(field, key, got string) error {
	e, ok := stringEnums[key]
	if !ok {
		panic("config: no list of values for " + key)
	}
	if slices.Contains(e.values, got) {
		return nil
	}
	switch {
	case e.why != "":
		return errorf(field, "%s is not supported: %s", quote(got), e.why)
	case got == "":
		return errorf(field, "is required (one of %s)", strings.Join(e.values, ", "))
	}
	return errorf(field, "%s is not supported (one of %s)", quote(got), strings.Join(e.values, ", "))
}

func atLeast(field string, got, min int) error {
	if got < min {
		return errorf(field, "must be ≥ %d, got %d", min, got)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// variantOf checks that a block holds a variant of its table: nil is "is
// required"; a variant the table does not list cannot be built (the variant
// interfaces are sealed), so it is a bug in this package.
func variantOf(u *union, path string, v any) error {
	if v == nil {
		return u.required(path)
	}
	if u.nameOf(v) == "" {
		panic(fmt.Sprintf("config: %T implements the %s variants of %s but is not in its table", v, u.key, path))
	}
	return nil
}

func (s *Spec) validateEngine() error {
	e := &s.Engine
	if e.Model == "" {
		return errorf("engine.model", "is required (a Hugging Face name or a path to config.json)")
	}
	if e.System == "" {
		return errorf("engine.system", "is required (a built-in system such as h100_sxm, or a system YAML path)")
	}
	if err := checkEnum("engine.backend", "Engine.backend", e.Backend); err != nil {
		return err
	}
	if e.MoEBackend != "" {
		if err := checkEnum("engine.moe_backend", "Engine.moe_backend", e.MoEBackend); err != nil {
			return err
		}
	}
	if e.BackendVersion != "" {
		if _, _, err := ResolveEngineVersion(e.BackendVersion, e.Backend); err != nil {
			return errorf("engine.backend_version", "%v", err)
		}
	}
	if err := variantOf(perfUnion, "engine.perf", e.Perf.Source); err != nil {
		return err
	}
	if err := e.Perf.Source.validate("engine.perf"); err != nil {
		return err
	}
	if err := validateQuantization(e.Quantization); err != nil {
		return err
	}
	if w := e.Workers; w.Disaggregated != nil {
		if w.Aggregated != nil {
			return errorf("engine.workers", "give aggregated or disaggregated, not both")
		}
		d := w.Disaggregated
		const kv = "engine.workers.disaggregated.kv_transfer"
		if err := firstErr(validatePool("engine.workers.disaggregated.prefill", &d.Prefill),
			validatePool("engine.workers.disaggregated.decode", &d.Decode),
			checkFloatOrUnset(kv+".bandwidth_gb_per_s", "KVTransfer.bandwidth_gb_per_s", d.KVTransfer.BandwidthGBPerS),
			checkFloat(kv+".latency_ms", "KVTransfer.latency_ms", d.KVTransfer.LatencyMs),
			checkFloat(kv+".kv_bytes_per_token", "KVTransfer.kv_bytes_per_token", float64(d.KVTransfer.KVBytesPerToken))); err != nil {
			return err
		}
	} else if w.Aggregated == nil {
		return errorf("engine.workers", "give aggregated or disaggregated")
	} else if err := validatePool("engine.workers.aggregated", w.Aggregated); err != nil {
		return err
	}
	if err := firstErr(e.validateTRTLLM(), e.validateSGLang(), e.validatePoolVLLM()); err != nil {
		return err
	}
	if e.Backend != BackendVLLM {
		return validateClientCosts(e) // engine.scheduler is vLLM's (validateTRTLLM, validateSGLang refused it)
	}
	sc := &e.Scheduler
	const scp = "engine.scheduler."
	// max_num_seqs and max_num_batched_tokens 0: not given, vLLM's default
	// for the system (ResolveSchedulerDefaults); fromRaw refuses a 0 given
	if err := firstErr(checkIntOrUnset(scp+"max_num_seqs", "Scheduler.max_num_seqs", sc.MaxNumSeqs),
		checkIntOrUnset(scp+"max_num_batched_tokens", "Scheduler.max_num_batched_tokens", sc.MaxNumBatchedTokens),
		checkInt(scp+"block_size", "Scheduler.block_size", sc.BlockSize),
		checkInt(scp+"max_model_len", "Scheduler.max_model_len", sc.MaxModelLen),
		checkInt(scp+"num_gpu_blocks", "Scheduler.num_gpu_blocks", sc.NumGPUBlocks)); err != nil {
		return err
	}
	if err := firstErr(validateClientCosts(e), validateVLLMSpec(sc)); err != nil {
		return err
	}
	return validateVLLMStartup(sc) // vLLM's own start-up checks (vllm_startup.go)
}

// validateClientCosts checks engine.tokenization and engine.detokenization.
func validateClientCosts(e *Engine) error {
	if tk := e.Tokenization; tk != nil {
		if err := firstErr(checkFloat("engine.tokenization.send_ms", "Tokenization.send_ms", tk.SendMs),
			checkFloat("engine.tokenization.per_token_us", "Tokenization.per_token_us", tk.PerTokenUs)); err != nil {
			return err
		}
	}
	if d := e.Detokenization; d != nil {
		return firstErr(checkFloat("engine.detokenization.base_us", "Detokenization.base_us", d.BaseUs),
			checkFloat("engine.detokenization.per_token_us", "Detokenization.per_token_us", d.PerTokenUs))
	}
	return nil
}

// validateQuantization checks engine.quantization (nil = absent, fine).
func validateQuantization(q *Quantization) error {
	if q == nil {
		return nil
	}
	if q.Weights != "" {
		if err := checkEnum("engine.quantization.weights", "Quantization.weights", q.Weights); err != nil {
			return err
		}
	}
	if q.KVCache == DtypeFP8INC {
		return errorf("engine.quantization.kv_cache", "%s is vLLM's FP8 KV cache for Intel Gaudi (HPU) accelerators, through Intel Neural Compressor; "+
			"the systems aisimulate simulates are GPUs: use fp8 (fp8_e4m3) or fp8_e5m2", quote(q.KVCache))
	}
	return checkEnum("engine.quantization.kv_cache", "Quantization.kv_cache", q.KVCache)
}

// versionLike reports whether v is MAJOR.MINOR[.PATCH[suffix]] with numeric
// major and minor parts.
func versionLike(v string) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts[:2] {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

func (s *Spec) validateTraffic() error {
	t := &s.Traffic
	if t.Benchmark != nil {
		return s.validateBenchmark()
	}
	if err := variantOf(sourceUnion, "traffic.source", t.Source.Type); err != nil {
		return err
	}
	if err := t.Source.Type.validate("traffic.source"); err != nil {
		return err
	}
	l := &t.Load
	if err := variantOf(loadUnion, "traffic.load", l.Mode); err != nil {
		return err
	}
	if n, _, prompt := l.Warmup(); prompt == WarmupPromptFirst || prompt == WarmupPromptLeading || prompt == WarmupPromptIsolated || n > 0 && l.Name() == LoadRate {
		if _, synthetic := t.Source.Type.(SyntheticSource); !synthetic {
			if prompt != "" && prompt != WarmupPromptSource {
				return errorf("traffic.load.warmup_prompt", "%s belongs to a synthetic source's warm-up; a %s source's warm-up is its first rows", prompt, t.Source.Name())
			}
			return errorf("traffic.load.warmup_requests", "a warm-up before a rate belongs to a synthetic source (a %s source's requests keep their own order)", t.Source.Name())
		}
	}
	if r, ok := l.Mode.(RateLoad); ok && (r.MaxConcurrency > 0 || r.SpanS > 0) {
		if _, synthetic := t.Source.Type.(SyntheticSource); !synthetic {
			field, what := "traffic.load.max_concurrency", "caps a synthetic source's arrivals"
			if r.MaxConcurrency == 0 {
				field, what = "traffic.load.span_s", "spreads a synthetic source's arrivals (its num_requests)"
			}
			return errorf(field, "%s (a %s source's requests keep their own timing and sessions)", what, t.Source.Name())
		}
	}
	if c, ok := l.Mode.(ConcurrencyLoad); ok && c.WarmupRequests > 0 {
		if _, sessions := t.Source.Type.(SessionsSource); sessions {
			return errorf("traffic.load.warmup_requests", "a sessions source has no warm-up phase")
		}
	}
	if st, ok := l.Mode.(StagedLoad); ok {
		src, synthetic := t.Source.Type.(SyntheticSource)
		if !synthetic {
			return errorf("traffic.load.mode", "stages send a synthetic source's requests, stage after stage; a %s source's requests keep their own timing", t.Source.Name())
		}
		if n := st.Requests(); src.NumRequests != n {
			return errorf("traffic.source.num_requests", "%d, but the stages send %d requests: give the stages' sum", src.NumRequests, n)
		}
	}
	if _, trace := l.Mode.(TraceLoad); trace && t.Source.TracePath() == "" {
		return errorf("traffic.load.mode", "trace timestamps need a trace source; use rate or concurrency for a %s source", t.Source.Name())
	}
	if err := firstErr(l.Mode.validate("traffic.load"),
		checkFloat("traffic.load.inter_turn_delay_ms", "Load.inter_turn_delay_ms", l.InterTurnDelayMs),
		checkFloat("traffic.load.request_timeout_ms", "Load.request_timeout_ms", l.RequestTimeoutMs)); err != nil {
		return err
	}
	if _, synthetic := t.Source.Type.(SyntheticSource); synthetic && l.InterTurnDelayMs != 0 {
		return errorf("traffic.load.inter_turn_delay_ms", "applies to the later turns of a session: a synthetic source has none")
	}
	if o := l.ResponseOverhead; o != nil {
		const ro = "traffic.load.response_overhead."
		if err := firstErr(checkFloat(ro+"base_ms", "ResponseOverhead.base_ms", o.BaseMs),
			checkFloat(ro+"per_output_token_us", "ResponseOverhead.per_output_token_us", o.PerOutputTokenUs),
			checkFloat(ro+"jitter_ms", "ResponseOverhead.jitter_ms", o.JitterMs)); err != nil {
			return err
		}
	}
	if err := checkInt("traffic.stop.max_requests", "Stop.max_requests", t.Stop.MaxRequests); err != nil {
		return err
	}
	if err := checkFloat("traffic.stop.max_duration_s", "Stop.max_duration_s", t.Stop.MaxDurationS); err != nil {
		return err
	}
	if g := t.Stop.GraceS; g != nil {
		if t.Stop.MaxDurationS == 0 {
			return errorf("traffic.stop.grace_s", "needs max_duration_s (the grace runs from its end)")
		}
		return checkFloat("traffic.stop.grace_s", "Stop.grace_s", *g)
	}
	return nil
}

func (s *Spec) validateExecution() error {
	if err := checkEnum("execution.mode", "Execution.mode", s.Execution.Mode); err != nil {
		return err
	}
	if g := s.Execution.MaxMemoryGB; g != nil {
		return checkFloat("execution.max_memory_gb", "Execution.max_memory_gb", *g)
	}
	return nil
}

// String is a one-line summary for logs.
func (s *Spec) String() string {
	workers := ""
	if d := s.Engine.Workers.Disaggregated; d != nil {
		workers = fmt.Sprintf("P %d×TP%d + D %d×TP%d", d.Prefill.Count, d.Prefill.TP, d.Decode.Count, d.Decode.TP)
	} else if a := s.Engine.Workers.Aggregated; a != nil {
		workers = fmt.Sprintf("%d×TP%d", a.Count, a.TP)
	}
	return fmt.Sprintf("%s on %s, %s, %s load of %s", s.Engine.Model, s.Engine.System, workers, s.Traffic.Load.Name(), s.Traffic.Source.Name())
}

func validatePool(path string, a *Pool) error {
	if err := firstErr(checkInt(path+".count", "Pool.count", a.Count), checkInt(path+".tp", "Pool.tp", a.TP),
		checkEnum(path+".placement", "Pool.placement", a.Placement)); err != nil {
		return err
	}
	if r := a.KVRouter; r != nil {
		if a.Placement != PlacementKVRouter {
			return errorf(path+".kv_router", "belongs to placement %s (placement is %s)", PlacementKVRouter, a.Placement)
		}
		kr := path + ".kv_router."
		if err := firstErr(checkFloat(kr+"kv_overlap_score_weight", "KVRouter.kv_overlap_score_weight", r.KVOverlapScoreWeight),
			checkFloat(kr+"router_temperature", "KVRouter.router_temperature", r.RouterTemperature),
			checkFloat(kr+"kv_event_lag_ms", "KVRouter.kv_event_lag_ms", r.KVEventLagMs)); err != nil {
			return err
		}
	}
	if dp := a.DataParallelSize; dp != nil {
		if err := checkInt(path+".data_parallel_size", "Pool.data_parallel_size", *dp); err != nil {
			return err
		}
		if a.TP**dp > MaxWorkerGPUs {
			return errorf(path+".data_parallel_size", "tp × data_parallel_size must be ≤ %d, got %d × %d", MaxWorkerGPUs, a.TP, *dp)
		}
	}
	if n := a.APIServerCount; n != nil && *n != 1 && *n != a.DP() {
		return errorf(path+".api_server_count", "must be 1 (one API server loop for all data-parallel ranks) or data_parallel_size (%d, one per rank), got %d", a.DP(), *n)
	}
	if a.All2AllBackend != "" {
		return checkEnum(path+".all2all_backend", "Pool.all2all_backend", a.All2AllBackend)
	}
	return nil
}

// APIServers is the number of API server event loops of one of the pool's
// servers: APIServerCount, else one per data-parallel rank.
func (a *Pool) APIServers() int {
	if a.APIServerCount == nil {
		return a.DP()
	}
	return *a.APIServerCount
}

// DP is the pool's data-parallel size: DataParallelSize, 1 when absent.
func (a *Pool) DP() int {
	if a.DataParallelSize == nil {
		return 1
	}
	return *a.DataParallelSize
}

// Magnitude limits. The virtual clock is int64 nanoseconds (292 years); these
// bounds keep every time the spec can produce far inside it, so that a huge but
// finite value is refused here, with its field, instead of wrapping the clock.
const (
	MaxDelayMs         = 1e9  // any single delay or cost in ms (11.6 days)
	MaxDelayUs         = 1e9  // any cost in µs (17 minutes)
	MaxDurationS       = 1e9  // stop.max_duration_s (31.7 years)
	MinRateRPS         = 1e-6 // one request per 11.6 days
	MinSpeedup         = 1e-6
	MinBandwidthGBPerS = 1e-3 // 1 MB/s
	MaxKVBytesPerToken = 1e9
	// MinMemoryGB and MaxMemoryGB bound execution.max_memory_gb: 10 MB (the
	// interpreter and runtime alone take more, so smaller can never run) and
	// 1e6 GB.
	MinMemoryGB = 0.01
	MaxMemoryGB = 1e6
	// MinEfficiency is the smallest roofline efficiency (0.1 % of peak).
	MinEfficiency = 1e-3
	// MinGammaCV and MaxGammaCV bound a gamma process's coefficient of
	// variation: its shape 1/cv² stays in [1e-6, 1e6], where the sampler
	// (Marsaglia–Tsang) is exact and the gaps are neither all equal nor all 0.
	MinGammaCV = 1e-3
	MaxGammaCV = 1e3
)

// checkIntOrUnset is checkInt where 0 stands for a field not given.
// checkFloatOrUnset is checkFloat for a field whose 0 means "left out"
// (decode refuses a 0 given).
func checkFloatOrUnset(path, key string, v float64) error {
	if v == 0 {
		return nil
	}
	return checkFloat(path, key, v)
}

// checkFloatPtr checks an optional number: nil (left out) passes.
func checkFloatPtr(path, key string, v *float64) error {
	if v == nil {
		return nil
	}
	return checkFloat(path, key, *v)
}

func checkIntOrUnset(path, key string, v int) error {
	if v == 0 {
		return nil
	}
	return checkInt(path, key, v)
}

// validateBenchmark checks traffic.benchmark: alone in traffic (it makes the
// source, load and stop), its options, and the traffic it makes (an error
// there names the benchmark, with the derived field it came from).
func (s *Spec) validateBenchmark() error {
	t := &s.Traffic
	for _, f := range []struct {
		key   string
		given bool
	}{{"source", t.Source.Type != nil}, {"load", t.Load.Mode != nil || t.Load != (Load{})},
		{"stop", t.Stop != (Stop{})}} {
		if f.given {
			return errorf("traffic."+f.key, "cannot be given with traffic.benchmark, which makes the requests, their sending and their end from the tool's options")
		}
	}
	if err := t.Benchmark.validate("traffic.benchmark"); err != nil {
		return err
	}
	c := s.Clone()
	c.ExpandBenchmark()
	if err := c.validateTraffic(); err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			return errorf("traffic.benchmark", "makes %s invalid: %s", ce.Field, ce.Msg)
		}
		return err
	}
	return nil
}

// ExpandBenchmark replaces a traffic.benchmark (validated) by the traffic it
// makes (Benchmark.Traffic) and returns the notes on how its options were
// read; a spec without one is left as it is (nil notes).
func (s *Spec) ExpandBenchmark() []string {
	b := s.Traffic.Benchmark
	if b == nil {
		return nil
	}
	tr, notes := b.Traffic()
	s.Traffic = tr
	return notes
}

// validatePoolVLLM checks the pools' vLLM-only fields: with another
// backend a pool's own batch limits (Pool.Scheduler) and api_server_count
// are refused, in that order, pool by pool; with vLLM each given limit is in
// range, and a pool's max_num_batched_tokens ≥ its max_num_seqs where both
// are known (vLLM's SchedulerConfig.verify_max_model_len; engine.scheduler's
// defaults are resolved later, ResolveSchedulerDefaults).
func (e *Engine) validatePoolVLLM() error {
	for _, pl := range e.Workers.pools() {
		o := pl.pool.Scheduler
		f := pl.path + ".scheduler"
		if e.Backend != BackendVLLM {
			if o != nil {
				return errorf(f, "holds vLLM's batch limits: with engine.backend %s give the pool's own %s", e.Backend, poolOptionsOf(e.Backend))
			}
			if pl.pool.APIServerCount != nil {
				return errorf(pl.path+".api_server_count", "is vLLM's --api-server-count, not an option of engine.backend %s", e.Backend)
			}
			continue
		}
		if o == nil {
			continue
		}
		if err := firstErr(checkIntOrUnset(f+".max_num_seqs", "PoolScheduler.max_num_seqs", o.MaxNumSeqs),
			checkIntOrUnset(f+".max_num_batched_tokens", "PoolScheduler.max_num_batched_tokens", o.MaxNumBatchedTokens)); err != nil {
			return err
		}
		if err := checkPoolLimits(pl, &e.Scheduler, ""); err != nil {
			return err
		}
	}
	return nil
}

// poolOptionsOf names where backend's pool-level batch limits go.
func poolOptionsOf(backend string) string {
	if backend == BackendTRTLLM {
		return "trtllm block (max_batch_size, max_num_tokens)"
	}
	return "sglang block (max_running_requests, chunked_prefill_size)"
}

// checkPoolLimits refuses a pool whose own limits (with engine.scheduler sc
// for those it leaves out) give max_num_batched_tokens < max_num_seqs, as
// vLLM refuses to start; a limit still unknown (0) is not checked. note ends
// the message.
func checkPoolLimits(pl namedPool, sc *Scheduler, note string) error {
	seqs, tokens := pl.pool.Limits(sc)
	if seqs == 0 || tokens == 0 || tokens >= seqs {
		return nil
	}
	if pl.pool.Scheduler.MaxNumBatchedTokens == 0 {
		return errorf(pl.path+".scheduler.max_num_seqs", "must be ≤ max_num_batched_tokens (%d, engine.scheduler's%s), got %d", tokens, note, seqs)
	}
	return errorf(pl.path+".scheduler.max_num_batched_tokens", "must be ≥ max_num_seqs (%d), got %d", seqs, tokens)
}
