package config

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// traffic.benchmark: a load generator as its own command line runs it, in the
// tool's own option names. The block stands instead of traffic.source, load
// and stop: Benchmark.Traffic translates it into them with the tool's
// semantics (how it draws lengths and prompts, what its warm-up sends, which
// requests it measures), which the replay then runs. The reported metrics are
// the tool's: warm-up requests are not reported, the window runs from the
// first measured send to the last response, and TPOT leaves out requests of
// fewer than 2 output tokens (both tools do: vLLM's calculate_metrics keeps
// tpot only for output_len > 1, AIPerf's inter_token_latency needs 2 tokens).
//
//	tool: aiperf            → AIPerfBenchmark (`aiperf profile`, synthetic data)
//	tool: vllm_bench_serve  → VLLMBenchServe (`vllm bench serve` /
//	                          benchmark_serving.py, and InferenceX's fork)
//	tool: genai_perf        → GenAIPerfBenchmark (`genai-perf profile`,
//	                          synthetic data, through perf_analyzer)
//	tool: inference_perf    → InferencePerfBenchmark (kubernetes-sigs/
//	                          inference-perf's config file: load stages,
//	                          random and shared-prefix data)
//	tool: sglang_bench_serving → SGLangBenchServing (`python -m
//	                          sglang.bench_serving`, random datasets)

// Benchmark is traffic.benchmark.
type Benchmark struct {
	// Tool is the variant: AIPerfBenchmark, VLLMBenchServe or GenAIPerfBenchmark.
	Tool BenchmarkTool `json:"-"`
	// ResponseOverhead is the load generator's own cost of finishing a
	// response (as traffic.load.response_overhead); absent: none.
	ResponseOverhead *ResponseOverhead `json:"response_overhead,omitempty"`
}

// BenchmarkTool is one variant of traffic.benchmark.
type BenchmarkTool interface {
	validate(path string) error
	// traffic is the tool's run as a replay's traffic (validated tool).
	traffic() (Traffic, []string)
}

// The tools' values of traffic.benchmark.tool.
const (
	ToolAIPerf         = "aiperf"
	ToolVLLMBenchServe = "vllm_bench_serve"
	ToolGenAIPerf      = "genai_perf"
	ToolInferencePerf  = "inference_perf"
)

// The variants of tool vllm_bench_serve.
const (
	// VariantVLLM is vLLM's own client (benchmarks/benchmark_serving.py, then
	// `vllm bench serve`, vllm/benchmarks/serve.py and datasets.py) at
	// Version.
	VariantVLLM = "vllm"
	// VariantInferenceX is SemiAnalysisAI/InferenceX's fork,
	// utils/bench_serving/benchmark_serving.py (in the repository since
	// 2026-01-21, commit d053ae24e; cloned from kimbochen/bench_serving at run
	// time before): Date chooses.
	VariantInferenceX = "inferencex"
)

// inferenceXInRepo is the date InferenceX's client moved into its repository
// (commit d053ae24e, 2026-01-21): from it the client sends no initial test
// request (it builds one and sends it only as the --num-warmups copies);
// before it the cloned fork sent the test request once, as vLLM's does.
var inferenceXInRepo = time.Date(2026, 1, 21, 0, 0, 0, 0, time.UTC)

// vllmSymmetricRange is the vLLM release whose random dataset draws lengths
// in [⌊L(1−r)⌋, ⌈L(1+r)⌉] (pull request 16126, "Fix range_ratio Bug in
// RandomDataset", in 0.8.4); earlier ones drew in [⌊r·L⌋, L].
var vllmSymmetricRange = Release{0, 8, 4}

// AIPerfBenchmark (tool aiperf) is `aiperf profile` with its synthetic
// dataset (aiperf/common/config/config_defaults.py for the defaults):
// NumDatasetEntries prompts, each with an input length drawn from
// N(SyntheticInputTokensMean, SyntheticInputTokensStddev²) and an output length
// (max_tokens) from N(OutputTokensMean, OutputTokensStddev²), picked per
// request by DatasetSamplingStrategy; WarmupRequestCount warm-up requests
// whose responses it waits for (the profiling phase then starts with every
// client at once), then RequestCount measured ones, in a closed loop of
// Concurrency, or at RequestRate per second (Poisson, AIPerf's default
// --request-rate-mode), with Concurrency too at most that many in flight
// (RateLoad.MaxConcurrency: a request whose time has come waits for a slot). A length drawn with a stddev is AIPerf's
// ceil(x), x ~ N(mean, std²) rejected below 0 (aiperf/dataset/utils.py,
// sample_positive_normal_integer); the replay draws round(x + 0.5) clamped
// to [1, mean + 8·std], the same law but where the mean is within a few
// stddevs of 0.
type AIPerfBenchmark struct {
	// Concurrency is --concurrency (0: 1 unless RequestRate is given; with
	// RequestRate, the cap on requests in flight).
	Concurrency int `json:"concurrency,omitempty"`
	// RequestRate is --request-rate, requests/s (absent: none, a closed
	// loop; AIPerf's LoadGeneratorConfig wants it > 0).
	RequestRate *float64 `json:"request_rate,omitempty"`
	// RequestCount is --request-count, the measured requests (default 10;
	// 0 with BenchmarkDuration, which AIPerf does not take with a count:
	// user_config.py, validate_benchmark_mode).
	RequestCount int `json:"request_count,omitempty"`
	// WarmupRequestCount is --warmup-request-count (default 0).
	WarmupRequestCount int `json:"warmup_request_count,omitempty"`
	// BenchmarkDuration is --benchmark-duration, s: requests are sent until
	// it ends, none after (0: none); the requests in flight then count if
	// they end within the grace period (graceS).
	BenchmarkDuration float64 `json:"benchmark_duration,omitempty"`
	// BenchmarkGracePeriod is --benchmark-grace-period, s (with
	// BenchmarkDuration only, as AIPerf refuses it without one); absent:
	// the release's default (graceS).
	BenchmarkGracePeriod *float64 `json:"benchmark_grace_period,omitempty"`
	// SyntheticInputTokensMean and SyntheticInputTokensStddev are
	// --synthetic-input-tokens-mean (default 550) and -stddev (default 0).
	SyntheticInputTokensMean   int     `json:"synthetic_input_tokens_mean"`
	SyntheticInputTokensStddev float64 `json:"synthetic_input_tokens_stddev,omitempty"`
	// OutputTokensMean and OutputTokensStddev are --output-tokens-mean
	// (required: without it the model decides when to stop) and -stddev.
	OutputTokensMean   int     `json:"output_tokens_mean"`
	OutputTokensStddev float64 `json:"output_tokens_stddev,omitempty"`
	// NumDatasetEntries is --num-dataset-entries (default 100).
	NumDatasetEntries int `json:"num_dataset_entries"`
	// DatasetSamplingStrategy is --dataset-sampling-strategy (default
	// shuffle, AIPerf's choice for synthetic data).
	DatasetSamplingStrategy string `json:"dataset_sampling_strategy"`
	// IgnoreEOS is --extra-inputs ignore_eos:true; it must be true: without
	// it a request ends at the model's end-of-sequence token, which the
	// simulation cannot know.
	IgnoreEOS bool `json:"ignore_eos"`
	// NumConversations is --num-conversations (--num-sessions,
	// --conversation-num), which AIPerf's releases read three ways
	// (aiperfRules): another name of --num-dataset-entries before 0.3.0;
	// the measured requests (a single-turn conversation each) from 0.3.0,
	// refused with --request-count; from 0.9.0 the sessions the profiling
	// phase starts, beside --request-count (it stops at the first reached),
	// and the dataset's entries unless --num-dataset-entries is given.
	NumConversations *int `json:"num_conversations,omitempty"`
	// Version is the AIPerf release (absent: its rules before 0.3.0, as
	// aisimulate read AIPerf before the field existed).
	Version string `json:"version,omitempty"`
	// RequestRateMode is --request-rate-mode (--arrival-pattern from 0.5.0):
	// the rate's inter-arrival gaps, poisson (absent, AIPerf's default),
	// constant, or gamma (from 0.5.0) of shape ArrivalSmoothness
	// (--arrival-smoothness, --vllm-burstiness; absent 1: the Poisson law),
	// random.gammavariate(shape, 1/(rate·shape)) in GammaIntervalGenerator,
	// aiperf/timing/intervals.py: a coefficient of variation 1/√shape.
	RequestRateMode   string  `json:"request_rate_mode,omitempty"`
	ArrivalSmoothness float64 `json:"arrival_smoothness,omitempty"`
	// CacheBust is --cache-bust (AIPerf 0.12.0 and later; absent: none,
	// its default): none, or warmup_isolation_first_turn (0.13.0 and later:
	// a "[warmup]" marker at the start of each warm-up prompt, none on the
	// measured ones). Its other targets are refused (cacheBustTargets).
	CacheBust string `json:"cache_bust,omitempty"`
	// RandomRangeRatio is --random-range-ratio r (AIPerf 0.13.0 and later;
	// absent: the normal draws above): each dataset entry's input and output
	// lengths drawn uniformly in a window around their means, the stddevs
	// unused, as RandomCorpusStyle shapes it (aiperfRangeWindow).
	RandomRangeRatio *float64 `json:"random_range_ratio,omitempty"`
	// RandomCorpusStyle is --random-corpus-style: vllm (absent, AIPerf's
	// default) or sglang.
	RandomCorpusStyle string `json:"random_corpus_style,omitempty"`
}

