package config

import (
	"fmt"
	"math"
	"strings"
)

// The discriminated blocks of the spec. Each block's variant is a struct of
// its own, held by the block's variant field, and selected in YAML/JSON by one
// key beside the variant's fields:
//
//	engine.perf     source: roofline | aic | linear         → RooflinePerf, AICPerf, LinearPerf
//	traffic.source  type: mooncake | azure | llmservingsim | synthetic | sessions
//	                                                         → MooncakeSource, AzureSource, LLMServingSimSource,
//	                                                           SyntheticSource, SessionsSource
//	traffic.load    mode: trace | rate | concurrency         → TraceLoad, RateLoad, ConcurrencyLoad
//	a length        kind: fixed | uniform | normal | lognormal (or a plain integer: fixed)
//	                                                         → FixedLength, UniformLength, NormalLength, LognormalLength
//
// The variant interfaces are sealed (an unexported method), so the tables
// below list every variant there is; a field of another variant is refused by
// the decoder with the dotted path and the variants it belongs to.

// Perf is engine.perf: the model that prices each engine pass.
type Perf struct {
	// Source is the variant: RooflinePerf, AICPerf or LinearPerf.
	Source PerfSource `json:"-"`
}

// PerfSource is one variant of engine.perf.
type PerfSource interface {
	validate(path string) error
}

// RooflinePerf (source roofline, no data files) prices each op of a dense
// decoder as max(FLOPs / (peak × ComputeEfficiency), bytes / (HBM bandwidth ×
// MemoryEfficiency)), adds LayerLatencyUs per decoder layer and the engine
// step's CPU cost (docs/design.md, "Perf model"; core/perf/roofline.go).
type RooflinePerf struct {
	// ComputeEfficiency is the fraction of peak FLOP/s the kernels reach, (0, 1].
	ComputeEfficiency float64 `json:"compute_efficiency"`
	// MemoryEfficiency is the fraction of HBM bandwidth the kernels reach, (0, 1].
	MemoryEfficiency float64 `json:"memory_efficiency"`
	// PassOverheadUs is the engine step's CPU cost per pass, µs, ≥ 0.
	PassOverheadUs float64 `json:"pass_overhead_us"`
	// PerSequenceOverheadUs is the engine step's CPU cost per request
	// scheduled in a pass (each decode and each prefill chunk), µs, ≥ 0.
	PerSequenceOverheadUs float64 `json:"per_sequence_overhead_us"`
	// LayerLatencyUs is the fixed kernel time of one decoder layer per pass
	// beyond its roofline, µs, ≥ 0.
	LayerLatencyUs float64 `json:"layer_latency_us"`
	// MoELatencyUs is the fixed kernel time of one mixture-of-experts block
	// per pass beyond its roofline (router, top-k, token permutation), µs,
	// ≥ 0; mixture-of-experts models only. Absent = DefaultMoELatencyUs; not
	// filled in by Normalize, so that dense specs stay as they were.
	MoELatencyUs *float64 `json:"moe_latency_us,omitempty"`
}

// MoELatency is MoELatencyUs, DefaultMoELatencyUs when absent.
func (p RooflinePerf) MoELatency() float64 {
	if p.MoELatencyUs == nil {
		return DefaultMoELatencyUs
	}
	return *p.MoELatencyUs
}

// AICPerf (source aic) prices passes from the measured kernel tables of the
// AIConfigurator format (core/perf/aic) and adds the engine step's CPU cost.
type AICPerf struct {
	// PassOverheadUs and PerSequenceOverheadUs: as RooflinePerf's.
	PassOverheadUs        float64 `json:"pass_overhead_us"`
	PerSequenceOverheadUs float64 `json:"per_sequence_overhead_us"`
	// Database is the root of the perf tables: the systems folder holding
	// data/<system>/…, or its parent.
	Database string `json:"database"`
	// BackendVersion is the serving framework version whose tables to use,
	// MAJOR.MINOR[.PATCH]; each table takes the nearest measured version when
	// that one is missing (the report's perf_metadata says which).
	BackendVersion string `json:"backend_version"`
	// MoERouting is how the routed experts of a mixture-of-experts model
	// are priced (MoERouting* values; docs/moe.md, "Routing"): balanced,
	// the tables' balanced rows corrected to uniform random routing;
	// power_law_1.01 or power_law_1.2, that power-law routing's rows as
	// measured (balanced where a table lacks them for the shape); auto,
	// the power law AIConfigurator prices the model's architecture at
	// (1.2 for Qwen3-MoE, gpt-oss, MiniMax-M2, Qwen3.5; 1.01 for the
	// DeepSeek family, Kimi, GLM-5; balanced for the others). Absent =
	// DefaultMoERouting.
	MoERouting string `json:"moe_routing,omitempty"`
}

