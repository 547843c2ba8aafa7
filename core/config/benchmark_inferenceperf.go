package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// InferencePerfBenchmark (tool inference_perf) is kubernetes-sigs/
// inference-perf run from its config file, in that file's sections and
// names (inference_perf/config/…): api, data (the random and shared_prefix
// generators), load (the constant, poisson and concurrent load types and
// their stages) and server.ignore_eos. Version is inference-perf's release,
// which decides what its metrics measure (InferencePerfMetrics) and which
// options exist.
//
// Load stages run one after another as run_stage runs them
// (inference_perf/loadgen/load_generator.py): int(rate × duration) requests
// per stage, sent from 1 s after the stage begins, by ConstantLoadTimer
// (exponential gaps scaled to the duration) or PoissonLoadTimer (a Poisson
// count each second, spread over it; inference_perf/loadgen/load_timer.py);
// a concurrent stage sends num_requests with concurrency_level in flight. A
// stage is over when all its requests have finished, seen by a once-a-second
// poll, and the next begins load.interval s later.
type InferencePerfBenchmark struct {
	// Version is the inference-perf release (absent: the newest known,
	// InferencePerfNewest).
	Version   string            `json:"version,omitempty"`
	API       InferencePerfAPI  `json:"api"`
	Data      InferencePerfData `json:"data"`
	Load      InferencePerfLoad `json:"load"`
	IgnoreEOS *bool             `json:"ignore_eos,omitempty"` // server.ignore_eos (default true)
}

// InferencePerfAPI is the api section: the endpoint (completion or chat) and
// streaming, which must be on (without it there is no first token to time).
type InferencePerfAPI struct {
	Type      string `json:"type"`
	Streaming bool   `json:"streaming"`
}

// InferencePerfData is the data section: the random generator (random
// token prompts with input_distribution and output_distribution lengths) or
// shared_prefix (num_groups system prompts of system_prompt_len tokens,
// num_prompts_per_group questions of question_len tokens each, output_len
// tokens out; every prompt cycled through).
type InferencePerfData struct {
	Type               string                     `json:"type"`
	InputDistribution  *InferencePerfDistribution `json:"input_distribution,omitempty"`
	OutputDistribution *InferencePerfDistribution `json:"output_distribution,omitempty"`
	SharedPrefix       *InferencePerfSharedPrefix `json:"shared_prefix,omitempty"`
}

// InferencePerfDistribution is inference-perf's Distribution: Type normal
// (the default: N(mean, std_dev²) clipped to [min, max], then rounded),
// fixed (int(mean)) or uniform ([min, max]); total_count lengths are drawn.
type InferencePerfDistribution struct {
	Min        int     `json:"min"`
	Max        int     `json:"max"`
	Mean       float64 `json:"mean"`
	StdDev     float64 `json:"std_dev"`
	TotalCount int     `json:"total_count,omitempty"`
	Type       string  `json:"type,omitempty"`
}

// InferencePerfSharedPrefix is data.shared_prefix (aliases
// num_unique_system_prompts, num_users_per_system_prompt are the same keys
// in inference-perf; the first names are taken here).
type InferencePerfSharedPrefix struct {
	NumGroups          int `json:"num_groups"`
	NumPromptsPerGroup int `json:"num_prompts_per_group"`
	SystemPromptLen    int `json:"system_prompt_len"`
	QuestionLen        int `json:"question_len"`
	OutputLen          int `json:"output_len"`
}

// InferencePerfLoad is the load section. NumWorkers, WorkerMaxConcurrency
// and WorkerMaxTCPConnections are its client processes and their limits
// (absent: inference-perf's defaults, the client machine's CPU count, 100
// and 2500; InFlightCap).
type InferencePerfLoad struct {
	Type                    string               `json:"type"`
	Interval                float64              `json:"interval"`
	Stages                  []InferencePerfStage `json:"stages"`
	NumWorkers              int                  `json:"num_workers,omitempty"`
	WorkerMaxConcurrency    int                  `json:"worker_max_concurrency,omitempty"`
	WorkerMaxTCPConnections int                  `json:"worker_max_tcp_connections,omitempty"`
}

// The defaults of load.worker_max_concurrency and
// load.worker_max_tcp_connections (inference_perf/config.py, LoadConfig, in
// every release from 0.4.0 to 0.6.1; num_workers defaults to the client
// machine's cpu_count(), which the simulation does not know).
const (
	DefaultIPWorkerMaxConcurrency = 100
	DefaultIPWorkerMaxTCP         = 2500
)