// AIPerf's releases whose rules differ, read from their wheels' sources.
var (
	// aiperfConversationsCount: from 0.3.0 --num-conversations is its own
	// option, ConversationConfig.num, the profiling phase's count when given
	// (CreditIssuingStrategy._setup_profiling_phase_config takes
	// num_sessions before request_count), and refused with --request-count
	// (UserConfig.validate_multi_turn_options: "Both a request-count and
	// number of conversations are set"); before it, a name of
	// --num-dataset-entries (the one field ConversationConfig.num).
	aiperfConversationsCount = Release{0, 3, 0}
	// aiperfSkipsArrivals: from 0.5.0 a capped rate's arrival that finds no
	// free slot passes unused (CappedSkip); before it, it waits (CappedWait).
	aiperfSkipsArrivals = Release{0, 5, 0}
	// aiperfGamma: the release that adds the gamma arrival pattern
	// (--arrival-pattern gamma, --arrival-smoothness; LoadGeneratorConfig).
	aiperfGamma = Release{0, 5, 0}
	// aiperfEntriesFollowCounts: from 0.9.0 (the config converter,
	// aiperf/config/flags/_converter_dataset.py, _resolve_entries) the
	// synthetic dataset has --num-dataset-entries entries, else
	// --num-conversations, else --request-count, else 100; the profiling
	// phase takes --request-count and --num-conversations together (a
	// request count and a session count, each a stop condition), and its
	// default of 10 requests holds only without either and without a
	// duration (_converter_profiling.py).
	aiperfEntriesFollowCounts = Release{0, 9, 0}
	// aiperfOldest: the rules of an AIPerf benchmark without a version.
	aiperfOldest = Release{0, 2, 0}
	// aiperfWarmupIsolated: from 0.11.0 every warm-up request's system
	// message (chat) or prompt (completions) starts with "warmup"
	// (WARMUP_SYSTEM_MESSAGE_PREFIX, aiperf/common/constants.py;
	// Worker._system_message_for_phase, aiperf/workers/worker.py;
	// OpenAICompletionsEndpoint.format_payload), so the warm-up shares no
	// prefix with the profiling requests (WarmupPromptIsolated); 0.10.0's
	// worker sends the conversation's own system message.
	aiperfWarmupIsolated = Release{0, 11, 0}
	// aiperfCacheBust: the release that adds --cache-bust (CacheBustTarget,
	// aiperf/common/enums/enums.py: none, system_prefix, system_suffix,
	// first_turn_prefix, first_turn_suffix).
	aiperfCacheBust = Release{0, 12, 0}
	// aiperfWarmupIsolationOptIn: from 0.13.0 the warm-up is isolated only
	// under --cache-bust warmup_isolation_system or
	// warmup_isolation_first_turn (the "[warmup]" marker); with none, the
	// default, it sends the dataset's prompts as they are, as before 0.11.0
	// (0.13.0's worker has no WARMUP_SYSTEM_MESSAGE_PREFIX).
	aiperfWarmupIsolationOptIn = Release{0, 13, 0}
	// aiperfSmoothnessRefused and aiperfSmoothnessAloneBack: the releases where --arrival-smoothness
	// (--vllm-burstiness) with a rate and no --arrival-pattern runs the gamma
	// pattern: 0.5.0 to 0.8.x (UserConfig's validator, "Setting arrival
	// pattern to gamma by default", aiperf/common/config/user_config.py) and
	// from 0.12.0 (_profiling_phase_type, aiperf/config/flags/
	// _converter_profiling.py, "v1 parity"); 0.9.0 to 0.11.x refuse it
	// ("--arrival-smoothness is only supported with --arrival-pattern gamma").
	aiperfSmoothnessRefused   = Release{0, 9, 0}
	aiperfSmoothnessAloneBack = Release{0, 12, 0}
)

// The values of --cache-bust the simulation takes.
const (
	CacheBustNone                     = "none"
	CacheBustWarmupIsolationFirstTurn = "warmup_isolation_first_turn"
)

// cacheBustRefused: --cache-bust targets that are not simulated, with why.
var cacheBustRefused = map[string]string{
	"system_prefix":           "a marker of each conversation's own ahead of its system message",
	"system_suffix":           "a marker of each conversation's own after its system message",
	"first_turn_prefix":       "a marker of each conversation's own ahead of its first prompt",
	"first_turn_suffix":       "a marker of each conversation's own after its first prompt",
	"warmup_isolation_system": "AIPerf takes it only with a shared system prompt, which the simulation does not send (validate_warmup_isolation_system_requires_shared_system_prompt); warmup_isolation_first_turn is simulated",
}

// warmupIsolated reports whether t's warm-up prompts share no prefix with
// its measured ones (aiperfWarmupIsolated, aiperfWarmupIsolationOptIn).
func (t AIPerfBenchmark) warmupIsolated() bool {
	switch rel := t.release(); {
	case rel.Before(aiperfWarmupIsolated):
		return false
	case rel.Before(aiperfWarmupIsolationOptIn):
		return true
	}
	return t.CacheBust == CacheBustWarmupIsolationFirstTurn
}

// aiperfNoDefaultGrace and aiperfDefaultGraceBack: AIPerf's duration runs
// wait DefaultAIPerfGracePeriod for the requests in flight unless
// --benchmark-grace-period says otherwise (LoadGeneratorDefaults.
// BENCHMARK_GRACE_PERIOD, aiperf/common/config/config_defaults.py, 0.2.0
// to 0.8.x: a request ending later is left out, RecordsManager.
// _should_include_request_by_duration in 0.2.0), except 0.9.0 to 0.11.x,
// whose config converter routes the grace period to the profiling phase
// only when given (_PROF_FIELD_ROUTES, aiperf/config/flags/
// _converter_profiling.py), so the phase's wait for returns ends with the
// duration and cancels what is in flight (PhaseRunner, aiperf/timing/phase/
// runner.py: time_left_in_seconds plus grace_period_sec or 0); 0.12.0's
// build_profiling routes the default again.
var (
	aiperfNoDefaultGrace   = Release{0, 9, 0}
	aiperfDefaultGraceBack = Release{0, 12, 0}
)

// DefaultAIPerfGracePeriod is AIPerf's --benchmark-grace-period default, s
// (BENCHMARK_GRACE_PERIOD = 30.0 from 0.2.0; CLIConfig's default in 0.12.0).
const DefaultAIPerfGracePeriod = 30.0

// graceS is how long t's duration run waits for the requests in flight
// once the duration has ended (aiperfNoDefaultGrace).
func (t AIPerfBenchmark) graceS() float64 {
	if t.BenchmarkGracePeriod != nil {
		return *t.BenchmarkGracePeriod
	}
	if rel := t.release(); !rel.Before(aiperfNoDefaultGrace) && rel.Before(aiperfDefaultGraceBack) {
		return 0
	}
	return DefaultAIPerfGracePeriod
}