// Routing is MoERouting, DefaultMoERouting when absent (not filled in by
// Normalize, so that the canonical spec of a run that does not name it stays
// as it was).
func (p AICPerf) Routing() string {
	if p.MoERouting == "" {
		return DefaultMoERouting
	}
	return p.MoERouting
}

// LinearPerf (source linear) is exact, for tests and fitted models:
//
//	pass ms = BaseMs + PerPrefillTokenMs × prompt tokens computed
//	          + PerDecodeSeqMs × decoding requests
//
// Every coefficient is required (≥ 0, not all 0).
type LinearPerf struct {
	BaseMs            float64 `json:"base_ms" spec:"required"`
	PerPrefillTokenMs float64 `json:"per_prefill_token_ms" spec:"required"`
	PerDecodeSeqMs    float64 `json:"per_decode_seq_ms" spec:"required"`
}

// Source is traffic.source: where requests come from.
type Source struct {
	// Type is the variant: MooncakeSource, AzureSource, LLMServingSimSource,
	// SyntheticSource or SessionsSource.
	Type SourceType `json:"-"`
}

// SourceType is one variant of traffic.source.
type SourceType interface {
	validate(path string) error
}

// MooncakeSource (type mooncake) reads a Mooncake JSONL trace: timestamp (ms),
// input_length, output_length, hash_ids of ISLBlockSize-token blocks, optional
// session_id and delay (ms) that make rows into sessions.
type MooncakeSource struct {
	Path string `json:"path"`
	// ISLBlockSize is the number of prompt tokens one hash id covers, ≥ 1:
	// AIPerf's --isl-block-size (--prompt-input-tokens-block-size), "used for
	// trace hash_ids block alignment". Absent = DefaultISLBlockSize (the
	// Mooncake traces' 512); other traces hash finer blocks (Alibaba's Bailian
	// traces 16 tokens, AIPerf's bailian_trace default). Not filled in by
	// Normalize, so that specs without it stay as they were.
	ISLBlockSize *int `json:"isl_block_size,omitempty"`
	// ContextMode is how a session's rows make its turns' prompts, in
	// AIPerf's names (docs/reference/conversation-context-mode.md):
	// ContextDeltasWithoutResponses, each row only its turn's new input
	// (input_length and hash_ids), sent after the conversation so far (the
	// earlier rows and the replies the client received), as AIPerf replays
	// a Mooncake trace with hash_ids; or ContextMessageArrayWithResponses,
	// each row its turn's whole prompt. Absent: the whole prompt (the
	// replay's behaviour before the field existed); not filled in by
	// Normalize, so that specs without it stay as they were.
	ContextMode string `json:"context_mode,omitempty"`
}

// Deltas reports whether a session row's input is only what its turn adds
// to the conversation (ContextDeltasWithoutResponses).
func (s MooncakeSource) Deltas() bool { return s.ContextMode == ContextDeltasWithoutResponses }

// BlockTokens is ISLBlockSize, DefaultISLBlockSize when absent.
func (s MooncakeSource) BlockTokens() int {
	if s.ISLBlockSize == nil {
		return DefaultISLBlockSize
	}
	return *s.ISLBlockSize
}

// AzureSource (type azure) reads an Azure LLM inference trace (CSV).
type AzureSource struct {
	Path string `json:"path"`
}

// LLMServingSimSource (type llmservingsim) reads a JSONL trace with each
// prompt's token ids, as LLMServingSim replays through vLLM.
type LLMServingSimSource struct {
	Path string `json:"path"`
}

// SyntheticSource (type synthetic) generates NumRequests requests whose
// prompt lengths come from ISL and output lengths from OSL. With a Dataset
// the requests send its entries' prompts again and again, as a load generator
// does; without one, every prompt is new.
type SyntheticSource struct {
	NumRequests int      `json:"num_requests"`
	Dataset     *Dataset `json:"dataset,omitempty"`
	ISL         Length   `json:"isl"` // tokens, ≥ 1
	OSL         Length   `json:"osl"` // tokens, ≥ 1 (MinOutputTokens)
}

// SessionsSource (type sessions) generates NumSessions multi-turn
// conversations of Turns turns; each turn adds ISL new input tokens to the
// conversation so far and produces OSL tokens.
type SessionsSource struct {
	NumSessions int    `json:"num_sessions"`
	Turns       Length `json:"turns"` // ≥ 1
	ISL         Length `json:"isl"`   // tokens, ≥ 1
	OSL         Length `json:"osl"`   // tokens, ≥ 1 (MinOutputTokens)
}