// InFlightCap is the most requests t's client holds at once in a constant
// or poisson stage, and whether it is known. inference-perf's load generator
// (inference_perf/loadgen/load_generator.py, Worker.loop) queues a stage's
// requests at its start; each of num_workers worker processes takes one
// only while it holds fewer than worker_max_concurrency (an asyncio
// semaphore, held from the take, through the wait for the request's send
// time, to the end of its response), and sends it through an aiohttp
// session of worker_max_tcp_connections connections. A send whose time
// comes while the cap is taken waits. Without num_workers the cap is the
// client machine's CPU count times the per-worker limit: known only to be
// at least the per-worker limit (known false, cap that limit). A concurrent
// stage's semaphores are its concurrency_level split over the workers
// (_set_worker_concurrency), so there only the connections can bind.
func (t InferencePerfBenchmark) InFlightCap() (limit int, known bool) {
	w, c := t.Load.WorkerMaxConcurrency, t.Load.WorkerMaxTCPConnections
	if w == 0 {
		w = DefaultIPWorkerMaxConcurrency
	}
	if c == 0 {
		c = DefaultIPWorkerMaxTCP
	}
	per := min(w, c)
	if t.Load.NumWorkers == 0 {
		return per, false
	}
	return t.Load.NumWorkers * per, true
}

// InFlightCapError is the error of a send that finds t's client cap
// (InFlightCap) taken: the simulation has no client-side wait for a slot,
// so the run is refused, naming the fields.
func (t InferencePerfBenchmark) InFlightCapError(path string, inFlight int) error {
	limit, known := t.InFlightCap()
	if !known {
		return errorf(path+".load.num_workers", "is needed: %d requests are in flight at once, and inference-perf's client holds at most num_workers × min(worker_max_concurrency, worker_max_tcp_connections) = num_workers × %d (num_workers defaults to the client machine's CPU count, which the simulation does not know): give it", inFlight, limit)
	}
	return errorf(path+".load.num_workers", "and worker_max_concurrency bind: %d requests would be in flight at once, but inference-perf's %d worker(s) hold at most %d (num_workers × min(worker_max_concurrency, worker_max_tcp_connections)); its later sends would wait for a slot, which is not simulated: raise num_workers or worker_max_concurrency", inFlight, t.Load.NumWorkers, limit)
}

// InferencePerfStage is one load stage: rate (QPS) and duration (s) for
// types constant and poisson, num_requests and concurrency_level for
// concurrent.
type InferencePerfStage struct {
	Rate             float64 `json:"rate,omitempty"`
	Duration         int     `json:"duration,omitempty"`
	NumRequests      int     `json:"num_requests,omitempty"`
	ConcurrencyLevel int     `json:"concurrency_level,omitempty"`
}

// inference-perf's releases where what the simulation reads changed.
var (
	// InferencePerfNewest is the newest release known here (v0.6.1, 2026-07-23).
	InferencePerfNewest = "0.6.1"
	// ipConcurrentSince: load type concurrent (pull request 263, v0.3.0).
	ipConcurrentSince = Release{0, 3, 0}
	// ipTokenTimesSince: TTFT, TPOT and ITL from the response's tokens, not
	// its SSE messages (pull requests 410 and 452, v0.5.0); the
	// distributions' type (v0.5.0).
	ipTokenTimesSince = Release{0, 5, 0}
)

// The defaults of inference-perf's config (its pydantic models).
const (
	defaultIPStageInterval = 1.0
	// IPStageLeadS: run_stage starts a stage's timer 1 s after the stage
	// begins (start_time = perf_counter() + 1); IPStagePollS: it checks the
	// stage's finished count once a second.
	IPStageLeadS = 1.0
	IPStagePollS = 1.0
)

// ipRelease parses an inference-perf version ("0.4.0", "v0.5.0"): MAJOR.MINOR[.PATCH].
func ipRelease(v string) (Release, error) { return toolRelease(v, "inference-perf") }

// toolRelease parses a load generator's version ("0.4.0", "v0.5.0"):
// MAJOR.MINOR[.PATCH]; tool names it in the error.
func toolRelease(v, tool string) (Release, error) {
	s := strings.TrimPrefix(strings.TrimSpace(v), "v")
	parts := strings.Split(s, ".")
	bad := fmt.Errorf("%s is not an %s release (want MAJOR.MINOR[.PATCH], e.g. 0.4.0)", quote(v), tool)
	if len(parts) < 2 || len(parts) > 3 {
		return Release{}, bad
	}
	var n [3]int
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 {
			return Release{}, bad
		}
		n[i] = x
	}
	return Release{n[0], n[1], n[2]}, nil
}