// aiperfRangeWindow is the release that adds --random-range-ratio and
// --random-corpus-style (0.13.0's aiperf/common/models/
// sequence_distribution.py: VLLMRatioConfig's window [⌊L(1−r)⌋, ⌈L(1+r)⌉],
// r in [0, 1), an output of at least 1; SGLangRatioConfig's [max(1,
// ⌊L·r⌋), L], r in [0, 1]; an input draw of 0 is sent as 1 token,
// SyntheticDatasetComposer._generate_text_payloads). The vllm window's L is
// the mean less the tokenizer's special tokens, which the server adds back:
// the window here is the server's, as VLLMBenchServe.Lengths' is.
var aiperfRangeWindow = Release{0, 13, 0}

// The values of --random-corpus-style.
const (
	AIPerfCorpusVLLM   = "vllm"
	AIPerfCorpusSGLang = "sglang"
)

// rangeLengths are t's input and output lengths under --random-range-ratio
// (aiperfRangeWindow); ok false without it.
func (t AIPerfBenchmark) rangeLengths() (isl, osl Length, ok bool) {
	if t.RandomRangeRatio == nil {
		return isl, osl, false
	}
	r, L, O := *t.RandomRangeRatio, t.SyntheticInputTokensMean, t.OutputTokensMean
	if t.RandomCorpusStyle == AIPerfCorpusSGLang {
		lo := func(n int) int { return max(1, int(math.Floor(float64(n)*r))) }
		return window(lo(L), L), window(lo(O), O), true
	}
	lo := func(n int) int { return max(1, int(math.Floor(float64(n)*(1-r)))) }
	hi := func(n int) int { return max(1, int(math.Ceil(float64(n)*(1+r)))) }
	return window(lo(L), hi(L)), window(lo(O), hi(O)), true
}

// corpusStyle is t's --random-corpus-style (vllm when absent).
func (t AIPerfBenchmark) corpusStyle() string {
	if t.RandomCorpusStyle == "" {
		return AIPerfCorpusVLLM
	}
	return t.RandomCorpusStyle
}

// validateRange checks t's --random-range-ratio and --random-corpus-style.
func (t AIPerfBenchmark) validateRange(p string) error {
	if t.RandomRangeRatio == nil && t.RandomCorpusStyle == "" {
		return nil
	}
	field := p + "random_range_ratio"
	if t.RandomRangeRatio == nil {
		field = p + "random_corpus_style"
	}
	if t.release().Before(aiperfRangeWindow) {
		return errorf(field, "is an option of AIPerf 0.13.0 and later (this is %s)", t.versionName())
	}
	switch t.RandomCorpusStyle {
	case "", AIPerfCorpusVLLM, AIPerfCorpusSGLang:
	default:
		return errorf(p+"random_corpus_style", "%s is not a style of AIPerf's (vllm or sglang)", quote(t.RandomCorpusStyle))
	}
	if t.RandomRangeRatio == nil {
		return nil
	}
	r := *t.RandomRangeRatio
	if t.RandomCorpusStyle == AIPerfCorpusSGLang {
		if !(r >= 0 && r <= 1) {
			return errorf(field, "must be in [0, 1] for random_corpus_style sglang (SGLangRatioConfig), got %g", r)
		}
		return nil
	}
	if !(r >= 0 && r < 1) {
		return errorf(field, "must be in [0, 1) (VLLMRatioConfig: \"ISL range_ratio must be in [0.0, 1.0)\"), got %g", r)
	}
	if math.Floor(float64(t.SyntheticInputTokensMean)*(1-r)) < 1 {
		return errorf(field, "%g leaves a window of prompts from 0 tokens for a mean of %d, which AIPerf refuses (_reject_degenerate_range_ratio, as vLLM's RandomDataset does)", r, t.SyntheticInputTokensMean)
	}
	return nil
}

// isolationName names what isolates t's warm-up, for a note.
func (t AIPerfBenchmark) isolationName() string {
	if t.CacheBust == CacheBustWarmupIsolationFirstTurn {
		return "--cache-bust " + CacheBustWarmupIsolationFirstTurn
	}
	return `"warmup" ahead of its system message or prompt`
}

// validateCacheBust checks t's --cache-bust against its release.
func (t AIPerfBenchmark) validateCacheBust(path string) error {
	rel, v := t.release(), t.CacheBust
	switch {
	case v == "":
		return nil
	case rel.Before(aiperfCacheBust):
		return errorf(path, "is an option of AIPerf 0.12.0 and later (this is %s)", t.versionName())
	case v == CacheBustNone:
		return nil
	case v == CacheBustWarmupIsolationFirstTurn && rel.Before(aiperfWarmupIsolationOptIn):
		return errorf(path, "%s is a target of AIPerf 0.13.0 and later (this is %s)", v, t.versionName())
	case v == CacheBustWarmupIsolationFirstTurn:
		return nil
	}
	if why, ok := cacheBustRefused[v]; ok {
		return errorf(path, "%s is not simulated (%s)", v, why)
	}
	return errorf(path, "%s is not a target of AIPerf's --cache-bust (the simulation takes %s and %s)", quote(v), CacheBustNone, CacheBustWarmupIsolationFirstTurn)
}

// smoothnessAlone reports whether t's release runs --arrival-smoothness
// without --arrival-pattern as the gamma pattern (aiperfSmoothnessRefused).
func (t AIPerfBenchmark) smoothnessAlone() bool {
	rel := t.release()
	return !rel.Before(aiperfGamma) && rel.Before(aiperfSmoothnessRefused) || !rel.Before(aiperfSmoothnessAloneBack)
}

// release is t's AIPerf release (aiperfOldest's rules without a version).
func (t AIPerfBenchmark) release() Release {
	if t.Version == "" {
		return aiperfOldest
	}
	r, _ := toolRelease(t.Version, "AIPerf")
	return r
}

// measured is the requests t's profiling phase sends (0: until its
// duration ends), as its release counts them (NumConversations).
func (t AIPerfBenchmark) measured() int {
	if t.NumConversations == nil {
		return t.RequestCount
	}
	c := *t.NumConversations
	switch rel := t.release(); {
	case rel.Before(aiperfConversationsCount):
		return t.RequestCount
	case rel.Before(aiperfEntriesFollowCounts) || t.RequestCount == 0:
		return c
	}
	return min(t.RequestCount, c) // single-turn: a session is a request
}

// VLLMBenchServe (tool vllm_bench_serve) is vLLM's serving benchmark with its
// random dataset, in its option names (argparse dests). NumPrompts prompts of
// random token ids (no two share a prefix) with lengths drawn as Variant and
// Version draw them (Lengths); the initial test request and NumWarmups
// copies of the first prompt, at MaxConcurrency, waited for; then the
// prompts in order, a closed loop of MaxConcurrency (RequestRate inf, the
// default), all at once (no MaxConcurrency), or at RequestRate per second
// (Poisson, gamma when Burstiness ≠ 1) from the end of the warm-up, whose
// requests then go at once (vLLM's warm-up semaphore is a null context
// without --max-concurrency; the test request runs alone before them, which
// leaves the engine and its prefix cache as sending it with them does); a
// rate with MaxConcurrency keeps its schedule, a request whose time has come
// queuing at the client for the --max-concurrency semaphore
// (CappedQueue), the warm-ups at most MaxConcurrency at once too.
type VLLMBenchServe struct {
	// Variant is VariantVLLM (default) or VariantInferenceX.
	Variant string `json:"variant"`
	// Version is the vLLM release of the client (variant vllm); absent:
	// engine.backend_version's release, else NewestVLLMBenchRelease.
	Version string `json:"version,omitempty"`
	// Date is the run's date, YYYY-MM-DD (variant inferencex; absent: on or
	// after 2026-01-21, the in-repository client).
	Date string `json:"date,omitempty"`
	// DatasetName is --dataset-name: random (the only one simulated).
	DatasetName string `json:"dataset_name"`
	// RandomInputLen, RandomOutputLen (defaults 1024, 128), RandomRangeRatio
	// (default 0; 1 for variant inferencex and vLLM before 0.8.4, whose
	// [⌊r·L⌋, L] rule it makes fixed lengths: versionDefault)
	// and RandomPrefixLen (0; a shared prefix is not simulated).
	RandomInputLen   int     `json:"random_input_len"`
	RandomOutputLen  int     `json:"random_output_len"`
	RandomRangeRatio float64 `json:"random_range_ratio"`
	RandomPrefixLen  int     `json:"random_prefix_len,omitempty"`
	// NumPrompts is --num-prompts (default 1000): the measured requests.
	NumPrompts int `json:"num_prompts"`
	// MaxConcurrency is --max-concurrency (0: none).
	MaxConcurrency int `json:"max_concurrency,omitempty"`
	// RequestRate is --request-rate, requests/s (absent: inf, the
	// default; vLLM's get_request asserts a positive rate, so 0 and
	// negatives are refused).
	RequestRate *float64 `json:"request_rate,omitempty"`
	// Burstiness is --burstiness (default 1: Poisson arrivals; otherwise
	// gamma with shape Burstiness, a coefficient of variation 1/√Burstiness).
	Burstiness float64 `json:"burstiness"`
	// NumWarmups is --num-warmups (default 0).
	NumWarmups int `json:"num_warmups,omitempty"`
	// ReadyCheckTimeoutSec is --ready-check-timeout-sec (variant vllm;
	// default 600 before 0.14.0, where the initial test run was always made,
	// 0 from it: vllm-project/vllm pull request 30975, "Disable default
	// --ready-check-timeout-sec extra call in vllm bench", 2025-12-18):
	// above 0 the client first sends the test request (the first prompt)
	// until it succeeds; 0 skips it.
	ReadyCheckTimeoutSec *float64 `json:"ready_check_timeout_sec,omitempty"`
	// IgnoreEOS is --ignore-eos; it must be true (as AIPerfBenchmark's).
	// Variant vllm from 0.11.1 sets it itself for the random dataset
	// (vllmRandomIgnoresEOS): true whatever is given.
	IgnoreEOS bool `json:"ignore_eos"`
	// ProbeRequestRate is --probe-request-rate (variant vllm from 0.27.0,
	// vllmProbeRequests; default 0: none). Above 0 the client sends
	// one-token "Hi" requests at that rate beside the prompts, past
	// --max-concurrency (probe_loop in benchmark(), vllm/benchmarks/
	// serve.py), which is not simulated: only 0 (or below) is taken.
	ProbeRequestRate *float64 `json:"probe_request_rate,omitempty"`
}

