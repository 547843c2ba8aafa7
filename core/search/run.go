package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/replay"
	"github.com/aisimulate/aisimulate/core/report"
)

// Fates of a candidate.
const (
	// FateSimulated: replayed to its end (Meets says whether it met the SLO).
	FateSimulated = "simulated"
	// FateStopped: replayed until its miss was certain (KindSLO).
	FateStopped = "stopped"
	// FatePruned: not replayed (Kind says why).
	FatePruned = "pruned"
)

// Question is a capacity-planning question made ready to evaluate
// candidates (NewQuestion).
type Question struct {
	// Spec is the question's spec, its scheduler defaults resolved.
	Spec  *config.Spec
	Space Space
	SLO   SLO
	// EarlyStop stops a replay once its miss is certain (tracker); with it
	// false every candidate that is not pruned is replayed to its end.
	EarlyStop bool
	// Prune drops candidates the analytic bounds settle (bounds.go); with
	// it false only those that cannot start are left out.
	Prune bool
	// Dominated, when set, is why the candidates evaluated cannot be
	// recommended (KindDominated: their GPU count's throughput bound,
	// MaxOutputTPS): one that can start is pruned with it instead of
	// replayed.
	Dominated string
	Arch      *model.Arch
	Sys       *hardware.System
	Offer     *replay.Offer
	load      *load
	cache     *replay.PerfCache // the measured perf models, shared by the candidates
}

// NewQuestion reads the question's model, system and offered load, and
// fills the space's defaults.
//
// Errors: a *config.Error naming the field (the SLO's, the space's, the
// spec's), a *workload.DataError (the trace).
func NewQuestion(spec *config.Spec, sp Space, slo SLO) (*Question, error) {
	if err := slo.Check(); err != nil {
		return nil, &config.Error{Field: "slo", Msg: err.Error()}
	}
	s := spec.Clone()
	arch, err := model.Load(s.Engine.Model, s.Engine.ModelConfigDir)
	if err != nil {
		return nil, &config.Error{Field: "engine.model", Msg: err.Error()}
	}
	sys, err := hardware.Lookup(s.Engine.System)
	if err != nil {
		return nil, &config.Error{Field: "engine.system", Msg: err.Error()}
	}
	if err := s.ResolveSchedulerDefaults(sys.MemCapacity, sys.Name); err != nil {
		return nil, err
	}
	if sp, err = DefaultSpace(sp, s, arch, sys); err != nil {
		return nil, err
	}
	if err := checkSize(s, sp, arch); err != nil {
		return nil, err
	}
	offer, err := replay.OfferedLoad(s)
	if err != nil {
		return nil, err
	}
	if len(offer.OutputTokens) == 0 {
		return nil, &config.Error{Field: "traffic", Msg: "the workload sends no measured request"}
	}
	return &Question{Spec: s, Space: sp, SLO: slo, EarlyStop: true, Prune: true, Arch: arch, Sys: sys,
		Offer: offer, load: newLoad(offer), cache: replay.NewPerfCache()}, nil
}

// MaxCandidates is the most candidates a search enumerates: a space past it
// is refused before anything is made (Count), since its plan and results
// alone would outgrow a machine (27.5 million candidates for a budget of 512
// GPUs of a dense model: tens of GB) and its replays take hours.
const MaxCandidates = 50_000

// bytesPerCandidate is what a search holds per candidate, plan and result
// (the Go candidate, its plan line, the Python dicts of both, the answer's
// JSON), and its share of the replays in flight: the peak RSS of
// `aisimulate search examples/quickstart.yaml --slo ttft_ms=500 --jobs 1
// --format json` over its candidates, 87.5 MB / 1,080 at --gpus 4, 259 MB
// / 5,160 at --gpus 8, rounded up (one process's ~60 MB of code kept in).
const bytesPerCandidate = 50_000

// checkSize refuses a space of more than MaxCandidates candidates, or whose
// memory (bytesPerCandidate each) passes the replay's budget
// (replay.MemoryBudget: execution.max_memory_gb), saying how to narrow it.
func checkSize(s *config.Spec, sp Space, arch *model.Arch) error {
	n := Count(sp, arch)
	budget, source := replay.MemoryBudget(s)
	limit, why, raise := MaxCandidates, fmt.Sprintf("the search's limit of %d", MaxCandidates), ""
	if byMem := int(budget / bytesPerCandidate); byMem < limit {
		limit, raise = byMem, ", or raise execution.max_memory_gb"
		why = fmt.Sprintf("the %d that fit in its memory budget of %.3g GB (%s; about %d kB each)",
			byMem, float64(budget)/1e9, source, bytesPerCandidate/1000)
	}
	if n <= limit {
		return nil
	}
	return &config.Error{Field: "gpus", Msg: fmt.Sprintf("the space holds %d candidates (GPU counts %s), more than %s: "+
		"narrow it: fewer GPU counts (--gpus 8,16 or a smaller budget), --tp, --modes, --max-num-seqs, --max-num-batched-tokens "+
		"(search()'s gpus, tp, modes, …)%s", n, gpuRange(sp.GPUs), why, raise)}
}