// Release is t's inference-perf release (Version, or the newest known).
func (t InferencePerfBenchmark) Release() Release {
	v := t.Version
	if v == "" {
		v = InferencePerfNewest
	}
	r, _ := ipRelease(v)
	return r
}

// TokenTimes reports whether t's release times a response's tokens (from
// 0.5.0: TTFT to the first content, TPOT = (last − first) / (tokens − 1),
// ITL every gap between tokens, requests of at least 2 tokens) rather than
// its SSE messages (before: every message including the closing [DONE],
// TPOT = (last − first) / (messages − 1), so a 1-token response counts).
func (t InferencePerfBenchmark) TokenTimes() bool { return !t.Release().Before(ipTokenTimesSince) }

func (t InferencePerfBenchmark) validate(path string) error {
	p := path + "."
	if t.Version != "" {
		if _, err := ipRelease(t.Version); err != nil {
			return errorf(p+"version", "%v", err)
		}
	}
	rel := t.Release()
	switch t.API.Type {
	case "completion", "chat":
	default:
		return errorf(p+"api.type", "%s is not simulated (completion and chat are)", quote(t.API.Type))
	}
	if !t.API.Streaming {
		return errorf(p+"api.streaming", "must be true: without streaming inference-perf times no first token (TTFT, TPOT and ITL are undefined)")
	}
	if t.IgnoreEOS != nil && !*t.IgnoreEOS {
		return errorf(p+"ignore_eos", "must be true (server.ignore_eos): a response that may end at the model's end-of-sequence token has a length the simulation cannot know")
	}
	if err := t.validateLoad(p+"load.", rel); err != nil {
		return err
	}
	return t.validateData(p+"data.", rel)
}

func (t InferencePerfBenchmark) validateLoad(p string, rel Release) error {
	l := t.Load
	switch l.Type {
	case "constant", "poisson":
	case "concurrent":
		if rel.Before(ipConcurrentSince) {
			return errorf(p+"type", "concurrent came with inference-perf 0.3.0, not in %s", rel)
		}
	default:
		return errorf(p+"type", "%s is not simulated (constant, poisson and concurrent are; a trace replays through traffic.source)", quote(l.Type))
	}
	for key, v := range map[string]int{"num_workers": l.NumWorkers, "worker_max_concurrency": l.WorkerMaxConcurrency,
		"worker_max_tcp_connections": l.WorkerMaxTCPConnections} {
		if v < 0 || v > MaxConcurrency {
			return errorf(p+key, "must be in [1, %d], got %d", MaxConcurrency, v)
		}
	}
	if !(l.Interval >= 0 && l.Interval <= MaxDurationS) {
		return errorf(p+"interval", "must be in [0, %g] s, got %v", MaxDurationS, l.Interval)
	}
	if len(l.Stages) == 0 {
		return errorf(p+"stages", "is required: at least one stage (a sweep, which probes the server's saturation first, is not simulated)")
	}
	for i, s := range l.Stages {
		sp := fmt.Sprintf("%sstages[%d].", p, i)
		if l.Type == "concurrent" {
			if s.NumRequests < 1 || s.ConcurrencyLevel < 1 || s.ConcurrencyLevel > MaxConcurrency {
				return errorf(sp+"num_requests", "a concurrent stage needs num_requests ≥ 1 and concurrency_level in [1, %d], got %d and %d", MaxConcurrency, s.NumRequests, s.ConcurrencyLevel)
			}
			if s.Rate != 0 || s.Duration != 0 {
				return errorf(sp+"rate", "a concurrent stage takes num_requests and concurrency_level, not rate and duration")
			}
			// the stage's semaphores hold its level; each worker's connections cap its share
			tcp, n := l.WorkerMaxTCPConnections, max(l.NumWorkers, 1)
			if tcp == 0 {
				tcp = DefaultIPWorkerMaxTCP
			}
			if share := (s.ConcurrencyLevel + n - 1) / n; share > tcp {
				field := "num_workers"
				if l.NumWorkers == 0 {
					return errorf(p+field, "is needed: stage %d's concurrency_level %d over num_workers workers (default: the client machine's CPU count, unknown here) may exceed worker_max_tcp_connections (%d) a worker: give num_workers", i, s.ConcurrencyLevel, tcp)
				}
				return errorf(p+"worker_max_tcp_connections", "binds: stage %d's concurrency_level %d over %d workers is %d a worker, above its %d connections (later sends would wait for one, which is not simulated)", i, s.ConcurrencyLevel, n, share, tcp)
			}
			continue
		}
		if s.NumRequests != 0 || s.ConcurrencyLevel != 0 {
			return errorf(sp+"num_requests", "should not be set for %s stages (inference-perf refuses it)", l.Type)
		}
		if !(s.Rate >= MinRateRPS && s.Rate <= 1e9) || s.Duration < 1 {
			return errorf(sp+"rate", "a %s stage needs rate > 0 and duration ≥ 1 s, got %v and %d", l.Type, s.Rate, s.Duration)
		}
		if int(math.Floor(s.Rate*float64(s.Duration))) < 1 {
			return errorf(sp+"rate", "rate × duration = %g sends no request (inference-perf sends int(rate × duration))", s.Rate*float64(s.Duration))
		}
	}
	return nil
}