// GenAIPerfBenchmark (tool genai_perf) is `genai-perf profile` with its
// synthetic data, in its option names (genai_perf/config/input/
// config_defaults.py for the defaults), run by perf_analyzer:
// NumDatasetEntries prompts, each with an input length of max(0,
// int(N(mean, std²))) tokens (synthetic_prompt_generator.py) and max_tokens
// int(max(1, N(mean, std²))) (base_converter.py); WarmupRequestCount warm-up
// requests at min(Concurrency, WarmupRequestCount) contexts, waited for
// (ConcurrencyManager.PerformWarmup, WaitForWarmupAndCleanup); then
// RequestCount measured requests at Concurrency, whose new contexts start at
// data step 0 again, so the warm-up's prompts are the first measured ones
// (each context steps through the entries by the number of contexts,
// InferContext::UpdateJsonData; the replay takes them in one sequence, the
// same entries per pass). A length drawn with a stddev is round(x − 0.5),
// x ~ N(mean, std²) clamped to [1, mean + 8·std] (genai-perf truncates: int).
type GenAIPerfBenchmark struct {
	// Concurrency is --concurrency (default 1).
	Concurrency int `json:"concurrency"`
	// RequestCount is --request-count (default 10).
	RequestCount int `json:"request_count"`
	// WarmupRequestCount is --warmup-request-count (default 0).
	WarmupRequestCount int `json:"warmup_request_count,omitempty"`
	// SyntheticInputTokensMean / Stddev are --synthetic-input-tokens-mean
	// (default 550) and -stddev (default 0).
	SyntheticInputTokensMean   int     `json:"synthetic_input_tokens_mean"`
	SyntheticInputTokensStddev float64 `json:"synthetic_input_tokens_stddev,omitempty"`
	// OutputTokensMean / Stddev are --output-tokens-mean (required) and -stddev.
	OutputTokensMean   int     `json:"output_tokens_mean"`
	OutputTokensStddev float64 `json:"output_tokens_stddev,omitempty"`
	// NumDatasetEntries is --num-dataset-entries (default 100).
	NumDatasetEntries int `json:"num_dataset_entries"`
	// IgnoreEOS is --extra-inputs ignore_eos:true; it must be true.
	IgnoreEOS bool `json:"ignore_eos"`
}

var benchmarkUnion = &union{key: "tool", variants: []variant{
	{ToolAIPerf, AIPerfBenchmark{}}, {ToolVLLMBenchServe, VLLMBenchServe{}}, {ToolGenAIPerf, GenAIPerfBenchmark{}},
	{ToolInferencePerf, InferencePerfBenchmark{}}, {ToolSGLangBenchServing, SGLangBenchServing{}}}}

// Name is the tool of b ("aiperf", "vllm_bench_serve"), "" when unset.
func (b Benchmark) Name() string { return benchmarkUnion.nameOf(b.Tool) }

func (b *Benchmark) unionOf() (*union, any) { return benchmarkUnion, b.Tool }
func (b *Benchmark) setVariant(v any)       { b.Tool = v.(BenchmarkTool) }

// MarshalJSON: see Perf.MarshalJSON.
func (b Benchmark) MarshalJSON() ([]byte, error) {
	type fields Benchmark
	return marshalUnion(benchmarkUnion, b.Tool, fields(b))
}

// The defaults of the tools' options (their own defaults).
const (
	DefaultAIPerfRequestCount        = 10
	DefaultAIPerfInputTokensMean     = 550
	DefaultAIPerfNumDatasetEntries   = 100
	DefaultGenAIPerfRequestCount     = 10
	DefaultGenAIPerfInputTokensMean  = 550
	DefaultGenAIPerfDatasetEntries   = 100
	DefaultVLLMBenchInputLen         = 1024
	DefaultVLLMBenchOutputLen        = 128
	DefaultVLLMBenchNumPrompts       = 1000
	DefaultVLLMBenchBurstiness       = 1.0
	DefaultVLLMBenchReadyCheckTimout = 600.0
	// DefaultInferenceXRangeRatio: the fork's default --random-range-ratio
	// (every InferenceX recipe passes 0.8, RANDOM_RANGE_RATIO).
	DefaultInferenceXRangeRatio = 1.0
	// DefaultVLLMBenchOldRangeRatio: vLLM's default --random-range-ratio
	// before 0.8.4 (benchmark_serving.py, default=1.0: every length L).
	DefaultVLLMBenchOldRangeRatio = 1.0
)

