package config

import (
	"fmt"
	"math"
)

// ToolSGLangBenchServing is SGLang's own load generator, `python -m
// sglang.bench_serving` (python/sglang/bench_serving.py; read at the 0.5.6.post2
// and 0.5.9 releases, whose rules below are the same).
const ToolSGLangBenchServing = "sglang_bench_serving"

// SGLangBenchServing (tool sglang_bench_serving) is `python -m
// sglang.bench_serving` with its random datasets, in its option names
// (argparse dests; defaults from its parser):
//
//   - NumPrompts prompts (sample_random_requests), each with an input and an
//     output length drawn independently by compute_random_lens:
//     np.random.randint(max(int(L·r), 1), L + 1), a uniform integer in
//     [max(⌊L·r⌋, 1), L] (Lengths). Dataset random cuts each prompt out of a
//     ShareGPT conversation (repeated to length), random-ids is consecutive
//     token ids from a random offset: either way no two prompts share a
//     prefix the simulation would see.
//   - The warm-up (benchmark()): WarmupRequests copies of the first prompt
//     with max_new_tokens min(its output length, 32), all sent at once
//     (request_func, not the --max-concurrency semaphore's
//     limited_request_func) and gathered; then a 1 s sleep and the measured
//     phase, whose clock (benchmark_start_time) starts before the first
//     request, which get_request yields at once. The warm-up is in no
//     metric: calculate_metrics sees the measured outputs only.
//   - The measured requests: RequestRate inf (the default) creates every
//     task at once, each waiting on the MaxConcurrency semaphore (none
//     without it: all at once); a rate yields the next request after an
//     exponential gap of mean 1/rate (Poisson, no burstiness option), the
//     semaphore queuing it at the client.
//   - ignore_eos is sent true unless --disable-ignore-eos (payload
//     "ignore_eos": not args.disable_ignore_eos), which is refused here.
//   - The metrics (calculate_metrics) are over the successful measured
//     requests; TPOT per request is (latency − ttft) / (output_len − 1),
//     only for output_len > 1; the duration runs from benchmark_start_time
//     to the end of the last request of any status.
type SGLangBenchServing struct {
	// DatasetName is --dataset-name: random or random-ids (sharegpt, the
	// tool's default, and its other datasets are refused).
	DatasetName string `json:"dataset_name"`
	// RandomInputLen, RandomOutputLen (defaults 1024, 1024) and
	// RandomRangeRatio (default 0.0: every length uniform in [1, L]).
	RandomInputLen   int     `json:"random_input_len"`
	RandomOutputLen  int     `json:"random_output_len"`
	RandomRangeRatio float64 `json:"random_range_ratio"`
	// NumPrompts is --num-prompts (default 1000): the measured requests.
	NumPrompts int `json:"num_prompts"`
	// RequestRate is --request-rate, requests/s (absent: inf, the default).
	RequestRate *float64 `json:"request_rate,omitempty"`
	// MaxConcurrency is --max-concurrency (0: none).
	MaxConcurrency int `json:"max_concurrency,omitempty"`
	// WarmupRequests is --warmup-requests (default 1).
	WarmupRequests int `json:"warmup_requests"`
}

// The defaults of sglang.bench_serving's options (its argparse defaults).
const (
	DefaultSGLangInputLen       = 1024
	DefaultSGLangOutputLen      = 1024
	DefaultSGLangNumPrompts     = 1000
	DefaultSGLangWarmupRequests = 1
	// SGLangWarmupMaxTokens: a warm-up request's max_new_tokens is at most
	// this (benchmark(): output_len=min(test_request.output_len, 32)).
	SGLangWarmupMaxTokens = 32
)

// sglangBenchDefaults fills t's options the input left out.
func sglangBenchDefaults(t SGLangBenchServing, given func(string) bool) SGLangBenchServing {
	if t.DatasetName == "" {
		t.DatasetName = "random"
	}
	if !given("random_input_len") {
		t.RandomInputLen = DefaultSGLangInputLen
	}
	if !given("random_output_len") {
		t.RandomOutputLen = DefaultSGLangOutputLen
	}
	if !given("num_prompts") {
		t.NumPrompts = DefaultSGLangNumPrompts
	}
	if !given("warmup_requests") {
		t.WarmupRequests = DefaultSGLangWarmupRequests
	}
	return t
}

// SGLangRandomLen is the window compute_random_lens draws a length of full
// length n and range ratio r from, uniformly: [max(int(n·r), 1), n]
// (np.random.randint(low, n + 1); int truncates toward zero, so a ratio ≤ 0
// gives [1, n]); an error where numpy's randint raises (low ≥ high: n < 1
// or int(n·r) > n).
func SGLangRandomLen(n int, r float64) (lo, hi int, err error) {
	lo = max(int(float64(n)*r), 1)
	if lo > n {
		return 0, 0, fmt.Errorf("%d × %g: sglang.bench_serving draws np.random.randint(max(int(L·r), 1), L + 1), which fails with low ≥ high (want L ≥ 1 and r ≤ 1)", n, r)
	}
	return lo, n, nil
}