// Dataset is a synthetic source's prompt dataset (AIPerf's
// --num-dataset-entries and --dataset-sampling-strategy): Entries distinct
// prompts, each with lengths drawn from isl and osl, picked per request by
// Sampling (SamplingSequential, SamplingRandom or SamplingShuffle).
type Dataset struct {
	Entries  int    `json:"entries"`
	Sampling string `json:"sampling"`
	// Prefix, when given, makes the entries share system prompts, as
	// inference-perf's shared_prefix generator does: entry e belongs to group
	// e mod Groups and its prompt is its group's Tokens-token prefix followed
	// by its own isl draw (so its length is Tokens + isl).
	Prefix *DatasetPrefix `json:"prefix,omitempty"`
}

// DatasetPrefix is a dataset's shared prompt prefixes: Groups distinct
// prefixes (≤ the entries) of Tokens tokens each.
type DatasetPrefix struct {
	Groups int `json:"groups"`
	Tokens int `json:"tokens"`
}

// Load is traffic.load: when requests are sent, and the client's own costs.
type Load struct {
	// Mode is the variant: TraceLoad, RateLoad or ConcurrencyLoad.
	Mode LoadMode `json:"-"`
	// InterTurnDelayMs is the authored wait between a session turn's release
	// and the next turn's send (a trace row's own delay takes precedence).
	InterTurnDelayMs float64 `json:"inter_turn_delay_ms,omitempty"`
	// ResponseOverhead is the load generator's cost of finishing a response;
	// absent = 0 (a finished response is acted on when it is received).
	ResponseOverhead *ResponseOverhead `json:"response_overhead,omitempty"`
	// RequestTimeoutMs makes the client cancel a request whose response has not
	// ended this long after it was sent (0 = never), as load generators do.
	RequestTimeoutMs float64 `json:"request_timeout_ms,omitempty"`
}

// LoadMode is one variant of traffic.load.
type LoadMode interface {
	validate(path string) error
}

// TraceLoad (mode trace) sends each row at its timestamp / Speedup.
type TraceLoad struct {
	Speedup float64 `json:"speedup"`
}

// RateLoad (mode rate) sends at RateRPS requests per second with Arrival
// inter-arrival times (ArrivalPoisson, ArrivalConstant, or ArrivalGamma with
// coefficient of variation CV; CV belongs to gamma only).
type RateLoad struct {
	RateRPS float64 `json:"rate_rps"`
	Arrival string  `json:"arrival"`
	CV      float64 `json:"cv,omitempty"`
	// WarmupRequests is a warm-up phase before the arrivals, as vLLM's
	// benchmark_serving runs one before a rate (its initial test request and
	// --num-warmups, gathered before the benchmark starts): WarmupRequests
	// requests sent by WarmupConcurrency clients (0: all at once), each client
	// sending the next when it has acted on a response; when every warm-up
	// response has been acted on, the arrivals start, their times counted from
	// then. Warm-up requests run on the engine but are not reported.
	// WarmupPrompt is as ConcurrencyLoad's. A synthetic source only; 0 = none.
	WarmupRequests    int    `json:"warmup_requests,omitempty"`
	WarmupConcurrency int    `json:"warmup_concurrency,omitempty"`
	WarmupPrompt      string `json:"warmup_prompt,omitempty"`
	// WarmupMaxOutputTokens caps a warm-up copy's output length (as
	// ConcurrencyLoad's).
	WarmupMaxOutputTokens int `json:"warmup_max_output_tokens,omitempty"`
	// MaxConcurrency caps the arrivals' requests in flight (sent, not yet
	// acted on), as AIPerf's --request-rate with --concurrency does: a
	// request whose time has come while MaxConcurrency are in flight waits
	// until the client has acted on one of them, is sent then, and the next
	// inter-arrival gap counts from that send (RequestRateStrategy.
	// _execute_single_phase, aiperf/timing/request_rate_strategy.py: it
	// acquires a semaphore slot, drops the credit, then sleeps the next
	// interval; the slot is released on the credit's return). A request's
	// TTFT and latency count from its send, not from the time it waited
	// from (AIPerf's request start is the HTTP send). A synthetic source
	// only; 0 = no cap. CappedArrival chooses what an arrival that finds
	// every slot taken does: CappedWait (absent: it waits, as above),
	// CappedSkip (it passes unused, the request going at the first later
	// arrival with a free slot, as AIPerf from 0.5.0 sends) or CappedQueue
	// (it queues at the client, sent oldest first as slots free, the later
	// arrivals keeping their times, as vLLM's benchmark sends).
	MaxConcurrency int    `json:"max_concurrency,omitempty"`
	CappedArrival  string `json:"capped_arrival,omitempty"`
	// SpanS rescales the arrival times so that the last of the synthetic
	// source's num_requests arrives SpanS seconds after the first's origin
	// (every time × SpanS / the last time drawn), as vLLM's benchmark from
	// 0.10.0 rescales its cumulative delays to num_prompts / request_rate
	// (workload.Scaled). A synthetic source only; 0 = as drawn.
	SpanS float64 `json:"span_s,omitempty"`
}