func (t InferencePerfBenchmark) validateData(p string, rel Release) error {
	d := t.Data
	switch d.Type {
	case "random":
		if d.SharedPrefix != nil {
			return errorf(p+"shared_prefix", "belongs to data type shared_prefix")
		}
		for key, dist := range map[string]*InferencePerfDistribution{"input_distribution": d.InputDistribution, "output_distribution": d.OutputDistribution} {
			if dist == nil {
				return errorf(p+key, "is required for data type random")
			}
			if err := dist.validate(p+key+".", rel); err != nil {
				return err
			}
		}
		for i, n := range t.stageRequests() {
			if tc := min(d.InputDistribution.TotalCount, d.OutputDistribution.TotalCount); n > tc {
				return errorf(fmt.Sprintf("%sload.stages[%d]", strings.TrimSuffix(p, "data."), i),
					"sends %d requests, but the random generator draws total_count = %d lengths and every stage takes them from the first (inference-perf fails past them)", n, tc)
			}
		}
	case "shared_prefix":
		if d.InputDistribution != nil || d.OutputDistribution != nil {
			return errorf(p+"input_distribution", "belongs to data type random (shared_prefix takes question_len and output_len)")
		}
		sp := d.SharedPrefix
		if sp == nil {
			return errorf(p+"shared_prefix", "is required for data type shared_prefix")
		}
		q := p + "shared_prefix."
		switch {
		case sp.NumGroups < 1 || sp.NumPromptsPerGroup < 1 || sp.NumGroups*sp.NumPromptsPerGroup > MaxDatasetEntries:
			return errorf(q+"num_groups", "num_groups and num_prompts_per_group must be ≥ 1 with at most %d prompts in all, got %d × %d", MaxDatasetEntries, sp.NumGroups, sp.NumPromptsPerGroup)
		case sp.SystemPromptLen < 0 || sp.SystemPromptLen > 1<<30:
			return errorf(q+"system_prompt_len", "must be in [0, 2^30], got %d", sp.SystemPromptLen)
		case sp.QuestionLen < 1 || sp.QuestionLen > 1<<30:
			return errorf(q+"question_len", "must be in [1, 2^30], got %d", sp.QuestionLen)
		case sp.OutputLen < MinOutputTokens:
			return errorf(q+"output_len", "must be ≥ %d, got %d", MinOutputTokens, sp.OutputLen)
		}
	default:
		return errorf(p+"type", "%s is not simulated (random and shared_prefix are; a trace replays through traffic.source)", quote(d.Type))
	}
	return nil
}

func (d InferencePerfDistribution) validate(p string, rel Release) error {
	switch d.Type {
	case "", "normal", "fixed", "uniform":
	default:
		return errorf(p+"type", "%s is not simulated (normal, fixed and uniform are)", quote(d.Type))
	}
	if d.Type != "" && rel.Before(ipTokenTimesSince) {
		return errorf(p+"type", "a distribution's type came with inference-perf 0.5.0 (%s draws normal lengths only)", rel)
	}
	switch {
	case d.Min < 1 || d.Max < d.Min:
		return errorf(p+"min", "want 1 ≤ min ≤ max, got min %d, max %d", d.Min, d.Max)
	case d.TotalCount < 1:
		return errorf(p+"total_count", "is required (≥ 1): the random generator draws total_count lengths")
	case !(d.StdDev >= 0) || math.IsInf(d.StdDev, 0):
		return errorf(p+"std_dev", "must be ≥ 0, got %v", d.StdDev)
	case d.kind() == "normal" && !(d.Mean >= float64(d.Min) && d.Mean <= float64(d.Max)):
		return errorf(p+"mean", "must lie in [min, max] (inference-perf refuses it), got %v", d.Mean)
	case d.kind() == "fixed" && !(math.Floor(d.Mean) >= 1 && d.Mean <= 1<<30):
		return errorf(p+"mean", "a fixed length must be ≥ 1, got %v", d.Mean)
	}
	return nil
}

