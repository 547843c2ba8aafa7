package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The ranges of the numeric fields, in one table that Validate checks
// values against (checkInt, checkFloat) and Schema publishes (minimum,
// maximum, exclusiveMinimum; an integer's list of choices as an enum), so that the published schema and the checks
// cannot disagree. A field is named by its struct's Go type and its JSON
// key ("Scheduler.max_num_seqs"), as the schema walks the types. Conditions
// between fields (max_num_batched_tokens ≥ max_num_seqs, a length's max ≥
// its min, warm-up below the request count) stay in Validate alone: a JSON
// Schema cannot express them.

// rangeKind is how a range is checked and worded.
type rangeKind uint8

const (
	// intRange: an integer in [min, max] ("must be ≥ 1, got 0", "must be ≤
	// 1024, got 1025"); noMax leaves it unbounded above.
	intRange rangeKind = iota
	// magnitudeRange: a cost, delay, rate or cv in [min, max] (costUpTo,
	// within, a gamma cv): a value ≤ 0 (below 0 when min is 0) is refused
	// for its sign first.
	magnitudeRange
	// efficiencyRange: a roofline efficiency, a fraction of peak: (0, 1]
	// first, then [min, 1] (min is MinEfficiency: a GPU reaching under 0.1 %
	// of its peak is not a calibration, and 1e-300 made every pass time
	// infinite).
	efficiencyRange
	// numberRange: a number in [min, max] ((min, … when openMin; unbounded
	// above when noMax).
	numberRange
	// ownCheck: published only; the field's own code checks it together with
	// what the table cannot hold (a gamma cv only for arrival gamma, a
	// length's minimum, 1 for prompts, turns and outputs (MinOutputTokens),
	// which the length's owner checks).
	ownCheck
)

// fieldRange is one field's range.
type fieldRange struct {
	kind     rangeKind
	min, max float64
	noMax    bool   // no upper bound
	openMin  bool   // min itself is refused (exclusiveMinimum)
	unit     string // after the maximum or the interval in the message (" GB")
	// choices: an integer's allowed values (min and max are the first and
	// last), checked by checkInt and published as the schema's enum.
	choices []int
	// why: in parentheses after the choices (whose list it is) or after the
	// value (what bounds it).
	why string
}

func ints(min, max float64, unit string) fieldRange {
	return fieldRange{kind: intRange, min: min, max: max, unit: unit}
}
func atLeastInt(min float64) fieldRange { return fieldRange{kind: intRange, min: min, noMax: true} }
func costUpTo(max float64) fieldRange   { return within(0, max) }

// within: a cost, delay or rate in [min, max]: huge finite values would wrap
// the int64-ns virtual clock.
func within(min, max float64) fieldRange {
	return fieldRange{kind: magnitudeRange, min: min, max: max, why: "the virtual clock is int64 ns"}
}

// oneOfInts: an integer from choices (ascending), e.g. vLLM's --block-size.
func oneOfInts(choices []int, why string) fieldRange {
	return fieldRange{kind: intRange, min: float64(choices[0]), max: float64(choices[len(choices)-1]),
		choices: choices, why: why}
}