// Warmup is the warm-up phase of a load: its requests, how many clients send
// them at once, and what they send (ConcurrencyLoad's and RateLoad's; none
// for other modes).
func (l Load) Warmup() (requests, concurrency int, prompt string) {
	switch m := l.Mode.(type) {
	case ConcurrencyLoad:
		return m.WarmupRequests, m.Concurrency, m.WarmupPrompt
	case RateLoad:
		c := m.WarmupConcurrency
		if c == 0 || c > m.WarmupRequests {
			c = m.WarmupRequests
		}
		return m.WarmupRequests, c, m.WarmupPrompt
	}
	return 0, 0, ""
}

// WarmupMaxOutputTokens is the cap on a warm-up copy's output tokens of a
// ConcurrencyLoad or RateLoad (0: none, and for other modes).
func (l Load) WarmupMaxOutputTokens() int {
	switch m := l.Mode.(type) {
	case ConcurrencyLoad:
		return m.WarmupMaxOutputTokens
	case RateLoad:
		return m.WarmupMaxOutputTokens
	}
	return 0
}

// ConcurrencyLoad (mode concurrency) is a closed loop of Concurrency clients:
// each sends its next request when the client has acted on the previous one.
type ConcurrencyLoad struct {
	Concurrency int `json:"concurrency"`
	// WarmupRequests: the load generator's warm-up phase (AIPerf's
	// --warmup-request-count), sent before the measured requests and besides
	// them: a synthetic source generates num_requests + WarmupRequests
	// requests, the first WarmupRequests the warm-up, and stop.max_requests
	// counts measured requests only, as AIPerf's --request-count N sends N
	// measured after the warm-up. A trace's first WarmupRequests rows are the
	// warm-up (AIPerf's trace replay gives a warm-up no rows of its own), the
	// rest measured. The closed loop sends them, waits until every warm-up
	// response has been acted on, then starts the measured requests with all
	// clients at once. Warm-up requests run on the engine (they fill its prefix
	// cache) but are not reported, so the measured window starts with the
	// first measured send. 0 = no warm-up.
	WarmupRequests int `json:"warmup_requests,omitempty"`
	// WarmupPrompt is what the warm-up requests send: WarmupPromptSource
	// (absent: the source's next requests, as AIPerf's warm-up draws from
	// its dataset), WarmupPromptFirst (copies of the first measured
	// request, prompt and output length, as vLLM's benchmark warms up with
	// its first prompt) or WarmupPromptLeading (copies of the first
	// WarmupRequests measured requests: perf_analyzer's measured phase
	// starts its data over) or WarmupPromptIsolated (the source's next
	// requests behind a marker: AIPerf 0.11.0–0.12.x); the last three a
	// synthetic source only. With a prefix cache, a copy shares every block
	// of its measured prompt; an isolated warm-up prompt shares none with a
	// measured one.
	WarmupPrompt string `json:"warmup_prompt,omitempty"`
	// WarmupMaxOutputTokens caps the output length of each warm-up copy of
	// WarmupPromptFirst at this many tokens (sglang.bench_serving's warm-up
	// asks min(the first prompt's output length, 32)); 0 = the copied
	// request's own.
	WarmupMaxOutputTokens int `json:"warmup_max_output_tokens,omitempty"`
}

// StagedLoad (mode stages) runs Stages one after another, as inference-perf
// runs its load stages (inference_perf/loadgen/load_generator.py,
// run_stage): a stage begins, its requests are sent from LeadS after its
// beginning (inference-perf starts a stage's timer 1 s ahead), it is found
// drained at the first poll (every PollS from its beginning; 0: at once)
// after every one of its responses has been acted on, and the next stage
// begins IntervalS later. A synthetic source only: stage k sends the next
// Requests of its requests.
type StagedLoad struct {
	Stages    []LoadStage `json:"stages"`
	IntervalS float64     `json:"interval_s"`
	LeadS     float64     `json:"lead_s"`
	PollS     float64     `json:"poll_s"`
}

// LoadStage is one stage of a StagedLoad: Requests requests, sent by
// Concurrency clients as a closed loop, or (Concurrency 0) at RateRPS as
// Arrival spreads them (StageSpread: over DurationS; StagePerSecondPoisson:
// a Poisson(RateRPS) count each second).
type LoadStage struct {
	Requests    int     `json:"requests"`
	Concurrency int     `json:"concurrency,omitempty"`
	RateRPS     float64 `json:"rate_rps,omitempty"`
	DurationS   float64 `json:"duration_s,omitempty"`
	Arrival     string  `json:"arrival,omitempty"`
}

// Requests is the requests of every stage.
func (l StagedLoad) Requests() int {
	n := 0
	for _, s := range l.Stages {
		n += s.Requests
	}
	return n
}

