package config

import (
	"fmt"
	"strings"
)

// Validate checks ranges and enumerations after defaults are filled. The first
// problem is returned as an *Error with its dotted path.
func (s *Spec) Validate() error {
	for _, check := range []func() error{s.validateEngine, s.validateTraffic, s.validateExecution, s.validateMagnitudes} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func oneOf(field, got string, allowed ...string) error {
	for _, a := range allowed {
		if got == a {
			return nil
		}
	}
	if got == "" {
		return errorf(field, "is required (one of %s)", strings.Join(allowed, ", "))
	}
	return errorf(field, "%s is not supported (one of %s)", quote(got), strings.Join(allowed, ", "))
}

func atLeast(field string, got, min int) error {
	if got < min {
		return errorf(field, "must be ≥ %d, got %d", min, got)
	}
	return nil
}

func positive(field string, got float64) error {
	if !(got > 0) {
		return errorf(field, "must be > 0, got %v", got)
	}
	return nil
}

func nonNegative(field string, p *float64) error {
	if p == nil {
		return nil
	}
	return notNegative(field, *p)
}

// required checks a number that has no default: absent (0) is "is required".
func required(field string, v float64) error {
	if v == 0 {
		return errorf(field, "is required (> 0)")
	}
	return positive(field, v)
}

// notNegative checks a cost or delay: ≥ 0 (the decoder already refused NaN and
// ±inf; validateMagnitudes bounds it above).
func notNegative(field string, v float64) error {
	if !(v >= 0) {
		return errorf(field, "must be ≥ 0, got %v", v)
	}
	return nil
}

func fraction(field string, p *float64) error {
	if p != nil && !(*p > 0 && *p <= 1) {
		return errorf(field, "must be in (0, 1], got %v", *p)
	}
	return nil
}

// efficiency checks a roofline efficiency: a fraction of peak in
// [MinEfficiency, 1] (a GPU reaching under 0.1 % of its peak is not a
// calibration, and 1e-300 made every pass time infinite).
func efficiency(field string, p *float64) error {
	if err := fraction(field, p); err != nil {
		return err
	}
	if p != nil && *p < MinEfficiency {
		return errorf(field, "must be in [%g, 1], got %v", MinEfficiency, *p)
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

func (s *Spec) validateEngine() error {
	e := &s.Engine
	if e.Model == "" {
		return errorf("engine.model", "is required (a Hugging Face name or a path to config.json)")
	}
	if e.System == "" {
		return errorf("engine.system", "is required (a built-in system such as h100_sxm, or a system YAML path)")
	}
	if err := oneOf("engine.backend", e.Backend, "vllm"); err != nil {
		return err
	}
	p := &e.Perf
	if err := oneOf("engine.perf.source", p.Source, "roofline", "linear", "aic"); err != nil {
		return err
	}
	if p.Source != "aic" && (p.Database != "" || p.BackendVersion != "") {
		return errorf("engine.perf", "database and backend_version belong to source aic, not %s", p.Source)
	}
	if err := validateQuantization(e.Quantization); err != nil {
		return err
	}
	switch p.Source {
	case "aic":
		if p.Database == "" {
			return errorf("engine.perf.database", "is required for source aic (the folder of the AIConfigurator perf tables)")
		}
		if !versionLike(p.BackendVersion) {
			return errorf("engine.perf.backend_version", "%s is not a version (want MAJOR.MINOR[.PATCH], for example \"0.24.0\")", quote(p.BackendVersion))
		}
		if p.BaseMs != nil || p.PerPrefillTokenMs != nil || p.PerDecodeSeqMs != nil {
			return errorf("engine.perf", "base_ms, per_prefill_token_ms and per_decode_seq_ms belong to source linear")
		}
		if p.ComputeEfficiency != nil || p.MemoryEfficiency != nil || p.LayerLatencyUs != nil {
			return errorf("engine.perf", "compute_efficiency, memory_efficiency and layer_latency_us belong to source roofline")
		}
		if err := firstErr(nonNegative("engine.perf.pass_overhead_us", p.PassOverheadUs),
			nonNegative("engine.perf.per_sequence_overhead_us", p.PerSequenceOverheadUs)); err != nil {
			return err
		}
	case "linear":
		names := []string{"base_ms", "per_prefill_token_ms", "per_decode_seq_ms"}
		for i, v := range []*float64{p.BaseMs, p.PerPrefillTokenMs, p.PerDecodeSeqMs} {
			if v == nil {
				return errorf("engine.perf."+names[i], "is required for source linear")
			}
		}
		if err := firstErr(nonNegative("engine.perf.base_ms", p.BaseMs),
			nonNegative("engine.perf.per_prefill_token_ms", p.PerPrefillTokenMs),
			nonNegative("engine.perf.per_decode_seq_ms", p.PerDecodeSeqMs)); err != nil {
			return err
		}
		if *p.BaseMs+*p.PerPrefillTokenMs+*p.PerDecodeSeqMs == 0 {
			return errorf("engine.perf", "a linear model with every coefficient 0 never advances the clock")
		}
		if p.ComputeEfficiency != nil || p.MemoryEfficiency != nil || p.PassOverheadUs != nil ||
			p.PerSequenceOverheadUs != nil || p.LayerLatencyUs != nil {
			return errorf("engine.perf", "compute_efficiency, memory_efficiency and layer_latency_us belong to source roofline, pass_overhead_us and per_sequence_overhead_us to roofline and aic")
		}
	case "roofline":
		if p.BaseMs != nil || p.PerPrefillTokenMs != nil || p.PerDecodeSeqMs != nil {
			return errorf("engine.perf", "base_ms, per_prefill_token_ms and per_decode_seq_ms belong to source linear")
		}
		if err := firstErr(efficiency("engine.perf.compute_efficiency", p.ComputeEfficiency),
			efficiency("engine.perf.memory_efficiency", p.MemoryEfficiency),
			nonNegative("engine.perf.pass_overhead_us", p.PassOverheadUs),
			nonNegative("engine.perf.per_sequence_overhead_us", p.PerSequenceOverheadUs),
			nonNegative("engine.perf.layer_latency_us", p.LayerLatencyUs)); err != nil {
			return err
		}
	}
	if w := e.Workers; w.Disaggregated != nil {
		if w.Aggregated != nil {
			return errorf("engine.workers", "give aggregated or disaggregated, not both")
		}
		d := w.Disaggregated
		if err := firstErr(validatePool("engine.workers.disaggregated.prefill", &d.Prefill),
			validatePool("engine.workers.disaggregated.decode", &d.Decode),
			required("engine.workers.disaggregated.kv_transfer.bandwidth_gb_per_s", d.KVTransfer.BandwidthGBPerS),
			notNegative("engine.workers.disaggregated.kv_transfer.latency_ms", d.KVTransfer.LatencyMs)); err != nil {
			return err
		}
		if d.KVTransfer.KVBytesPerToken < 0 {
			return errorf("engine.workers.disaggregated.kv_transfer.kv_bytes_per_token", "must be ≥ 0, got %d", d.KVTransfer.KVBytesPerToken)
		}
	} else if err := validatePool("engine.workers.aggregated", w.Aggregated); err != nil {
		return err
	}
	sc := &e.Scheduler
	if err := firstErr(atLeast("engine.scheduler.max_num_seqs", sc.MaxNumSeqs, 1),
		atLeast("engine.scheduler.max_num_batched_tokens", sc.MaxNumBatchedTokens, 1),
		atLeast("engine.scheduler.block_size", sc.BlockSize, 1),
		atLeast("engine.scheduler.max_model_len", sc.MaxModelLen, 0),
		atLeast("engine.scheduler.num_gpu_blocks", sc.NumGPUBlocks, 0)); err != nil {
		return err
	}
	if tk := e.Tokenization; tk != nil {
		if err := notNegative("engine.tokenization.send_ms", tk.SendMs); err != nil {
			return err
		}
	}
	if d := e.Detokenization; d != nil {
		if err := firstErr(notNegative("engine.detokenization.base_us", d.BaseUs),
			notNegative("engine.detokenization.per_token_us", d.PerTokenUs)); err != nil {
			return err
		}
	}
	if sc.BlockSize > MaxBlockSize {
		return errorf("engine.scheduler.block_size", "must be ≤ %d tokens, got %d", MaxBlockSize, sc.BlockSize)
	}
	if sc.NumGPUBlocks > MaxGPUBlocks {
		return errorf("engine.scheduler.num_gpu_blocks", "must be ≤ %d, got %d", MaxGPUBlocks, sc.NumGPUBlocks)
	}
	for _, c := range []struct {
		field    string
		got, max int
	}{{"engine.scheduler.max_num_seqs", sc.MaxNumSeqs, MaxNumSeqs},
		{"engine.scheduler.max_num_batched_tokens", sc.MaxNumBatchedTokens, MaxBatchedTokens},
		{"engine.scheduler.max_model_len", sc.MaxModelLen, MaxModelLen}} {
		if c.got > c.max {
			return errorf(c.field, "must be ≤ %d, got %d", c.max, c.got)
		}
	}
	if sc.MaxNumBatchedTokens < sc.MaxNumSeqs {
		// vLLM's SchedulerConfig refuses this too: a pass could not hold one
		// token for every running sequence.
		return errorf("engine.scheduler.max_num_batched_tokens", "must be ≥ max_num_seqs (%d), got %d", sc.MaxNumSeqs, sc.MaxNumBatchedTokens)
	}
	if !(sc.GPUMemoryUtilization > 0 && sc.GPUMemoryUtilization <= 1) {
		return errorf("engine.scheduler.gpu_memory_utilization", "must be in (0, 1], got %v", sc.GPUMemoryUtilization)
	}
	return nil
}

// validateQuantization checks engine.quantization (nil = absent, fine).
func validateQuantization(q *Quantization) error {
	if q == nil {
		return nil
	}
	if q.Weights != "" {
		if err := oneOf("engine.quantization.weights", q.Weights, "bf16", "fp8", "fp8_block", "nvfp4"); err != nil {
			return err
		}
	}
	return oneOf("engine.quantization.kv_cache", q.KVCache, "auto", "bf16", "fp8")
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

func (s *Spec) validateDist(field string, d *Dist, min int) error {
	if d == nil {
		return errorf(field, "is required for a synthetic source")
	}
	switch d.Kind {
	case "fixed":
		if d.Min != 0 || d.Max != 0 || d.Mean != 0 || d.Std != 0 {
			return errorf(field, "kind fixed takes only value (min, max, mean and std belong to uniform, normal, lognormal)")
		}
		return atLeast(field+".value", d.Value, min)
	case "uniform":
		if d.Value != 0 || d.Mean != 0 || d.Std != 0 {
			return errorf(field, "kind uniform takes min and max only")
		}
		if err := atLeast(field+".min", d.Min, min); err != nil {
			return err
		}
		if d.Max < d.Min {
			return errorf(field+".max", "must be ≥ min (%d), got %d", d.Min, d.Max)
		}
	case "normal", "lognormal":
		if d.Value != 0 {
			return errorf(field+".value", "belongs to kind fixed")
		}
		if err := positive(field+".mean", d.Mean); err != nil {
			return err
		}
		if d.Min < min {
			return errorf(field+".min", "must be ≥ %d, got %d (a %s distribution needs min and max to bound it)", min, d.Min, d.Kind)
		}
		if !(d.Std >= 0) {
			return errorf(field+".std", "must be ≥ 0, got %v", d.Std)
		}
		if d.Max < d.Min || d.Max < 1 {
			return errorf(field+".max", "must be ≥ min and ≥ 1, got %d", d.Max)
		}
	default:
		return oneOf(field+".kind", d.Kind, "fixed", "uniform", "normal", "lognormal")
	}
	return nil
}

func (s *Spec) validateTraffic() error {
	t := &s.Traffic
	src := &t.Source
	if err := oneOf("traffic.source.type", src.Type, "mooncake", "azure", "llmservingsim", "synthetic", "sessions"); err != nil {
		return err
	}
	if src.Type != "synthetic" && src.Dataset != nil {
		return errorf("traffic.source.dataset", "belongs to a synthetic source, not %s", src.Type)
	}
	if src.Type != "sessions" && (src.NumSessions != 0 || src.Turns != nil) {
		return errorf("traffic.source", "num_sessions and turns belong to a sessions source, not %s", src.Type)
	}
	if src.Type == "sessions" {
		if src.Path != "" {
			return errorf("traffic.source.path", "a sessions source reads no file")
		}
		if src.NumRequests != 0 {
			return errorf("traffic.source.num_requests", "a sessions source takes num_sessions and turns")
		}
		if err := firstErr(atLeast("traffic.source.num_sessions", src.NumSessions, 1),
			s.validateDist("traffic.source.turns", src.Turns, 1),
			s.validateDist("traffic.source.isl", src.ISL, 1),
			s.validateDist("traffic.source.osl", src.OSL, 0)); err != nil {
			return err
		}
	} else if src.Type == "synthetic" {
		if src.Path != "" {
			return errorf("traffic.source.path", "a synthetic source reads no file")
		}
		if err := firstErr(atLeast("traffic.source.num_requests", src.NumRequests, 1),
			s.validateDist("traffic.source.isl", src.ISL, 1),
			s.validateDist("traffic.source.osl", src.OSL, 0)); err != nil {
			return err
		}
		if d := src.Dataset; d != nil {
			if err := firstErr(atLeast("traffic.source.dataset.entries", d.Entries, 1),
				oneOf("traffic.source.dataset.sampling", d.Sampling, "sequential", "random", "shuffle")); err != nil {
				return err
			}
			if d.Entries > MaxDatasetEntries {
				return errorf("traffic.source.dataset.entries", "must be ≤ %d, got %d", MaxDatasetEntries, d.Entries)
			}
		}
	} else {
		if src.Path == "" {
			return errorf("traffic.source.path", "is required for a %s trace", src.Type)
		}
		if src.NumRequests != 0 || src.ISL != nil || src.OSL != nil {
			return errorf("traffic.source", "num_requests, isl and osl belong to a synthetic source; a %s trace has its own", src.Type)
		}
	}
	l := &t.Load
	if err := oneOf("traffic.load.mode", l.Mode, "trace", "rate", "concurrency"); err != nil {
		return err
	}
	if err := positive("traffic.load.speedup", l.Speedup); err != nil {
		return err
	}
	switch l.Mode {
	case "trace":
		if src.Type == "synthetic" || src.Type == "sessions" {
			return errorf("traffic.load.mode", "trace timestamps need a trace source; use rate or concurrency for a %s source", src.Type)
		}
	case "rate":
		if err := firstErr(positive("traffic.load.rate_rps", l.RateRPS),
			oneOf("traffic.load.arrival", l.Arrival, "poisson", "constant", "gamma")); err != nil {
			return err
		}
		if l.Arrival == "gamma" {
			if err := positive("traffic.load.cv", l.CV); err != nil {
				return err
			}
			if l.CV < MinGammaCV || l.CV > MaxGammaCV {
				return errorf("traffic.load.cv", "must be in [%g, %g], got %g (a gamma process's shape is 1/cv²; below %g the arrivals are a constant rate: use arrival: constant)",
					MinGammaCV, MaxGammaCV, l.CV, MinGammaCV)
			}
		}
	case "concurrency":
		if err := atLeast("traffic.load.concurrency", l.Concurrency, 1); err != nil {
			return err
		}
		if l.Concurrency > MaxConcurrency {
			return errorf("traffic.load.concurrency", "must be ≤ %d, got %d", MaxConcurrency, l.Concurrency)
		}
	}
	if l.Mode != "rate" && (l.RateRPS != 0 || l.Arrival != "" || l.CV != 0) {
		return errorf("traffic.load", "rate_rps, arrival and cv belong to mode rate, not %s", l.Mode)
	}
	if l.Mode != "concurrency" && l.Concurrency != 0 {
		return errorf("traffic.load.concurrency", "belongs to mode concurrency, not %s", l.Mode)
	}
	if err := firstErr(notNegative("traffic.load.inter_turn_delay_ms", l.InterTurnDelayMs),
		notNegative("traffic.load.request_timeout_ms", l.RequestTimeoutMs)); err != nil {
		return err
	}
	if o := l.ResponseOverhead; o != nil {
		if err := firstErr(notNegative("traffic.load.response_overhead.base_ms", o.BaseMs),
			notNegative("traffic.load.response_overhead.per_output_token_us", o.PerOutputTokenUs),
			notNegative("traffic.load.response_overhead.jitter_ms", o.JitterMs)); err != nil {
			return err
		}
	}
	if err := atLeast("traffic.stop.max_requests", t.Stop.MaxRequests, 0); err != nil {
		return err
	}
	if !(t.Stop.MaxDurationS >= 0) {
		return errorf("traffic.stop.max_duration_s", "must be ≥ 0, got %v", t.Stop.MaxDurationS)
	}
	return nil
}

func (s *Spec) validateExecution() error {
	if s.Execution.Mode != "offline" {
		return errorf("execution.mode", "%s is not supported: the core runs offline replays only", quote(s.Execution.Mode))
	}
	return nil
}

// String is a one-line summary for logs.
func (s *Spec) String() string {
	workers := ""
	if d := s.Engine.Workers.Disaggregated; d != nil {
		workers = fmt.Sprintf("P %d×TP%d + D %d×TP%d", d.Prefill.Count, d.Prefill.TP, d.Decode.Count, d.Decode.TP)
	} else {
		a := s.Engine.Workers.Aggregated
		workers = fmt.Sprintf("%d×TP%d", a.Count, a.TP)
	}
	return fmt.Sprintf("%s on %s, %s, %s load of %s", s.Engine.Model, s.Engine.System, workers, s.Traffic.Load.Mode, s.Traffic.Source.Type)
}

func validatePool(path string, a *Pool) error {
	if err := firstErr(atLeast(path+".count", a.Count, 1), atLeast(path+".tp", a.TP, 1),
		oneOf(path+".placement", a.Placement, "round_robin", "least_outstanding")); err != nil {
		return err
	}
	if a.Count > MaxWorkers {
		return errorf(path+".count", "must be ≤ %d, got %d", MaxWorkers, a.Count)
	}
	if a.TP > 8 {
		return errorf(path+".tp", "must be ≤ 8 (one node), got %d", a.TP)
	}
	return nil
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
	// MinEfficiency is the smallest roofline efficiency (0.1 % of peak).
	MinEfficiency = 1e-3
	// MinGammaCV and MaxGammaCV bound a gamma process's coefficient of
	// variation: its shape 1/cv² stays in [1e-6, 1e6], where the sampler
	// (Marsaglia–Tsang) is exact and the gaps are neither all equal nor all 0.
	MinGammaCV = 1e-3
	MaxGammaCV = 1e3
)

// validateMagnitudes refuses huge finite values (see the limits above).
func (s *Spec) validateMagnitudes() error {
	type lim struct {
		field    string
		v        float64
		min, max float64
	}
	var ls []lim
	add := func(field string, v, min, max float64) { ls = append(ls, lim{field, v, min, max}) }
	opt := func(field string, p *float64, max float64) {
		if p != nil {
			add(field, *p, 0, max)
		}
	}
	e, l := &s.Engine, &s.Traffic.Load
	opt("engine.perf.base_ms", e.Perf.BaseMs, MaxDelayMs)
	opt("engine.perf.per_prefill_token_ms", e.Perf.PerPrefillTokenMs, MaxDelayMs/1e4)
	opt("engine.perf.per_decode_seq_ms", e.Perf.PerDecodeSeqMs, MaxDelayMs/1e4)
	opt("engine.perf.pass_overhead_us", e.Perf.PassOverheadUs, MaxDelayUs)
	opt("engine.perf.per_sequence_overhead_us", e.Perf.PerSequenceOverheadUs, MaxDelayUs/1e4)
	opt("engine.perf.layer_latency_us", e.Perf.LayerLatencyUs, MaxDelayUs/1e4)
	if t := e.Tokenization; t != nil {
		add("engine.tokenization.send_ms", t.SendMs, 0, MaxDelayMs)
	}
	if d := e.Detokenization; d != nil {
		add("engine.detokenization.base_us", d.BaseUs, 0, MaxDelayUs)
		add("engine.detokenization.per_token_us", d.PerTokenUs, 0, MaxDelayUs/1e4)
	}
	if d := e.Workers.Disaggregated; d != nil {
		add("engine.workers.disaggregated.kv_transfer.bandwidth_gb_per_s", d.KVTransfer.BandwidthGBPerS, MinBandwidthGBPerS, 1e9)
		add("engine.workers.disaggregated.kv_transfer.latency_ms", d.KVTransfer.LatencyMs, 0, MaxDelayMs)
		add("engine.workers.disaggregated.kv_transfer.kv_bytes_per_token", float64(d.KVTransfer.KVBytesPerToken), 0, MaxKVBytesPerToken)
	}
	if o := l.ResponseOverhead; o != nil {
		add("traffic.load.response_overhead.base_ms", o.BaseMs, 0, MaxDelayMs)
		add("traffic.load.response_overhead.per_output_token_us", o.PerOutputTokenUs, 0, MaxDelayUs/1e4)
		add("traffic.load.response_overhead.jitter_ms", o.JitterMs, 0, MaxDelayMs)
	}
	add("traffic.load.inter_turn_delay_ms", l.InterTurnDelayMs, 0, MaxDelayMs)
	add("traffic.load.request_timeout_ms", l.RequestTimeoutMs, 0, MaxDelayMs)
	add("traffic.load.speedup", l.Speedup, MinSpeedup, 1e12)
	if l.Mode == "rate" {
		add("traffic.load.rate_rps", l.RateRPS, MinRateRPS, 1e9)
	}
	add("traffic.stop.max_duration_s", s.Traffic.Stop.MaxDurationS, 0, MaxDurationS)
	for _, x := range ls {
		if x.v < x.min || x.v > x.max {
			return errorf(x.field, "must be in [%g, %g], got %g (the virtual clock is int64 ns)", x.min, x.max, x.v)
		}
	}
	return nil
}