// benchmarkDefaults fills the tool options the input left out.
func benchmarkDefaults(b *Benchmark, path string, present func(string) bool) {
	given := func(k string) bool { return present(path + "." + k) }
	switch t := b.Tool.(type) {
	case AIPerfBenchmark:
		rel := t.release()
		counted := t.NumConversations != nil && !rel.Before(aiperfConversationsCount) // a count of its own
		if !given("request_count") && t.BenchmarkDuration == 0 && !counted {          // a duration run sends until it ends
			t.RequestCount = DefaultAIPerfRequestCount
		}
		if !given("synthetic_input_tokens_mean") {
			t.SyntheticInputTokensMean = DefaultAIPerfInputTokensMean
		}
		if !given("num_dataset_entries") {
			t.NumDatasetEntries = DefaultAIPerfNumDatasetEntries
			switch {
			case t.NumConversations != nil && (rel.Before(aiperfConversationsCount) || !rel.Before(aiperfEntriesFollowCounts)):
				t.NumDatasetEntries = *t.NumConversations // its other name; from 0.9.0, the entries' first fallback
			case given("request_count") && !rel.Before(aiperfEntriesFollowCounts):
				t.NumDatasetEntries = t.RequestCount
			}
		}
		if t.DatasetSamplingStrategy == "" {
			t.DatasetSamplingStrategy = DefaultDatasetSampling
		}
		if !given("concurrency") && t.RequestRate == nil {
			t.Concurrency = 1
		}
		if t.RequestRateMode == "" && t.ArrivalSmoothness != 0 && t.RequestRate != nil && t.smoothnessAlone() {
			t.RequestRateMode = ArrivalGamma // a smoothness is a gamma shape (aiperfSmoothnessRefused)
		}
		if t.RequestRateMode == ArrivalGamma && !given("arrival_smoothness") {
			t.ArrivalSmoothness = 1 // GammaIntervalGenerator: smoothness or 1.0
		}
		b.Tool = t
	case GenAIPerfBenchmark:
		if !given("concurrency") {
			t.Concurrency = 1
		}
		if !given("request_count") {
			t.RequestCount = DefaultGenAIPerfRequestCount
		}
		if !given("synthetic_input_tokens_mean") {
			t.SyntheticInputTokensMean = DefaultGenAIPerfInputTokensMean
		}
		if !given("num_dataset_entries") {
			t.NumDatasetEntries = DefaultGenAIPerfDatasetEntries
		}
		b.Tool = t
	case InferencePerfBenchmark:
		if t.API.Type == "" {
			t.API.Type = "completion"
		}
		if t.Load.Type == "" {
			t.Load.Type = "constant"
		}
		if !given("load.interval") {
			t.Load.Interval = defaultIPStageInterval
		}
		if sp := t.Data.SharedPrefix; sp != nil { // SharedPrefix's defaults
			q := "data.shared_prefix."
			for key, f := range map[string]*int{"num_groups": &sp.NumGroups, "num_prompts_per_group": &sp.NumPromptsPerGroup,
				"system_prompt_len": &sp.SystemPromptLen, "question_len": &sp.QuestionLen, "output_len": &sp.OutputLen} {
				if !given(q + key) {
					*f = map[string]int{"num_groups": 10, "num_prompts_per_group": 10, "system_prompt_len": 100, "question_len": 50, "output_len": 50}[key]
				}
			}
		}
		for _, key := range []string{"input_distribution", "output_distribution"} { // Distribution's defaults
			d := t.Data.InputDistribution
			if key == "output_distribution" {
				d = t.Data.OutputDistribution
			}
			if d == nil {
				continue
			}
			q := "data." + key + "."
			if !given(q + "min") {
				d.Min = 10
			}
			if !given(q + "max") {
				d.Max = 1024
			}
			if !given(q + "mean") {
				d.Mean = 512
			}
			if !given(q + "std_dev") {
				d.StdDev = 200
			}
		}
		b.Tool = t
	case SGLangBenchServing:
		b.Tool = sglangBenchDefaults(t, given)
	case VLLMBenchServe:
		if t.Variant == "" {
			t.Variant = VariantVLLM
		}
		if t.DatasetName == "" {
			t.DatasetName = "random"
		}
		if !given("random_input_len") {
			t.RandomInputLen = DefaultVLLMBenchInputLen
		}
		if !given("random_output_len") {
			t.RandomOutputLen = DefaultVLLMBenchOutputLen
		}
		if !given("random_range_ratio") && t.Variant == VariantInferenceX {
			t.RandomRangeRatio = DefaultInferenceXRangeRatio
		}
		if !given("num_prompts") {
			t.NumPrompts = DefaultVLLMBenchNumPrompts
		}
		if !given("burstiness") {
			t.Burstiness = DefaultVLLMBenchBurstiness
		}
		b.Tool = t // the ready check's default follows the version (versionDefault)
	}
}

// versionDefault fills tool vllm_bench_serve's client version from the
// engine's release when neither names one, then what follows from that
// version: ignore_eos for the random dataset (vllmRandomIgnoresEOS), the
// ready check's timeout when not given (vllmReadyCheckOff) and, when
// rangeGiven is false, --random-range-ratio's default: 1.0 before 0.8.4
// (benchmark_serving.py's default=1.0, RandomDataset.DEFAULT_RANGE_RATIO in
// benchmarks/benchmark_dataset.py: fixed lengths in its [⌊r·L⌋, L] window),
// 0.0 from it (pull request 16126 made the window symmetric, default 0).
func (b *Benchmark) versionDefault(engineVersion string, rangeGiven bool) {
	t, ok := b.Tool.(VLLMBenchServe)
	if !ok || t.Variant != VariantVLLM {
		return
	}
	if t.Version == "" {
		t.Version = NewestVLLMBenchRelease
		if rel, _, err := ResolveBackendVersion(engineVersion); engineVersion != "" && err == nil {
			t.Version = rel.String()
		}
	}
	rel, _, err := ResolveBackendVersion(t.Version)
	known := err == nil
	if !rangeGiven && known && rel.Before(vllmSymmetricRange) {
		t.RandomRangeRatio = DefaultVLLMBenchOldRangeRatio
	}
	if known && !rel.Before(vllmRandomIgnoresEOS) && t.DatasetName == "random" {
		t.IgnoreEOS = true // whatever --ignore-eos says (vllmRandomIgnoresEOS)
	}
	if t.ReadyCheckTimeoutSec == nil {
		v := DefaultVLLMBenchReadyCheckTimout
		if known && !rel.Before(vllmReadyCheckOff) {
			v = 0
		}
		t.ReadyCheckTimeoutSec = &v
	}
	b.Tool = t
}

// vllmRandomIgnoresEOS is the first vLLM release whose client sends every
// request of the random (and random-mm) dataset with ignore_eos, given
// --ignore-eos or not: main_async in vllm/benchmarks/serve.py sets
// args.ignore_eos = True for those datasets on the OpenAI-compatible backends
// (vllm, openai — the default — and openai-chat), pull request 28227,
// "Default ignore_eos True for random dataset", merged 2025-11-06; 0.11.0's
// main_async has no such line, 0.11.1's has it.
// NewestVLLMBenchRelease is the newest release whose `vllm bench serve`
// client rules the ones here were read against, the version a benchmark
// takes when neither it nor the engine names one: 0.34.0. From 0.24.0 to
// 0.34.0 RandomDataset (vllm/benchmarks/datasets/datasets.py: the length
// window, the prefix, the special-token offset), the warm-up and the
// initial test request, get_request's delays and ramp-up, calculate_metrics'
// TTFT, TPOT, ITL and goodput and the percentiles read the same; what
// changed is --probe-request-rate (0.27.0, vllmProbeRequests), the
// client_queue_time and e2el_including_client_queue sections and the
// refusal of --max-concurrency ≤ 0 (0.30.0: the command line's parser,
// python/aisimulate/cli/bench.py).
const NewestVLLMBenchRelease = "0.34.0"

// vllmProbeRequests is the vLLM release that adds --probe-request-rate
// (0.27.0's vllm/benchmarks/serve.py; 0.26.0's has no such option).
var vllmProbeRequests = Release{0, 27, 0}

var vllmRandomIgnoresEOS = Release{0, 11, 1}

// vllmReadyCheckOff is the vLLM release whose client skips the ready check
// unless --ready-check-timeout-sec is given (pull request 30975, merged
// after 0.13.0's branch).
var vllmReadyCheckOff = Release{0, 14, 0}

func (b *Benchmark) validate(path string) error {
	if b.Tool == nil {
		return benchmarkUnion.required(path)
	}
	if err := b.Tool.validate(path); err != nil {
		return err
	}
	if o := b.ResponseOverhead; o != nil {
		p := path + ".response_overhead."
		return firstErr(checkFloat(p+"base_ms", "ResponseOverhead.base_ms", o.BaseMs),
			checkFloat(p+"per_output_token_us", "ResponseOverhead.per_output_token_us", o.PerOutputTokenUs),
			checkFloat(p+"jitter_ms", "ResponseOverhead.jitter_ms", o.JitterMs))
	}
	return nil
}