func (l StagedLoad) validate(path string) error {
	if len(l.Stages) == 0 {
		return errorf(path+".stages", "is required: at least one stage")
	}
	if err := firstErr(checkFloat(path+".interval_s", "StagedLoad.interval_s", l.IntervalS),
		checkFloat(path+".lead_s", "StagedLoad.lead_s", l.LeadS),
		checkFloat(path+".poll_s", "StagedLoad.poll_s", l.PollS)); err != nil {
		return err
	}
	for i, s := range l.Stages {
		p := fmt.Sprintf("%s.stages[%d]", path, i)
		if s.Requests < 1 {
			return errorf(p+".requests", "must be ≥ 1, got %d", s.Requests)
		}
		if s.Concurrency < 0 || s.Concurrency > MaxConcurrency {
			return errorf(p+".concurrency", "must be in [0, %d] (0: an open-loop stage), got %d", MaxConcurrency, s.Concurrency)
		}
		if s.Concurrency > 0 {
			for key, given := range map[string]bool{"rate_rps": s.RateRPS != 0, "duration_s": s.DurationS != 0, "arrival": s.Arrival != ""} {
				if given {
					return errorf(p+"."+key, "belongs to an open-loop stage (one without concurrency)")
				}
			}
			continue
		}
		if err := checkEnum(p+".arrival", "LoadStage.arrival", s.Arrival); err != nil {
			return err
		}
		if !(s.RateRPS >= MinRateRPS && s.RateRPS <= 1e9) {
			return errorf(p+".rate_rps", "must be in [%g, 1e9] requests/s, got %v", MinRateRPS, s.RateRPS)
		}
		if s.Arrival == StageSpread {
			if !(s.DurationS > 0 && s.DurationS <= MaxDelayMs/1e3) {
				return errorf(p+".duration_s", "must be in (0, %g] s, got %v", MaxDelayMs/1e3, s.DurationS)
			}
			// a spread stage sends its requests over duration_s, so its rate is
			// requests / duration_s: inference-perf's constant stage sends
			// int(rate × duration) (benchmark_inferenceperf.go, stageRequests);
			// a rate off by a request or more would be silently not the one sent
			if want := s.RateRPS * s.DurationS; math.Abs(float64(s.Requests)-want) >= 1 {
				return errorf(p+".rate_rps", "%v requests/s over duration_s %v s is %.6g requests, but requests is %d: "+
					"a spread stage sends its requests over duration_s (give requests = int(rate_rps × duration_s), %d)",
					s.RateRPS, s.DurationS, want, s.Requests, int64(math.Floor(want)))
			}
		} else if s.DurationS != 0 {
			return errorf(p+".duration_s", "belongs to arrival %s (a %s stage runs until its requests are sent)", StageSpread, StagePerSecondPoisson)
		}
	}
	return nil
}

// Length is a distribution of token counts (isl, osl, turns). In YAML it is a
// plain integer (fixed) or a mapping with its kind.
type Length struct {
	// Kind is the variant: FixedLength, UniformLength, NormalLength or
	// LognormalLength.
	Kind LengthKind `json:"-"`
}

// LengthKind is one variant of a Length.
type LengthKind interface {
	validate(path string, min int) error
}

// FixedLength: every draw is Value.
type FixedLength struct {
	Value int `json:"value"`
}

// UniformLength: an integer uniform on [Min, Max], both inclusive:
// P(n) = 1 / (Max − Min + 1).
type UniformLength struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// NormalLength: x ~ N(Mean, Std²); the draw is round(clamp(x, Min, Max)).
// Mean and Std are in tokens.
type NormalLength struct {
	Min  int     `json:"min"`
	Max  int     `json:"max"`
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
}

// LognormalLength: x = exp(μ + σ·z), z ~ N(0, 1), with μ and σ chosen so that
// x has mean Mean and standard deviation Std (tokens, not the log-space
// parameters): σ² = ln(1 + Std²/Mean²), μ = ln(Mean) − σ²/2. The draw is
// round(clamp(x, Min, Max)).
type LognormalLength NormalLength

// The variant tables: the discriminating key and, in documentation order, each
// value with its variant type. Each is the one list of its key's values.
var (
	perfUnion = &union{key: "source", def: DefaultPerfSource, variants: []variant{
		{PerfRoofline, RooflinePerf{}}, {PerfAIC, AICPerf{}}, {PerfLinear, LinearPerf{}}}}
	sourceUnion = &union{key: "type", variants: []variant{
		{SourceMooncake, MooncakeSource{}}, {SourceAzure, AzureSource{}}, {SourceLLMServingSim, LLMServingSimSource{}},
		{SourceSynthetic, SyntheticSource{}}, {SourceSessions, SessionsSource{}}}}
	loadUnion = &union{key: "mode", variants: []variant{
		{LoadTrace, TraceLoad{}}, {LoadRate, RateLoad{}}, {LoadConcurrency, ConcurrencyLoad{}}, {LoadStages, StagedLoad{}}}}
	lengthUnion = &union{key: "kind", variants: []variant{
		{LengthFixed, FixedLength{}}, {LengthUniform, UniformLength{}},
		{LengthNormal, NormalLength{}}, {LengthLognormal, LognormalLength{}}}}
)