// ranges: every numeric field with a range that holds whatever the rest of
// the spec says.
var ranges = map[string]fieldRange{
	"Scheduler.max_num_seqs":               ints(1, MaxNumSeqs, ""),
	"Scheduler.max_num_batched_tokens":     ints(1, MaxBatchedTokens, ""),
	"PoolScheduler.max_num_seqs":           ints(1, MaxNumSeqs, ""),
	"PoolScheduler.max_num_batched_tokens": ints(1, MaxBatchedTokens, ""),
	"Scheduler.block_size":                 oneOfInts(BlockSizes, "vLLM's --block-size choices"),
	"Scheduler.max_model_len":              ints(0, MaxModelLen, ""),
	"Scheduler.num_gpu_blocks":             ints(0, MaxGPUBlocks, ""),
	"Scheduler.gpu_memory_utilization":     {kind: numberRange, min: 0, max: 1, openMin: true},

	"TRTLLM.max_batch_size":                            ints(1, MaxNumSeqs, ""),
	"TRTLLM.max_num_tokens":                            ints(1, MaxBatchedTokens, ""),
	"TRTLLM.max_seq_len":                               ints(1, MaxModelLen, ""),
	"TRTLLMKVCacheConfig.free_gpu_memory_fraction":     {kind: numberRange, min: 0, max: 1, openMin: true},
	"TRTLLMKVCacheConfig.tokens_per_block":             oneOfInts(TRTLLMTokensPerBlock, "a power of two: TensorRT-LLM's KV cache block layout"),
	"TRTLLMKVCacheConfig.max_tokens":                   ints(1, MaxBatchedTokens, ""),
	"TRTLLMCUDAGraphConfig.max_batch_size":             ints(0, MaxNumSeqs, ""), // 0: TensorRT-LLM\'s 128
	"TRTLLM.stream_interval":                           ints(1, MaxNumSeqs, ""),
	"TRTLLM.batch_wait_timeout_iters":                  ints(0, MaxNumSeqs, ""),
	"TRTLLM.batch_wait_max_tokens_ratio":               {kind: numberRange, min: 0, max: 1},
	"TRTLLM.moe_expert_parallel_size":                  ints(1, MaxTP, ""), // and dividing the pool's tp (replay)
	"TRTLLMMoEConfig.max_num_tokens":                   ints(1, MaxBatchedTokens, ""),
	"TRTLLMAttentionDPConfig.timeout_iters":            ints(0, MaxNumSeqs, ""),
	"TRTLLMAttentionDPConfig.batching_wait_iters":      ints(0, MaxNumSeqs, ""),
	"TRTLLMSpeculativeConfig.num_nextn_predict_layers": ints(1, MaxMTPLayers, ""),
	"TRTLLMSpeculativeConfig.acceptance_rate":          {kind: numberRange, min: 0, max: 1},
	"VLLMSpeculativeConfig.num_speculative_tokens":     ints(1, MaxMTPLayers, ""),
	"VLLMSpeculativeConfig.acceptance_rate":            {kind: numberRange, min: 0, max: 1},
	"SGLang.max_running_requests":                      ints(1, MaxNumSeqs, ""),
	"SGLang.chunked_prefill_size":                      ints(1, MaxBatchedTokens, ""), // or -1: no chunking (validateSGLang)
	"SGLang.max_prefill_tokens":                        ints(1, MaxBatchedTokens, ""),
	"SGLang.max_total_tokens":                          ints(1, MaxGPUBlocks, ""),
	"SGLang.mem_fraction_static":                       {kind: numberRange, min: 0, max: 1, openMin: true},
	"SGLang.max_mamba_cache_size":                      ints(1, MaxNumSeqs, ""),
	"SGLang.mamba_full_memory_ratio":                   {kind: numberRange, min: 0, max: 1e3, openMin: true},
	"SGLang.page_size":                                 ints(1, MaxSGLangPageSize, ""),
	"SGLang.context_length":                            ints(1, MaxModelLen, ""),
	"SGLang.schedule_conservativeness":                 {kind: numberRange, min: 0, max: 1e3, openMin: true},
	"SGLang.cuda_graph_max_bs":                         ints(1, MaxNumSeqs, ""),
	"SGLang.ep_size":                                   ints(1, MaxTP, ""), // and dividing the pool's GPUs (replay)
	"SGLang.speculative_num_steps":                     ints(1, MaxMTPLayers, ""),
	"SGLang.speculative_acceptance_rate":               {kind: numberRange, min: 0, max: 1},
	"SGLang.eager_launch_us_per_layer":                 costUpTo(MaxDelayUs / 1e4),
	"SGLang.stream_interval":                           ints(1, MaxNumSeqs, ""),

	"Pool.count":              ints(1, MaxWorkers, ""),
	"Pool.tp":                 ints(1, MaxTP, ""), // and ≤ the system's GPUs per node (replay)
	"Pool.data_parallel_size": atLeastInt(1),      // and tp × data_parallel_size ≤ MaxWorkerGPUs

	"KVRouter.kv_overlap_score_weight": {kind: numberRange, min: 0, max: 1e6},
	"KVRouter.router_temperature":      {kind: numberRange, min: 0, max: 1e6},
	"KVRouter.kv_event_lag_ms":         costUpTo(MaxDelayMs),

	"KVTransfer.bandwidth_gb_per_s": within(MinBandwidthGBPerS, 1e9),
	"KVTransfer.latency_ms":         costUpTo(MaxDelayMs),
	"KVTransfer.kv_bytes_per_token": costUpTo(MaxKVBytesPerToken),

	"Tokenization.send_ms":        costUpTo(MaxDelayMs),
	"Tokenization.per_token_us":   costUpTo(MaxDelayUs / 1e4),
	"Detokenization.base_us":      costUpTo(MaxDelayUs),
	"Detokenization.per_token_us": costUpTo(MaxDelayUs / 1e4),

	"RooflinePerf.compute_efficiency":       {kind: efficiencyRange, min: MinEfficiency, max: 1},
	"RooflinePerf.memory_efficiency":        {kind: efficiencyRange, min: MinEfficiency, max: 1},
	"RooflinePerf.pass_overhead_us":         costUpTo(MaxDelayUs),
	"RooflinePerf.per_sequence_overhead_us": costUpTo(MaxDelayUs / 1e4),
	"RooflinePerf.layer_latency_us":         costUpTo(MaxDelayUs / 1e4),
	"RooflinePerf.moe_latency_us":           costUpTo(MaxDelayUs / 1e4),
	"AICPerf.pass_overhead_us":              costUpTo(MaxDelayUs),
	"AICPerf.per_sequence_overhead_us":      costUpTo(MaxDelayUs / 1e4),
	"LinearPerf.base_ms":                    costUpTo(MaxDelayMs),
	"LinearPerf.per_prefill_token_ms":       costUpTo(MaxDelayMs / 1e4),
	"LinearPerf.per_decode_seq_ms":          costUpTo(MaxDelayMs / 1e4),

	"SyntheticSource.num_requests": atLeastInt(1),
	"SessionsSource.num_sessions":  atLeastInt(1),
	"Dataset.entries":              ints(1, MaxDatasetEntries, ""),
	"DatasetPrefix.groups":         ints(1, MaxDatasetEntries, ""),
	"DatasetPrefix.tokens":         ints(1, 1<<30, ""),

	"Load.inter_turn_delay_ms":             costUpTo(MaxDelayMs),
	"Load.request_timeout_ms":              costUpTo(MaxDelayMs),
	"ResponseOverhead.base_ms":             costUpTo(MaxDelayMs),
	"ResponseOverhead.per_output_token_us": costUpTo(MaxDelayUs / 1e4),
	"ResponseOverhead.jitter_ms":           costUpTo(MaxDelayMs),
	"TraceLoad.speedup":                    within(MinSpeedup, 1e12),
	"RateLoad.rate_rps":                    within(MinRateRPS, 1e9),
	"RateLoad.cv":                          {kind: ownCheck, min: 0, max: MaxGammaCV},
	"RateLoad.warmup_requests":             atLeastInt(0),
	"RateLoad.warmup_concurrency":          ints(0, MaxConcurrency, ""),
	"RateLoad.max_concurrency":             ints(0, MaxConcurrency, ""),
	"RateLoad.span_s":                      costUpTo(MaxDurationS),
	"ConcurrencyLoad.concurrency":          ints(1, MaxConcurrency, ""),
	"ConcurrencyLoad.warmup_requests":      atLeastInt(0),
	"StagedLoad.interval_s":                costUpTo(MaxDelayMs / 1e3),
	"StagedLoad.lead_s":                    costUpTo(MaxDelayMs / 1e3),
	"StagedLoad.poll_s":                    costUpTo(MaxDelayMs / 1e3),

	"AIPerfBenchmark.concurrency":                      ints(1, MaxConcurrency, ""),
	"AIPerfBenchmark.request_rate":                     within(MinRateRPS, 1e9),
	"AIPerfBenchmark.request_count":                    atLeastInt(1),
	"AIPerfBenchmark.warmup_request_count":             atLeastInt(0),
	"AIPerfBenchmark.benchmark_duration":               costUpTo(MaxDurationS),
	"AIPerfBenchmark.synthetic_input_tokens_mean":      atLeastInt(1),
	"AIPerfBenchmark.synthetic_input_tokens_stddev":    {kind: numberRange, min: 0, max: 1e9},
	"AIPerfBenchmark.output_tokens_mean":               atLeastInt(MinOutputTokens),
	"AIPerfBenchmark.output_tokens_stddev":             {kind: numberRange, min: 0, max: 1e9},
	"AIPerfBenchmark.num_dataset_entries":              ints(1, MaxDatasetEntries, ""),
	"AIPerfBenchmark.num_conversations":                ints(1, MaxDatasetEntries, ""),
	"AIPerfBenchmark.arrival_smoothness":               {kind: numberRange, min: 1 / (MaxGammaCV * MaxGammaCV), max: 1 / (MinGammaCV * MinGammaCV)},
	"GenAIPerfBenchmark.concurrency":                   ints(1, MaxConcurrency, ""),
	"GenAIPerfBenchmark.request_count":                 atLeastInt(1),
	"GenAIPerfBenchmark.warmup_request_count":          atLeastInt(0),
	"GenAIPerfBenchmark.synthetic_input_tokens_mean":   atLeastInt(1),
	"GenAIPerfBenchmark.synthetic_input_tokens_stddev": {kind: numberRange, min: 0, max: 1e9},
	"GenAIPerfBenchmark.output_tokens_mean":            atLeastInt(MinOutputTokens),
	"GenAIPerfBenchmark.output_tokens_stddev":          {kind: numberRange, min: 0, max: 1e9},
	"GenAIPerfBenchmark.num_dataset_entries":           ints(1, MaxDatasetEntries, ""),
	"SGLangBenchServing.random_input_len":              atLeastInt(1),
	"SGLangBenchServing.random_output_len":             atLeastInt(MinOutputTokens),
	"SGLangBenchServing.random_range_ratio":            {kind: numberRange, min: -1e9, max: 1e9},
	"SGLangBenchServing.num_prompts":                   atLeastInt(1),
	"SGLangBenchServing.max_concurrency":               ints(0, MaxConcurrency, ""),
	"SGLangBenchServing.request_rate":                  within(MinRateRPS, 1e9),
	"SGLangBenchServing.warmup_requests":               atLeastInt(0),
	"ConcurrencyLoad.warmup_max_output_tokens":         atLeastInt(0),
	"RateLoad.warmup_max_output_tokens":                atLeastInt(0),
	"VLLMBenchServe.random_input_len":                  atLeastInt(1),
	"VLLMBenchServe.random_output_len":                 atLeastInt(MinOutputTokens),
	"VLLMBenchServe.random_range_ratio":                {kind: numberRange, min: 0, max: 1},
	"VLLMBenchServe.random_prefix_len":                 atLeastInt(0),
	"VLLMBenchServe.num_prompts":                       atLeastInt(1),
	"VLLMBenchServe.max_concurrency":                   ints(0, MaxConcurrency, ""),
	"VLLMBenchServe.request_rate":                      within(MinRateRPS, 1e9),
	"VLLMBenchServe.burstiness":                        {kind: numberRange, min: 1.0 / (MaxGammaCV * MaxGammaCV), max: 1e6},
	"VLLMBenchServe.num_warmups":                       atLeastInt(0),
	"VLLMBenchServe.ready_check_timeout_sec":           costUpTo(MaxDurationS),
	"Stop.max_requests":                                atLeastInt(0),
	"MooncakeSource.isl_block_size":                    atLeastInt(1),
	"Stop.max_duration_s":                              costUpTo(MaxDurationS),
	"Stop.grace_s":                                     costUpTo(MaxDurationS),
	"Execution.max_memory_gb":                          {kind: numberRange, min: MinMemoryGB, max: MaxMemoryGB, unit: " GB"},
	"FixedLength.value":                                {kind: ownCheck, min: 1, noMax: true},
	"UniformLength.min":                                {kind: ownCheck, min: 1, noMax: true},
	"UniformLength.max":                                {kind: ownCheck, min: 1, noMax: true},
	"NormalLength.min":                                 {kind: ownCheck, min: 1, noMax: true},
	"NormalLength.max":                                 {kind: ownCheck, min: 1, noMax: true},
	"NormalLength.mean":                                {kind: numberRange, min: 0, openMin: true, noMax: true},
	"NormalLength.std":                                 {kind: numberRange, min: 0, noMax: true},
	"LognormalLength.min":                              {kind: ownCheck, min: 1, noMax: true},
	"LognormalLength.max":                              {kind: ownCheck, min: 1, noMax: true},
	"LognormalLength.mean":                             {kind: numberRange, min: 0, openMin: true, noMax: true},
	"LognormalLength.std":                              {kind: numberRange, min: 0, noMax: true},
}