func (t AIPerfBenchmark) validate(path string) error {
	p := path + "."
	if t.Version != "" {
		if _, err := toolRelease(t.Version, "AIPerf"); err != nil {
			return errorf(p+"version", "%v", err)
		}
	}
	rel := t.release()
	if t.NumConversations != nil {
		c := *t.NumConversations
		if err := checkInt(p+"num_conversations", "AIPerfBenchmark.num_conversations", c); err != nil {
			return err
		}
		switch {
		case t.BenchmarkDuration != 0:
			return errorf(p+"num_conversations", "with benchmark_duration is not simulated (give a count or a duration)")
		case rel.Before(aiperfConversationsCount) && c != t.NumDatasetEntries:
			return errorf(p+"num_conversations", "is another name of num_dataset_entries before AIPerf 0.3.0 (this is %s): give one of them, got %d and %d", t.versionName(), c, t.NumDatasetEntries)
		case rel.Before(aiperfEntriesFollowCounts) && !rel.Before(aiperfConversationsCount) && t.RequestCount != 0:
			return errorf(p+"request_count", "cannot be given with num_conversations: AIPerf %s refuses it (\"Both a request-count and number of conversations are set\"): the conversations are the count", t.versionName())
		}
	}
	if err := t.validateCacheBust(p + "cache_bust"); err != nil {
		return err
	}
	if err := t.validateRange(p); err != nil {
		return err
	}
	if t.RequestRateMode != "" || t.ArrivalSmoothness != 0 {
		switch {
		case t.RequestRate == nil:
			return errorf(p+"request_rate_mode", "needs request_rate (without one AIPerf sends as a closed loop of concurrency)")
		case t.RequestRateMode != "":
			if err := checkEnum(p+"request_rate_mode", "AIPerfBenchmark.request_rate_mode", t.RequestRateMode); err != nil {
				return err
			}
		}
		switch gamma := t.RequestRateMode == ArrivalGamma; {
		case gamma && rel.Before(aiperfGamma):
			return errorf(p+"request_rate_mode", "gamma is an arrival pattern of AIPerf 0.5.0 and later (this is %s)", t.versionName())
		case !gamma && t.ArrivalSmoothness != 0:
			return errorf(p+"arrival_smoothness", "belongs to request_rate_mode gamma (AIPerf 0.5.0–0.8.x and 0.12.0 and later take it alone as gamma; this is %s)", t.versionName())
		case gamma:
			if err := checkFloat(p+"arrival_smoothness", "AIPerfBenchmark.arrival_smoothness", t.ArrivalSmoothness); err != nil {
				return err
			}
		}
	}
	if g := t.BenchmarkGracePeriod; g != nil {
		if t.BenchmarkDuration == 0 {
			return errorf(p+"benchmark_grace_period", "needs benchmark_duration (AIPerf: \"--benchmark-grace-period can only be used with duration-based benchmarking\")")
		}
		if err := checkFloat(p+"benchmark_grace_period", "Stop.grace_s", *g); err != nil {
			return err
		}
	}
	if t.BenchmarkDuration != 0 && t.RequestCount != 0 {
		return errorf(p+"request_count", "cannot be given with benchmark_duration: AIPerf refuses it (\"Count-based and duration-based benchmarking cannot be used together\"): a duration run sends until the duration ends")
	}
	if t.BenchmarkDuration == 0 && t.measured() == t.RequestCount {
		if err := checkInt(p+"request_count", "AIPerfBenchmark.request_count", t.RequestCount); err != nil {
			return err
		}
	}
	if err := firstErr(checkInt(p+"warmup_request_count", "AIPerfBenchmark.warmup_request_count", t.WarmupRequestCount),
		checkInt(p+"synthetic_input_tokens_mean", "AIPerfBenchmark.synthetic_input_tokens_mean", t.SyntheticInputTokensMean),
		checkFloat(p+"synthetic_input_tokens_stddev", "AIPerfBenchmark.synthetic_input_tokens_stddev", t.SyntheticInputTokensStddev),
		checkFloat(p+"output_tokens_stddev", "AIPerfBenchmark.output_tokens_stddev", t.OutputTokensStddev),
		checkInt(p+"num_dataset_entries", "AIPerfBenchmark.num_dataset_entries", t.NumDatasetEntries),
		checkEnum(p+"dataset_sampling_strategy", "AIPerfBenchmark.dataset_sampling_strategy", t.DatasetSamplingStrategy),
		checkFloat(p+"benchmark_duration", "AIPerfBenchmark.benchmark_duration", t.BenchmarkDuration)); err != nil {
		return err
	}
	if t.OutputTokensMean == 0 {
		return errorf(p+"output_tokens_mean", "is required: without --output-tokens-mean the model decides when a response ends, which the simulation cannot know")
	}
	if err := checkInt(p+"output_tokens_mean", "AIPerfBenchmark.output_tokens_mean", t.OutputTokensMean); err != nil {
		return err
	}
	if !t.IgnoreEOS {
		return errorf(p+"ignore_eos", "must be true (--extra-inputs ignore_eos:true): a response that may end at the model's end-of-sequence token has a length the simulation cannot know")
	}
	switch {
	case t.RequestRate != nil && *t.RequestRate <= 0:
		return errorf(p+"request_rate", "must be > 0 (AIPerf's --request-rate), got %g", *t.RequestRate)
	case t.RequestRate != nil:
		if err := checkFloat(p+"request_rate", "AIPerfBenchmark.request_rate", *t.RequestRate); err != nil {
			return err
		}
		if t.Concurrency > 0 { // the rate's arrivals capped (RateLoad.MaxConcurrency)
			if err := checkInt(p+"concurrency", "AIPerfBenchmark.concurrency", t.Concurrency); err != nil {
				return err
			}
		}
		if t.WarmupRequestCount > 0 {
			return errorf(p+"warmup_request_count", "with request_rate is not simulated (a warm-up phase belongs to a closed loop here): give concurrency alone, or no warm-up")
		}
	default:
		if err := checkInt(p+"concurrency", "AIPerfBenchmark.concurrency", t.Concurrency); err != nil {
			return err
		}
	}
	return nil
}

func (t VLLMBenchServe) validate(path string) error {
	p := path + "."
	if err := checkEnum(p+"variant", "VLLMBenchServe.variant", t.Variant); err != nil {
		return err
	}
	if t.DatasetName != "random" {
		return errorf(p+"dataset_name", "%s is not simulated (random is: a trace replays through traffic.source)", quote(t.DatasetName))
	}
	if err := firstErr(checkInt(p+"random_input_len", "VLLMBenchServe.random_input_len", t.RandomInputLen),
		checkInt(p+"random_output_len", "VLLMBenchServe.random_output_len", t.RandomOutputLen),
		checkInt(p+"num_prompts", "VLLMBenchServe.num_prompts", t.NumPrompts),
		checkInt(p+"max_concurrency", "VLLMBenchServe.max_concurrency", t.MaxConcurrency),
		checkInt(p+"num_warmups", "VLLMBenchServe.num_warmups", t.NumWarmups),
		checkFloat(p+"random_range_ratio", "VLLMBenchServe.random_range_ratio", t.RandomRangeRatio),
		checkFloat(p+"burstiness", "VLLMBenchServe.burstiness", t.Burstiness)); err != nil {
		return err
	}
	if err := checkInt(p+"random_prefix_len", "VLLMBenchServe.random_prefix_len", t.RandomPrefixLen); err != nil {
		return err
	}
	if t.RandomPrefixLen != 0 {
		return errorf(p+"random_prefix_len", "a shared prefix of every prompt is not simulated (give 0)")
	}
	if t.ReadyCheckTimeoutSec != nil {
		if t.Variant != VariantVLLM {
			return errorf(p+"ready_check_timeout_sec", "belongs to variant %s (the InferenceX fork has no ready check)", VariantVLLM)
		}
		if err := checkFloat(p+"ready_check_timeout_sec", "VLLMBenchServe.ready_check_timeout_sec", *t.ReadyCheckTimeoutSec); err != nil {
			return err
		}
	}
	switch t.Variant {
	case VariantVLLM:
		if t.Date != "" {
			return errorf(p+"date", "belongs to variant %s (variant %s takes version)", VariantInferenceX, VariantVLLM)
		}
		if _, _, err := ResolveBackendVersion(t.Version); err != nil {
			return errorf(p+"version", "%v", err)
		}
	case VariantInferenceX:
		if t.Version != "" {
			return errorf(p+"version", "belongs to variant %s (variant %s takes date)", VariantVLLM, VariantInferenceX)
		}
		if t.Date != "" {
			if _, err := time.Parse("2006-01-02", t.Date); err != nil {
				return errorf(p+"date", "%s is not a date (want YYYY-MM-DD)", quote(t.Date))
			}
		}
	}
	if _, _, err := t.Lengths(); err != nil {
		return errorf(p+"random_range_ratio", "%v", err)
	}
	if !t.IgnoreEOS {
		return errorf(p+"ignore_eos", "must be true (--ignore-eos; vLLM's client sets it itself for the random dataset from 0.11.1, this is %s): a response that may end at the model's end-of-sequence token has a length the simulation cannot know", t.clientName())
	}
	if t.RequestRate == nil && t.MaxConcurrency == 0 && t.NumPrompts > MaxConcurrency {
		return errorf(p+"num_prompts", "must be ≤ %d without max_concurrency or request_rate (every prompt is sent at once, a client each: traffic.load.concurrency's limit), got %d", MaxConcurrency, t.NumPrompts)
	}
	if t.ProbeRequestRate != nil {
		if err := t.validateProbes(p + "probe_request_rate"); err != nil {
			return err
		}
	}
	if t.RequestRate != nil {
		if r := *t.RequestRate; r <= 0 {
			return errorf(p+"request_rate", "must be > 0 (vLLM's get_request asserts a positive request rate; leave it out for inf, every prompt at once), got %g", r)
		}
		if err := checkFloat(p+"request_rate", "VLLMBenchServe.request_rate", *t.RequestRate); err != nil {
			return err
		}
	}
	return nil
}