// Name is the source of p ("roofline", "aic", "linear"), "" when unset.
func (p Perf) Name() string { return perfUnion.nameOf(p.Source) }

// Name is the type of s ("mooncake", "azure", "llmservingsim", "synthetic",
// "sessions"), "" when unset.
func (s Source) Name() string { return sourceUnion.nameOf(s.Type) }

// Name is the mode of l ("trace", "rate", "concurrency"), "" when unset.
func (l Load) Name() string { return loadUnion.nameOf(l.Mode) }

// Name is the kind of l ("fixed", "uniform", "normal", "lognormal"), "" when unset.
func (l Length) Name() string { return lengthUnion.nameOf(l.Kind) }

// TracePath is the file a trace source reads ("" for a generated source).
func (s Source) TracePath() string {
	switch t := s.Type.(type) {
	case MooncakeSource:
		return t.Path
	case AzureSource:
		return t.Path
	case LLMServingSimSource:
		return t.Path
	}
	return ""
}

func (p *Perf) unionOf() (*union, any)   { return perfUnion, p.Source }
func (s *Source) unionOf() (*union, any) { return sourceUnion, s.Type }
func (l *Load) unionOf() (*union, any)   { return loadUnion, l.Mode }
func (l *Length) unionOf() (*union, any) { return lengthUnion, l.Kind }

func (p *Perf) setVariant(v any)   { p.Source = v.(PerfSource) }
func (s *Source) setVariant(v any) { s.Type = v.(SourceType) }
func (l *Load) setVariant(v any)   { l.Mode = v.(LoadMode) }
func (l *Length) setVariant(v any) { l.Kind = v.(LengthKind) }

// MarshalJSON writes the block as its key, the variant's fields, then the
// block's own fields (the canonical spec's form).
func (p Perf) MarshalJSON() ([]byte, error) { return marshalUnion(perfUnion, p.Source, struct{}{}) }

// MarshalJSON: see Perf.MarshalJSON.
func (s Source) MarshalJSON() ([]byte, error) {
	return marshalUnion(sourceUnion, s.Type, struct{}{})
}

// MarshalJSON: see Perf.MarshalJSON.
func (l Load) MarshalJSON() ([]byte, error) {
	type fields Load // without methods: its variant field is json:"-"
	return marshalUnion(loadUnion, l.Mode, fields(l))
}

// MarshalJSON: see Perf.MarshalJSON.
func (l Length) MarshalJSON() ([]byte, error) {
	return marshalUnion(lengthUnion, l.Kind, struct{}{})
}

// --- validation of each variant (ranges; the decoder has refused the fields
// of other variants, wrong types and non-finite numbers) ---

func (p RooflinePerf) validate(path string) error {
	return firstErr(checkFloat(path+".compute_efficiency", "RooflinePerf.compute_efficiency", p.ComputeEfficiency),
		checkFloat(path+".memory_efficiency", "RooflinePerf.memory_efficiency", p.MemoryEfficiency),
		checkFloat(path+".pass_overhead_us", "RooflinePerf.pass_overhead_us", p.PassOverheadUs),
		checkFloat(path+".per_sequence_overhead_us", "RooflinePerf.per_sequence_overhead_us", p.PerSequenceOverheadUs),
		checkFloat(path+".layer_latency_us", "RooflinePerf.layer_latency_us", p.LayerLatencyUs),
		checkFloat(path+".moe_latency_us", "RooflinePerf.moe_latency_us", p.MoELatency()))
}

func (p AICPerf) validate(path string) error {
	if p.Database == "" {
		return errorf(path+".database", "is required for source aic (the folder of the AIConfigurator perf tables)")
	}
	if !versionLike(p.BackendVersion) {
		return errorf(path+".backend_version", "%s is not a version (want MAJOR.MINOR[.PATCH], for example \"0.24.0\")", quote(p.BackendVersion))
	}
	if p.MoERouting != "" {
		if err := checkEnum(path+".moe_routing", "AICPerf.moe_routing", p.MoERouting); err != nil {
			return err
		}
	}
	return firstErr(checkFloat(path+".pass_overhead_us", "AICPerf.pass_overhead_us", p.PassOverheadUs),
		checkFloat(path+".per_sequence_overhead_us", "AICPerf.per_sequence_overhead_us", p.PerSequenceOverheadUs))
}