func (d InferencePerfDistribution) kind() string {
	if d.Type == "" {
		return "normal"
	}
	return d.Type
}

// length is d as a replay's Length: normal is round(clamp(x, min, max)), x ~
// N(mean, std_dev²), as generate_distribution draws it (numpy rounds halves
// to even, the replay away from zero); fixed int(mean); uniform the integers
// of [min, max] alike (inference-perf rounds a continuous uniform draw, so
// its end values come half as often).
func (d InferencePerfDistribution) length() Length {
	switch {
	case d.kind() == "fixed" || d.kind() == "normal" && d.StdDev == 0 || d.Min == d.Max:
		v := int(d.Mean)
		if d.kind() == "normal" {
			v = int(math.Round(d.Mean))
		}
		if d.Min == d.Max {
			v = d.Min
		}
		return Length{Kind: FixedLength{Value: v}}
	case d.kind() == "uniform":
		return Length{Kind: UniformLength{Min: d.Min, Max: d.Max}}
	}
	return Length{Kind: NormalLength{Mean: d.Mean, Std: d.StdDev, Min: d.Min, Max: d.Max}}
}

// stageRequests is each stage's requests: int(rate × duration), or a
// concurrent stage's num_requests.
func (t InferencePerfBenchmark) stageRequests() []int {
	out := make([]int, len(t.Load.Stages))
	for i, s := range t.Load.Stages {
		if t.Load.Type == "concurrent" {
			out[i] = s.NumRequests
		} else {
			out[i] = int(math.Floor(s.Rate * float64(s.Duration)))
		}
	}
	return out
}

func (t InferencePerfBenchmark) traffic() (Traffic, []string) {
	var tr Traffic
	load := StagedLoad{IntervalS: t.Load.Interval, LeadS: IPStageLeadS, PollS: IPStagePollS}
	total := 0
	for i, n := range t.stageRequests() {
		s := t.Load.Stages[i]
		st := LoadStage{Requests: n}
		switch t.Load.Type {
		case "concurrent":
			st.Concurrency = s.ConcurrencyLevel
		case "constant":
			st.RateRPS, st.DurationS, st.Arrival = s.Rate, float64(s.Duration), StageSpread
		default:
			st.RateRPS, st.Arrival = s.Rate, StagePerSecondPoisson
		}
		load.Stages = append(load.Stages, st)
		total += n
	}
	tr.Load.Mode = load
	notes := []string{fmt.Sprintf("inference-perf %s: %d stage(s) of %v requests", t.Release(), len(load.Stages), t.stageRequests())}
	if t.Load.Type == "concurrent" {
		notes = append(notes, "a concurrent stage's clients start together (inference-perf schedules its requests over the stage's first second and lets concurrency_level of them run)")
	}
	d := t.Data
	if d.Type == "random" {
		tr.Source.Type = SyntheticSource{NumRequests: total, ISL: d.InputDistribution.length(), OSL: d.OutputDistribution.length()}
		notes = append(notes, "random prompts: lengths drawn per request from the distributions (inference-perf draws total_count of them once and each stage takes them from the first), every prompt new")
	} else {
		sp := d.SharedPrefix
		ds := &Dataset{Entries: sp.NumGroups * sp.NumPromptsPerGroup, Sampling: SamplingShuffle}
		if sp.SystemPromptLen > 0 {
			ds.Prefix = &DatasetPrefix{Groups: sp.NumGroups, Tokens: sp.SystemPromptLen}
		}
		tr.Source.Type = SyntheticSource{NumRequests: total, Dataset: ds,
			ISL: Length{Kind: FixedLength{Value: sp.QuestionLen}}, OSL: Length{Kind: FixedLength{Value: sp.OutputLen}}}
		notes = append(notes, fmt.Sprintf("shared prefix: %d prompts of %d + %d tokens in %d groups, cycled in a random order (inference-perf shuffles them once and each stage starts them over; the replay reshuffles each pass), token counts as configured (inference-perf's prompts are decoded random tokens, which the server tokenizes again)",
			ds.Entries, sp.SystemPromptLen, sp.QuestionLen, sp.NumGroups))
	}
	if t.Release().Before(ipTokenTimesSince) {
		notes = append(notes, "before inference-perf 0.5.0 its prompts were decoded random token ids that the server tokenizes into more tokens than configured (inference-perf issue 230: ~130-140 for 128; fixed by pull request 383): not modelled, the configured lengths are sent")
	}
	if t.API.Type == "chat" {
		notes = append(notes, "api chat: the chat template's tokens are not added to the prompt")
	}
	return tr, notes
}