// gpuRange is a list of GPU counts in a few bytes: "8", "1–512", "8, 16 and 6 more".
func gpuRange(gs []int) string {
	lo, hi := gs[0], gs[len(gs)-1]
	switch {
	case len(gs) == 1:
		return fmt.Sprint(lo)
	case hi-lo+1 == len(gs):
		return fmt.Sprintf("%d–%d", lo, hi)
	case len(gs) <= 4:
		return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(gs)), ", "), "[]")
	}
	return fmt.Sprintf("%d, %d … %d (%d counts)", gs[0], gs[1], hi, len(gs))
}

// SharePerfCache makes the question build its measured perf models through
// c (replay.PerfCache), so that several runs of one search (its GPU counts,
// one call each) build each model once.
func (q *Question) SharePerfCache(c *replay.PerfCache) { q.cache = c }

// Candidates enumerates the question's candidates (Enumerate).
func (q *Question) Candidates() ([]Candidate, []Invalid) { return Enumerate(q.Space, q.Arch) }

// Result is one candidate's outcome.
type Result struct {
	Index     int       `json:"index"`
	Key       string    `json:"key"`
	Candidate Candidate `json:"candidate"`
	GPUs      int       `json:"gpus"`
	Fate      string    `json:"fate"`
	// Kind and Reason say why a candidate was pruned or stopped.
	Kind   string `json:"kind,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Meets: the replay met the SLO (nil when not replayed to its end; a
	// stopped candidate certainly misses it: false).
	Meets *bool `json:"meets"`
	// SLORatio is the largest of the SLO's percentiles over its bound (≤ 1
	// meets); nil unless replayed to its end (+Inf, a percentile reaching a
	// request that did not complete, is null with Meets false).
	SLORatio *float64 `json:"slo_ratio"`
	// Percentiles are the SLO percentile of each bounded metric, ms
	// (requests that did not complete counted as missing it: null once they
	// reach it).
	Percentiles map[string]*float64 `json:"percentiles,omitempty"`
	// Summary is the replay's summary (report.Summary; simulated only).
	Summary *report.Summary `json:"summary,omitempty"`
	// OutputTPSPerGPU is output_token_throughput_tps / GPUs.
	OutputTPSPerGPU *float64 `json:"output_tps_per_gpu"`
	// NumGPUBlocks and PerfModel of the token pool (a candidate that started).
	NumGPUBlocks int    `json:"num_gpu_blocks,omitempty"`
	PerfModel    string `json:"perf_model,omitempty"`
	// Seen: the requests sent when a stopped replay was stopped.
	Seen int `json:"seen,omitempty"`
}

func pruned(r *Result, kind, reason string) Result {
	r.Fate, r.Kind, r.Reason = FatePruned, kind, reason
	f := false
	if kind != KindInvalid {
		r.Meets = &f // it cannot start, or cannot meet the SLO
	}
	return *r
}

// Evaluate settles one candidate: pruned when its deployment cannot start
// or an analytic bound settles its miss, else replayed (stopped early once
// its miss is certain, when q.EarlyStop). ctx stops the replay (the error is
// then ctx's, or replay.Stopped).
func (q *Question) Evaluate(ctx context.Context, c Candidate) (Result, error) {
	r := Result{Index: c.Index, Key: c.Key(), Candidate: c, GPUs: c.GPUs()}
	s := c.Spec(q.Spec, &q.Space)
	s, err := config.Decode(s.JSON()) // validated as a spec the user gave would be
	if err != nil {
		if kind, why, ok := startupPrune(err); ok {
			return pruned(&r, kind, why), nil
		}
		return r, err
	}
	d, err := replay.Pricing(s, q.cache)
	if err != nil {
		if kind, why, ok := startupPrune(err); ok {
			return pruned(&r, kind, why), nil
		}
		return r, err
	}
	tp := tokenPool(d)
	r.NumGPUBlocks, r.PerfModel = tp.NumBlocks, tp.Perf.Name()
	l := q.load
	if q.Prune {
		minContext := max(l.minISL-1, 0)
		if q.SLO.TPOTMs > 0 && l.minOSL >= 2 {
			if floor := tpotFloorMs(s, d, minContext); floor > q.SLO.TPOTMs {
				return pruned(&r, KindTPOTFloor, fmt.Sprintf(
					"one decode step takes at least %.3f ms on %s (a decode at %d tokens of context), over the TPOT bound of %g ms",
					floor, tp.Name, minContext, q.SLO.TPOTMs)), nil
			}
		}
		if certain, why := throughputPrune(l, q.SLO, decodeRate(d, minContext)); certain {
			return pruned(&r, KindThroughput, why), nil
		}
	}
	if q.Dominated != "" {
		// it could start, but cannot be recommended: not replayed, its
		// verdict unknown (Meets nil)
		r.Fate, r.Kind, r.Reason = FatePruned, KindDominated, q.Dominated
		return r, nil
	}
	var opts []replay.Option
	track := q.EarlyStop && q.Offer.Exact && !q.Offer.Timeouts
	if track {
		opts = append(opts, replay.WithWatcher(newTracker(q.SLO, l.n)))
	}
	opts = append(opts, replay.WithPerfCache(q.cache))
	rep, err := replay.RunContext(ctx, s, opts...)
	var miss *CertainMiss
	if errors.As(err, &miss) {
		f := false
		r.Fate, r.Kind, r.Reason, r.Meets, r.Seen = FateStopped, KindSLO, miss.Error(), &f, miss.Seen
		return r, nil
	}
	if err != nil {
		if kind, why, ok := startupPrune(err); ok {
			return pruned(&r, kind, why), nil
		}
		return r, err
	}
	r.Fate = FateSimulated
	q.judge(&r, rep)
	return r, nil
}

// judge fills a replayed candidate's percentiles, ratio and verdict from its
// records (every measured request; one that did not complete is +Inf).
func (q *Question) judge(r *Result, rep *report.Report) {
	r.Summary = &rep.Summary
	if tps := rep.Summary.OutputTokenThroughputTPS; tps != nil && r.GPUs > 0 {
		v := *tps / float64(r.GPUs)
		r.OutputTPSPerGPU = &v
	}
	vals := [nMetrics][]float64{}
	for i := range rep.Records {
		rec := &rep.Records[i]
		if rec.Status != report.StatusCompleted {
			for m := range nMetrics {
				vals[m] = append(vals[m], math.Inf(1))
			}
			continue
		}
		ttft, _ := rec.TTFT()
		vals[mTTFT] = append(vals[mTTFT], ttft)
		vals[mE2E] = append(vals[mE2E], rec.E2E())
		if tpot, ok := rec.TPOT(); ok {
			vals[mTPOT] = append(vals[mTPOT], tpot)
		}
	}
	r.Percentiles = map[string]*float64{}
	ratio, meets := 0.0, true
	for m := range nMetrics {
		b := q.SLO.bound(m)
		if b <= 0 {
			continue
		}
		p := Percentile(vals[m], q.SLO.Percentile)
		if math.IsNaN(p) { // no value (TPOT of one-token outputs): nothing to miss
			r.Percentiles[metricNames[m]] = nil
			continue
		}
		if !math.IsInf(p, 1) {
			v := p
			r.Percentiles[metricNames[m]] = &v
		} else {
			r.Percentiles[metricNames[m]] = nil
		}
		ratio = math.Max(ratio, p/b)
		meets = meets && p <= b
	}
	r.Meets = &meets
	if !math.IsInf(ratio, 1) {
		r.SLORatio = &ratio
	}
}

// Options of Run.
type Options struct {
	// Jobs is the candidates replayed at once (goroutines; 0: GOMAXPROCS).
	Jobs int
}

// Run evaluates cands (Evaluate) on opts.Jobs goroutines and hands each
// result to done in candidate order (the order of cands), whatever order
// they finish in; done runs on the calling goroutine. It returns the first
// error (a candidate's that is not a prune, or ctx's) once the candidates
// in flight have returned; results handed over before then stand.
func (q *Question) Run(ctx context.Context, cands []Candidate, opts Options, done func(Result) error) error {
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type out struct {
		i   int
		r   Result
		err error
	}
	next := make(chan int)
	results := make(chan out, jobs)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r, err := q.evaluateSafely(ctx, cands[i])
				results <- out{i, r, err}
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range cands {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	held := map[int]Result{}
	want := 0
	var first error
	for o := range results {
		if o.err != nil {
			if first == nil {
				first = o.err
				cancel()
			}
			continue
		}
		held[o.i] = o.r
		for first == nil {
			if err := ctx.Err(); err != nil { // stopped: nothing more is handed over
				first = err
				break
			}
			r, ok := held[want]
			if !ok {
				break
			}
			delete(held, want)
			want++
			if err := done(r); err != nil {
				first = err
				cancel()
			}
		}
	}
	if first == nil && want < len(cands) {
		first = ctx.Err()
	}
	return first
}

// evaluateSafely is Evaluate with a panic (a bug) turned into that
// candidate's error, so that the other goroutines stop cleanly.
func (q *Question) evaluateSafely(ctx context.Context, c Candidate) (r Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("search: %s: core panic: %v", c.String(), p)
		}
	}()
	return q.Evaluate(ctx, c)
}