func (p LinearPerf) validate(path string) error {
	if err := firstErr(checkFloat(path+".base_ms", "LinearPerf.base_ms", p.BaseMs),
		checkFloat(path+".per_prefill_token_ms", "LinearPerf.per_prefill_token_ms", p.PerPrefillTokenMs),
		checkFloat(path+".per_decode_seq_ms", "LinearPerf.per_decode_seq_ms", p.PerDecodeSeqMs)); err != nil {
		return err
	}
	if p.BaseMs+p.PerPrefillTokenMs+p.PerDecodeSeqMs == 0 {
		return errorf(path, "a linear model with every coefficient 0 never advances the clock")
	}
	return nil
}

func (s MooncakeSource) validate(path string) error {
	err := firstErr(tracePath(path, SourceMooncake, s.Path),
		checkInt(join(path, "isl_block_size"), "MooncakeSource.isl_block_size", s.BlockTokens()))
	if err == nil && s.ContextMode != "" {
		err = checkEnum(join(path, "context_mode"), "MooncakeSource.context_mode", s.ContextMode)
	}
	return err
}
func (s AzureSource) validate(path string) error { return tracePath(path, SourceAzure, s.Path) }
func (s LLMServingSimSource) validate(path string) error {
	return tracePath(path, SourceLLMServingSim, s.Path)
}

func tracePath(path, typ, file string) error {
	if file == "" {
		return errorf(path+".path", "is required for a %s trace", typ)
	}
	return nil
}

func (s SyntheticSource) validate(path string) error {
	if err := firstErr(checkInt(join(path, "num_requests"), "SyntheticSource.num_requests", s.NumRequests),
		s.ISL.validate(join(path, "isl"), 1), s.OSL.validate(join(path, "osl"), MinOutputTokens)); err != nil {
		return err
	}
	if d := s.Dataset; d != nil {
		return d.validate(join(path, "dataset"))
	}
	return nil
}

// Validate checks s on its own (for the workload generator); errors name the
// field relative to traffic.source ("isl.min").
func (s SyntheticSource) Validate() error { return s.validate("") }

func (s SessionsSource) validate(path string) error {
	return firstErr(checkInt(join(path, "num_sessions"), "SessionsSource.num_sessions", s.NumSessions),
		s.Turns.validate(join(path, "turns"), 1), s.ISL.validate(join(path, "isl"), 1),
		s.OSL.validate(join(path, "osl"), MinOutputTokens))
}

// Validate checks s on its own (for the workload generator); errors name the
// field relative to traffic.source ("turns.min").
func (s SessionsSource) Validate() error { return s.validate("") }

func (d Dataset) validate(path string) error {
	if err := firstErr(checkInt(join(path, "entries"), "Dataset.entries", d.Entries),
		checkEnum(join(path, "sampling"), "Dataset.sampling", d.Sampling)); err != nil {
		return err
	}
	if p := d.Prefix; p != nil {
		if err := firstErr(checkInt(join(path, "prefix.groups"), "DatasetPrefix.groups", p.Groups),
			checkInt(join(path, "prefix.tokens"), "DatasetPrefix.tokens", p.Tokens)); err != nil {
			return err
		}
		if p.Groups > d.Entries {
			return errorf(join(path, "prefix.groups"), "%d groups for %d entries: a group needs an entry", p.Groups, d.Entries)
		}
	}
	return nil
}

// Validate checks d on its own; errors name the field relative to the
// dataset block ("entries").
func (d Dataset) Validate() error { return d.validate("") }

func (l TraceLoad) validate(path string) error {
	return checkFloat(path+".speedup", "TraceLoad.speedup", l.Speedup)
}

func (l RateLoad) validate(path string) error {
	if err := checkEnum(path+".arrival", "RateLoad.arrival", l.Arrival); err != nil {
		return err
	}
	if l.Arrival == ArrivalGamma {
		// The row publishes [0, MaxGammaCV] (0: cv left out, as the other
		// arrivals have it); a gamma process needs at least MinGammaCV.
		r := rangeOf("RateLoad.cv")
		r.kind, r.min = magnitudeRange, MinGammaCV
		r.why = fmt.Sprintf("a gamma process's shape is 1/cv²; below %g the arrivals are a constant rate: use arrival: constant", MinGammaCV)
		if err := r.checkNumber(path+".cv", "RateLoad.cv", l.CV); err != nil {
			return err
		}
	} else if l.CV != 0 {
		return errorf(path+".cv", "belongs to arrival %s, not %s", ArrivalGamma, l.Arrival)
	}
	if err := firstErr(checkFloat(path+".rate_rps", "RateLoad.rate_rps", l.RateRPS),
		checkInt(path+".warmup_requests", "RateLoad.warmup_requests", l.WarmupRequests),
		checkInt(path+".warmup_concurrency", "RateLoad.warmup_concurrency", l.WarmupConcurrency),
		checkInt(path+".max_concurrency", "RateLoad.max_concurrency", l.MaxConcurrency),
		checkFloat(path+".span_s", "RateLoad.span_s", l.SpanS)); err != nil {
		return err
	}
	if err := checkWarmupCap(path, "RateLoad.warmup_max_output_tokens", l.WarmupMaxOutputTokens, l.WarmupPrompt); err != nil {
		return err
	}
	if l.WarmupPrompt != "" {
		if err := checkEnum(path+".warmup_prompt", "RateLoad.warmup_prompt", l.WarmupPrompt); err != nil {
			return err
		}
	}
	if l.CappedArrival != "" {
		if err := checkEnum(path+".capped_arrival", "RateLoad.capped_arrival", l.CappedArrival); err != nil {
			return err
		}
		if l.MaxConcurrency == 0 {
			return errorf(path+".capped_arrival", "needs max_concurrency > 0")
		}
	}
	if l.WarmupRequests == 0 {
		for key, given := range map[string]bool{"warmup_concurrency": l.WarmupConcurrency != 0, "warmup_prompt": l.WarmupPrompt != ""} {
			if given {
				return errorf(path+"."+key, "needs warmup_requests > 0")
			}
		}
	}
	return nil
}