// Lengths are the input and output length distributions of t's random
// dataset (SGLangRandomLen each). The server sees the input length drawn:
// 0.5.9 takes the tokenizer's special tokens off a text prompt, which the
// server's encode adds back.
func (t SGLangBenchServing) Lengths() (isl, osl Length, err error) {
	il, ih, err := SGLangRandomLen(t.RandomInputLen, t.RandomRangeRatio)
	if err != nil {
		return isl, osl, err
	}
	ol, oh, err := SGLangRandomLen(t.RandomOutputLen, t.RandomRangeRatio)
	if err != nil {
		return isl, osl, err
	}
	return window(il, ih), window(ol, oh), nil
}

// clients is the closed loop's clients of t without a rate: MaxConcurrency,
// else every prompt at once.
func (t SGLangBenchServing) clients() int {
	if t.MaxConcurrency > 0 {
		return t.MaxConcurrency
	}
	return t.NumPrompts
}

func (t SGLangBenchServing) validate(path string) error {
	p := path + "."
	switch t.DatasetName {
	case "random", "random-ids":
	default:
		return errorf(p+"dataset_name", "%s is not simulated (random and random-ids are: a trace replays through traffic.source)", quote(t.DatasetName))
	}
	if err := firstErr(checkInt(p+"random_input_len", "SGLangBenchServing.random_input_len", t.RandomInputLen),
		checkInt(p+"random_output_len", "SGLangBenchServing.random_output_len", t.RandomOutputLen),
		checkInt(p+"num_prompts", "SGLangBenchServing.num_prompts", t.NumPrompts),
		checkInt(p+"max_concurrency", "SGLangBenchServing.max_concurrency", t.MaxConcurrency),
		checkInt(p+"warmup_requests", "SGLangBenchServing.warmup_requests", t.WarmupRequests),
		checkFloat(p+"random_range_ratio", "SGLangBenchServing.random_range_ratio", t.RandomRangeRatio)); err != nil {
		return err
	}
	if _, _, err := t.Lengths(); err != nil {
		return errorf(p+"random_range_ratio", "%v", err)
	}
	if t.RequestRate != nil {
		r := *t.RequestRate
		if r <= 0 || math.IsNaN(r) {
			return errorf(p+"request_rate", "must be > 0 (leave it out for inf, every prompt at once), got %g", r)
		}
		if err := checkFloat(p+"request_rate", "SGLangBenchServing.request_rate", r); err != nil {
			return err
		}
		return nil
	}
	if c := t.clients(); c > MaxConcurrency {
		return errorf(p+"num_prompts", "must be ≤ %d without max_concurrency or request_rate (every prompt is sent at once, a client each: traffic.load.concurrency's limit), got %d", MaxConcurrency, t.NumPrompts)
	}
	if c := t.clients(); t.WarmupRequests > c {
		return errorf(p+"warmup_requests", "%d > %d clients is not simulated without request_rate: sglang.bench_serving sends every warm-up at once, past --max-concurrency, and the closed loop here sends them with its clients (give at most %d)", t.WarmupRequests, c, c)
	}
	return nil
}

func (t SGLangBenchServing) traffic() (Traffic, []string) {
	isl, osl, _ := t.Lengths()
	var tr Traffic
	tr.Source.Type = SyntheticSource{NumRequests: t.NumPrompts, ISL: isl, OSL: osl}
	w, prompt, capTokens := t.WarmupRequests, "", 0
	if w > 0 {
		prompt, capTokens = WarmupPromptFirst, SGLangWarmupMaxTokens
	}
	if t.RequestRate != nil { // every warm-up at once, then Poisson arrivals queued at the semaphore
		l := RateLoad{RateRPS: *t.RequestRate, Arrival: ArrivalPoisson, WarmupRequests: w, WarmupPrompt: prompt,
			WarmupMaxOutputTokens: capTokens, MaxConcurrency: t.MaxConcurrency}
		if l.MaxConcurrency > 0 {
			l.CappedArrival = CappedQueue
		}
		tr.Load.Mode = l
	} else {
		tr.Load.Mode = ConcurrencyLoad{Concurrency: t.clients(), WarmupRequests: w, WarmupPrompt: prompt,
			WarmupMaxOutputTokens: capTokens}
	}
	notes := []string{fmt.Sprintf("lengths: input %s, output %s (np.random.randint(max(int(L·r), 1), L + 1))", lengthText(isl), lengthText(osl))}
	if w > 0 {
		notes = append(notes, fmt.Sprintf("%d warm-up request(s), copies of the first prompt with at most %d output tokens, sent at once and waited for; not measured", w, SGLangWarmupMaxTokens))
	}
	return tr, notes
}