// validateProbes checks t's --probe-request-rate (vllmProbeRequests).
func (t VLLMBenchServe) validateProbes(path string) error {
	r := *t.ProbeRequestRate
	if math.IsNaN(r) || math.IsInf(r, 0) || r < 0 {
		return errorf(path, "must be a number ≥ 0, got %g", r)
	}
	if t.Variant != VariantVLLM {
		return errorf(path, "belongs to variant %s (vLLM 0.27.0 and later)", VariantVLLM)
	}
	if rel, _, err := ResolveBackendVersion(t.Version); err == nil && rel.Before(vllmProbeRequests) {
		return errorf(path, "is an option of vLLM 0.27.0 and later (this is %s)", t.clientName())
	}
	if r > 0 {
		return errorf(path, "%g is not simulated: the client would send one-token probe requests at that rate beside the prompts, past max_concurrency (give 0, the default: none)", r)
	}
	return nil
}

// versionName names t's release in a message: "0.4.0", or "unversioned".
func (t AIPerfBenchmark) versionName() string {
	if t.Version == "" {
		return "without a version"
	}
	return t.Version
}

// vllmRescaledDelays is the first vLLM release whose get_request draws
// every delay first and rescales their running sum so that the last is
// num_prompts / request_rate (pull request 21108, "Sending request strictly
// follows the random intervals": 0.10.0's vllm/benchmarks/serve.py has the
// normalize_factor, 0.9.2's sleeps each gap as drawn).
var vllmRescaledDelays = Release{0, 10, 0}

// rescalesDelays reports whether t's client rescales its rate's delays
// (variant vllm from 0.10.0; InferenceX's fork keeps the older loop).
func (t VLLMBenchServe) rescalesDelays() bool {
	if t.Variant != VariantVLLM {
		return false
	}
	rel, _, err := ResolveBackendVersion(t.Version)
	return err == nil && !rel.Before(vllmRescaledDelays)
}

// clientName names t's client in a message: "vLLM 0.11.0", "InferenceX's fork".
func (t VLLMBenchServe) clientName() string {
	if t.Variant == VariantInferenceX {
		return "InferenceX's fork"
	}
	return "vLLM " + t.Version
}

// symmetric reports whether t draws lengths in vLLM's window around L
// (variant vllm from 0.8.4) rather than in [⌊r·L⌋, L].
func (t VLLMBenchServe) symmetric() bool {
	if t.Variant != VariantVLLM {
		return false
	}
	rel, _, err := ResolveBackendVersion(t.Version)
	return err == nil && !rel.Before(vllmSymmetricRange)
}

// Lengths are the input and output length distributions of t's random
// dataset: InferenceX's fork and vLLM before 0.8.4 draw each uniformly in
// [⌊r·L⌋, L] (r in (0, 1]; sample_uniform in the fork); vLLM from 0.8.4 in
// [⌊L·(1−r)⌋, ⌈L·(1+r)⌉] with r in [0, 1) and an output of at least 1
// (RandomDataset.get_sampling_params, vllm/benchmarks/datasets.py). Input
// and output are drawn independently. (vLLM's later releases subtract the
// tokenizer's special tokens from L first, which adds them back to the
// prompt the server sees: the window here is the server's, a token or so
// wide of that.)
func (t VLLMBenchServe) Lengths() (isl, osl Length, err error) {
	r := t.RandomRangeRatio
	if t.symmetric() {
		if r >= 1 {
			return isl, osl, fmt.Errorf("%g: vLLM %s draws lengths in [L·(1−r), L·(1+r)] and wants r in [0, 1)", r, t.Version)
		}
		lo := func(n int) int { return int(math.Floor(float64(n) * (1 - r))) }
		hi := func(n int) int { return int(math.Ceil(float64(n) * (1 + r))) }
		return window(max(1, lo(t.RandomInputLen)), hi(t.RandomInputLen)), window(max(1, lo(t.RandomOutputLen)), max(1, hi(t.RandomOutputLen))), nil
	}
	if r <= 0 || r > 1 {
		return isl, osl, fmt.Errorf("%g: this client draws lengths in [⌊r·L⌋, L] and wants r in (0, 1]", r)
	}
	lo := func(n int) int { return max(1, int(math.Floor(float64(n)*r))) }
	return window(lo(t.RandomInputLen), t.RandomInputLen), window(lo(t.RandomOutputLen), t.RandomOutputLen), nil
}

func window(lo, hi int) Length {
	if lo == hi {
		return Length{Kind: FixedLength{Value: lo}}
	}
	return Length{Kind: UniformLength{Min: lo, Max: hi}}
}

// warmups is the requests t sends before its measured ones: the initial test
// request (vLLM's when ReadyCheckTimeoutSec > 0; the InferenceX fork's before
// 2026-01-21) and NumWarmups, all copies of the first prompt.
func (t VLLMBenchServe) warmups() int {
	n := t.NumWarmups
	switch t.Variant {
	case VariantVLLM:
		if t.ReadyCheckTimeoutSec == nil || *t.ReadyCheckTimeoutSec > 0 {
			n++
		}
	case VariantInferenceX:
		if d, err := time.Parse("2006-01-02", t.Date); err == nil && d.Before(inferenceXInRepo) {
			n++
		}
	}
	return n
}

// Traffic is the replay's traffic for benchmark b (validated), with notes on
// how the tool's options were read.
func (b Benchmark) Traffic() (Traffic, []string) {
	tr, notes := b.Tool.traffic()
	tr.Load.ResponseOverhead = b.ResponseOverhead
	return tr, notes
}

func (t AIPerfBenchmark) traffic() (Traffic, []string) {
	isl := aiperfLength(t.SyntheticInputTokensMean, t.SyntheticInputTokensStddev)
	osl := aiperfLength(t.OutputTokensMean, t.OutputTokensStddev)
	ranged := false
	if i, o, ok := t.rangeLengths(); ok {
		isl, osl, ranged = i, o, true
	}
	n := t.measured()
	if n == 0 { // a duration run: the duration alone stops the sending
		n = durationRunRequests
	}
	src := SyntheticSource{NumRequests: n, ISL: isl, OSL: osl,
		Dataset: &Dataset{Entries: t.NumDatasetEntries, Sampling: t.DatasetSamplingStrategy}}
	var tr Traffic
	tr.Source.Type = src
	if t.RequestRate != nil { // with concurrency, the arrivals capped by it
		l := RateLoad{RateRPS: *t.RequestRate, Arrival: ArrivalPoisson, MaxConcurrency: t.Concurrency}
		switch t.RequestRateMode {
		case ArrivalConstant:
			l.Arrival = ArrivalConstant
		case ArrivalGamma:
			l.Arrival, l.CV = ArrivalGamma, 1/math.Sqrt(t.ArrivalSmoothness)
		}
		if l.MaxConcurrency > 0 && !t.release().Before(aiperfSkipsArrivals) {
			l.CappedArrival = CappedSkip
		}
		tr.Load.Mode = l
	} else {
		l := ConcurrencyLoad{Concurrency: t.Concurrency, WarmupRequests: t.WarmupRequestCount}
		if l.WarmupRequests > 0 && t.warmupIsolated() {
			l.WarmupPrompt = WarmupPromptIsolated
		}
		tr.Load.Mode = l
	}
	tr.Stop.MaxDurationS = t.BenchmarkDuration
	if t.BenchmarkDuration > 0 {
		g := t.graceS()
		tr.Stop.GraceS = &g
	}
	var notes []string
	if l, ok := tr.Load.Mode.(ConcurrencyLoad); ok && l.WarmupPrompt == WarmupPromptIsolated {
		notes = append(notes, fmt.Sprintf("AIPerf %s marks each warm-up prompt at its start (%s): the warm-up fills no prefix the measured requests find (the marker's few tokens are not added)", t.Version, t.isolationName()))
	}
	if n == durationRunRequests {
		notes = append(notes, fmt.Sprintf("requests sent until benchmark_duration (%g s) ends; the ones in flight then count if they end within the grace period (%g s), and are canceled if not", t.BenchmarkDuration, t.graceS()))
	}
	if ranged {
		notes = append(notes, fmt.Sprintf("random_range_ratio %g (%s): lengths input %s, output %s, one draw per dataset entry (the stddevs unused)",
			*t.RandomRangeRatio, t.corpusStyle(), lengthText(isl), lengthText(osl)))
	} else if t.SyntheticInputTokensStddev > 0 || t.OutputTokensStddev > 0 {
		notes = append(notes, "a length with a stddev is drawn as round(x + 0.5), x ~ N(mean, std²) clamped to [1, mean + 8·std] (AIPerf: ceil(x), x rejected below 0)")
	}
	return tr, notes
}