// rangeOf is the range of key; a key the table lacks is a bug in this package.
func rangeOf(key string) fieldRange {
	r, ok := ranges[key]
	if !ok {
		panic("config: no range for " + key)
	}
	return r
}

// checkInt checks an integer field against its range (key in ranges).
func checkInt(field, key string, got int) error {
	r := rangeOf(key)
	if r.kind != intRange {
		panic("config: " + key + " is not an integer range")
	}
	if r.choices != nil {
		if !slices.Contains(r.choices, got) {
			return errorf(field, "must be one of %s (%s), got %d", joinInts(r.choices), r.why, got)
		}
		return nil
	}
	if float64(got) < r.min {
		return errorf(field, "must be ≥ %d, got %d", int64(r.min), got)
	}
	if !r.noMax && float64(got) > r.max {
		return errorf(field, "must be ≤ %d%s, got %d", int64(r.max), r.unit, got)
	}
	return nil
}

// checkFloat checks a number field against its range (key in ranges).
func checkFloat(field, key string, v float64) error {
	return rangeOf(key).checkNumber(field, key, v)
}

// checkNumber checks a number field against r, a range of key.
func (r fieldRange) checkNumber(field, key string, v float64) error {
	switch r.kind {
	case magnitudeRange:
		if err := (fieldRange{openMin: r.min > 0, noMax: true}).check(field, v); err != nil {
			return err
		}
	case efficiencyRange:
		if err := (fieldRange{max: 1, openMin: true}).check(field, v); err != nil {
			return err
		}
	case numberRange:
	default:
		panic("config: " + key + " is not checked by checkFloat")
	}
	return r.check(field, v)
}