func (l ConcurrencyLoad) validate(path string) error {
	if err := firstErr(checkInt(path+".concurrency", "ConcurrencyLoad.concurrency", l.Concurrency),
		checkInt(path+".warmup_requests", "ConcurrencyLoad.warmup_requests", l.WarmupRequests)); err != nil {
		return err
	}
	if err := checkWarmupCap(path, "ConcurrencyLoad.warmup_max_output_tokens", l.WarmupMaxOutputTokens, l.WarmupPrompt); err != nil {
		return err
	}
	if l.WarmupPrompt == "" {
		return nil
	}
	if err := checkEnum(path+".warmup_prompt", "ConcurrencyLoad.warmup_prompt", l.WarmupPrompt); err != nil {
		return err
	}
	if l.WarmupRequests == 0 {
		return errorf(path+".warmup_prompt", "needs warmup_requests > 0")
	}
	return nil
}

// checkWarmupCap checks a load's warmup_max_output_tokens: ≥ 0, and only
// with warmup_prompt first (the copies it caps).
func checkWarmupCap(path, key string, n int, prompt string) error {
	if n == 0 {
		return nil
	}
	if err := checkInt(path+".warmup_max_output_tokens", key, n); err != nil {
		return err
	}
	if prompt != WarmupPromptFirst {
		return errorf(path+".warmup_max_output_tokens", "caps the copies of warmup_prompt %s (give it)", WarmupPromptFirst)
	}
	return nil
}

// validate checks a length whose draws must be ≥ min (1 for prompt lengths and
// turns, MinOutputTokens for output lengths).
func (l Length) validate(path string, min int) error {
	if l.Kind == nil {
		return errorf(path, "is required (an integer, or a mapping with kind: %s)", strings.Join(lengthKinds, ", "))
	}
	return l.Kind.validate(path, min)
}

// Validate checks l for draws ≥ min; errors name the field relative to the
// length ("min: must be ≥ 1, got 0").
func (l Length) Validate(min int) error { return l.validate("", min) }

func (d FixedLength) validate(path string, min int) error {
	return atLeast(join(path, "value"), d.Value, min)
}

func (d UniformLength) validate(path string, min int) error {
	if err := atLeast(join(path, "min"), d.Min, min); err != nil {
		return err
	}
	if d.Max < d.Min {
		return errorf(join(path, "max"), "must be ≥ min (%d), got %d", d.Min, d.Max)
	}
	return nil
}

func (d NormalLength) validate(path string, min int) error {
	return boundedMoments(path, LengthNormal, "NormalLength", d, min)
}

func (d LognormalLength) validate(path string, min int) error {
	return boundedMoments(path, LengthLognormal, "LognormalLength", NormalLength(d), min)
}

// boundedMoments: mean > 0 and std ≥ 0 (their ranges, under typ, the
// variant's Go type), min ≤ max, max ≥ 1 (one rule for normal and
// lognormal: a token count's mean is positive).
func boundedMoments(path, kind, typ string, d NormalLength, min int) error {
	if err := checkFloat(join(path, "mean"), typ+".mean", d.Mean); err != nil {
		return err
	}
	if d.Min < min {
		return errorf(join(path, "min"), "must be ≥ %d, got %d (a %s distribution needs min and max to bound it)", min, d.Min, kind)
	}
	if err := checkFloat(join(path, "std"), typ+".std", d.Std); err != nil {
		return err
	}
	if d.Max < d.Min || d.Max < 1 {
		return errorf(join(path, "max"), "must be ≥ min and ≥ 1, got %d", d.Max)
	}
	return nil
}