// durationRunRequests is the synthetic source's count of a run that a
// duration alone stops (AIPerf's --benchmark-duration without a count): far
// more than any run sends (2^40), never reached or held (the replay sizes
// its records by what is sent).
const durationRunRequests = 1 << 40

// aiperfLength is an AIPerf length of mean and stddev (AIPerfBenchmark).
func aiperfLength(mean int, std float64) Length {
	if std == 0 {
		return Length{Kind: FixedLength{Value: mean}}
	}
	return Length{Kind: NormalLength{Mean: float64(mean) + 0.5, Std: std, Min: 1, Max: int(math.Ceil(float64(mean) + 8*std))}}
}

func (t VLLMBenchServe) traffic() (Traffic, []string) {
	isl, osl, _ := t.Lengths()
	var tr Traffic
	tr.Source.Type = SyntheticSource{NumRequests: t.NumPrompts, ISL: isl, OSL: osl}
	w, prompt := t.warmups(), ""
	if w > 0 {
		prompt = WarmupPromptFirst
	}
	switch {
	case t.RequestRate != nil: // the warm-ups go at once (at most max_concurrency), then the arrivals, queued behind it
		l := RateLoad{RateRPS: *t.RequestRate, Arrival: ArrivalPoisson, WarmupRequests: w, WarmupPrompt: prompt,
			MaxConcurrency: t.MaxConcurrency}
		if l.MaxConcurrency > 0 {
			l.CappedArrival = CappedQueue
			if w > 0 {
				l.WarmupConcurrency = t.MaxConcurrency
			}
		}
		if t.rescalesDelays() { // the last prompt's delay is num_prompts / request_rate
			l.SpanS = float64(t.NumPrompts) / *t.RequestRate
		}
		if t.Burstiness != 1 {
			l.Arrival, l.CV = ArrivalGamma, 1/math.Sqrt(t.Burstiness)
		}
		tr.Load.Mode = l
	case t.MaxConcurrency > 0:
		tr.Load.Mode = ConcurrencyLoad{Concurrency: t.MaxConcurrency, WarmupRequests: w, WarmupPrompt: prompt}
	default: // every prompt at once: a client per prompt
		tr.Load.Mode = ConcurrencyLoad{Concurrency: t.NumPrompts, WarmupRequests: w, WarmupPrompt: prompt}
	}
	notes := []string{fmt.Sprintf("lengths: input %s, output %s", lengthText(isl), lengthText(osl))}
	if w > 0 {
		notes = append(notes, fmt.Sprintf("%d warm-up request(s), copies of the first prompt, waited for before the measured ones", w))
	}
	return tr, notes
}

func lengthText(l Length) string {
	switch k := l.Kind.(type) {
	case FixedLength:
		return fmt.Sprint(k.Value)
	case UniformLength:
		return fmt.Sprintf("uniform [%d, %d]", k.Min, k.Max)
	}
	return l.Name()
}

// MarshalJSON writes traffic with a benchmark as {"benchmark": …} alone (its
// source, load and stop are what the benchmark makes, not given), and
// otherwise as its fields.
func (t Traffic) MarshalJSON() ([]byte, error) {
	if t.Benchmark != nil {
		return json.Marshal(struct {
			Benchmark *Benchmark `json:"benchmark"`
		}{t.Benchmark})
	}
	type fields Traffic // without methods
	return json.Marshal(fields(t))
}

// JSON is t as canonical JSON (metadata.benchmark.traffic).
func (t Traffic) JSON() []byte {
	b, err := json.Marshal(t)
	if err != nil {
		panic("config: traffic does not encode: " + err.Error())
	}
	return b
}

func (t GenAIPerfBenchmark) validate(path string) error {
	p := path + "."
	if err := firstErr(checkInt(p+"concurrency", "GenAIPerfBenchmark.concurrency", t.Concurrency),
		checkInt(p+"request_count", "GenAIPerfBenchmark.request_count", t.RequestCount),
		checkInt(p+"warmup_request_count", "GenAIPerfBenchmark.warmup_request_count", t.WarmupRequestCount),
		checkInt(p+"synthetic_input_tokens_mean", "GenAIPerfBenchmark.synthetic_input_tokens_mean", t.SyntheticInputTokensMean),
		checkFloat(p+"synthetic_input_tokens_stddev", "GenAIPerfBenchmark.synthetic_input_tokens_stddev", t.SyntheticInputTokensStddev),
		checkFloat(p+"output_tokens_stddev", "GenAIPerfBenchmark.output_tokens_stddev", t.OutputTokensStddev),
		checkInt(p+"num_dataset_entries", "GenAIPerfBenchmark.num_dataset_entries", t.NumDatasetEntries)); err != nil {
		return err
	}
	if t.OutputTokensMean == 0 {
		return errorf(p+"output_tokens_mean", "is required: without --output-tokens-mean the model decides when a response ends, which the simulation cannot know")
	}
	if err := checkInt(p+"output_tokens_mean", "GenAIPerfBenchmark.output_tokens_mean", t.OutputTokensMean); err != nil {
		return err
	}
	if !t.IgnoreEOS {
		return errorf(p+"ignore_eos", "must be true (--extra-inputs ignore_eos:true): a response that may end at the model's end-of-sequence token has a length the simulation cannot know")
	}
	return nil
}

func (t GenAIPerfBenchmark) traffic() (Traffic, []string) {
	isl := genaiPerfLength(t.SyntheticInputTokensMean, t.SyntheticInputTokensStddev)
	osl := genaiPerfLength(t.OutputTokensMean, t.OutputTokensStddev)
	var tr Traffic
	tr.Source.Type = SyntheticSource{NumRequests: t.RequestCount, ISL: isl, OSL: osl,
		Dataset: &Dataset{Entries: t.NumDatasetEntries, Sampling: SamplingSequential}}
	l := ConcurrencyLoad{Concurrency: t.Concurrency, WarmupRequests: t.WarmupRequestCount}
	if l.WarmupRequests > 0 {
		l.WarmupPrompt = WarmupPromptLeading
	}
	tr.Load.Mode = l
	notes := []string{"dataset entries in one sequence (perf_analyzer steps each context through them by the number of contexts)"}
	if l.WarmupRequests > 0 {
		notes = append(notes, "the warm-up sends the first measured requests' prompts: the measured phase starts the dataset over")
	}
	return tr, notes
}

// genaiPerfLength is a genai-perf length of mean and stddev (GenAIPerfBenchmark).
func genaiPerfLength(mean int, std float64) Length {
	if std == 0 {
		return Length{Kind: FixedLength{Value: mean}}
	}
	return Length{Kind: NormalLength{Mean: float64(mean) - 0.5, Std: std, Min: 1, Max: int(math.Ceil(float64(mean) + 8*std))}}
}

// ReadyCheck reports whether b's first warm-up request is the tool's initial
// test request, whose failure stops the run before anything is measured:
// vLLM's client with ready_check_timeout_sec > 0 (benchmark() in
// vllm/benchmarks/serve.py raises "Initial test run failed" when the test
// request fails, after wait_for_endpoint retried it until the timeout) and
// InferenceX's fork before 2026-01-21 (the test run of vLLM's older
// benchmark_serving.py, which raises the same).
func (b Benchmark) ReadyCheck() bool {
	t, ok := b.Tool.(VLLMBenchServe)
	return ok && t.warmups() > t.NumWarmups
}