// check refuses a value outside r (NaN included): "must be ≥ 0, got -1"
// without an upper bound, else "must be in (0, 1], got 0", with r.unit after
// the interval and r.why after the value.
func (r fieldRange) check(field string, v float64) error {
	if (v > r.min || !r.openMin && v == r.min) && (r.noMax || v <= r.max) {
		return nil
	}
	var msg string
	switch {
	case r.noMax && r.openMin:
		msg = fmt.Sprintf("must be > %g, got %v", r.min, v)
	case r.noMax:
		msg = fmt.Sprintf("must be ≥ %g, got %v", r.min, v)
	case r.openMin:
		msg = fmt.Sprintf("must be in (%g, %g]%s, got %v", r.min, r.max, r.unit, v)
	default:
		msg = fmt.Sprintf("must be in [%g, %g]%s, got %v", r.min, r.max, r.unit, v)
	}
	if r.why != "" {
		msg += " (" + r.why + ")"
	}
	return errorf(field, "%s", msg)
}

// joinInts is "1, 8, 16".
func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}

// addTo adds the range to a field's schema: its choices as an enum, or its
// bounds.
func (r fieldRange) addTo(s map[string]any) {
	if r.choices != nil {
		s["enum"] = r.choices
		return
	}
	if r.openMin {
		s["exclusiveMinimum"] = r.min
	} else {
		s["minimum"] = r.min
	}
	if !r.noMax {
		s["maximum"] = r.max
	}
}
