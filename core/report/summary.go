package report

import (
	"slices"
	"unsafe"
)

// Summary is the aggregate of a replay (docs/metrics.md). Latency statistics cover
// completed requests only; a metric without any value is null.
type Summary struct {
	Completed int `json:"completed"`
	Rejected  int `json:"rejected"`
	Failed    int `json:"failed"`
	Canceled  int `json:"canceled"`
	// DurationMs is the measured window (WindowRule): by default AIPerf's
	// benchmark duration, from the first completed request's send to the
	// last completed response received by the client (not including the
	// client's response overhead): aiperf/metrics/types/
	// benchmark_duration_metric.py, max response timestamp − min request
	// timestamp, both aggregated over valid records only (its
	// MetricRecordProcessor gives an error record its error metrics and
	// nothing else). 0 when no request completed.
	DurationMs float64 `json:"duration_ms"`
	// RequestThroughputRPS = completed / duration (requests per second); null
	// when the duration is 0 (nothing was received after the start).
	RequestThroughputRPS *float64 `json:"request_throughput_rps"`
	// OutputTokenThroughputTPS = output tokens of completed requests / duration.
	OutputTokenThroughputTPS *float64 `json:"output_token_throughput_tps"`
	// GPUHours = GPUs of every worker × duration (the deployment is provisioned
	// for the whole window, idle or not).
	GPUHours float64 `json:"gpu_hours"`
	TTFT     *Stats  `json:"ttft_ms"`
	TPOT     *Stats  `json:"tpot_ms"`
	E2E      *Stats  `json:"e2e_ms"`
	// ITL pools every gap between consecutive tokens received by a client.
	ITL *Stats `json:"itl_ms"`
	// Totals over completed requests (tokens) and all requests (preemptions).
	TotalInputTokens  int64 `json:"total_input_tokens"`
	TotalOutputTokens int64 `json:"total_output_tokens"`
	TotalCachedTokens int64 `json:"total_cached_tokens"`
	Preemptions       int64 `json:"preemptions"`
	// TTST is AIPerf's time to second token (Record.TTST), ms, over completed
	// requests of two or more output tokens.
	TTST *Stats `json:"ttst_ms"`
	// OutputTPSPerUser is AIPerf's output token throughput per user
	// (Record.PerUserTPS = 1000 / tpot_ms), tokens/s, over the same requests.
	OutputTPSPerUser *Stats `json:"output_token_throughput_per_user"`
	// InputSequenceLength and OutputSequenceLength are the prompt and output
	// tokens of completed requests (AIPerf's ISL and OSL).
	InputSequenceLength  *Stats `json:"input_sequence_length"`
	OutputSequenceLength *Stats `json:"output_sequence_length"`
	// Goodput is present when the replay was given an SLO (WithSLO).
	Goodput *Goodput `json:"goodput,omitempty"`
	// InFlight is the measured requests in flight, mean and peak (load.go); a
	// replay always sets it.
	InFlight *InFlight `json:"in_flight,omitempty"`
	// WorkerUtilization is the workers' share of the run in passes (load.go);
	// a replay sets it unless the run has no span (every request sent at the
	// instant it ended).
	WorkerUtilization *WorkerUtilization `json:"worker_utilization,omitempty"`
	// Saturation is present when the waiting queues grew through the sending
	// window: the deployment did not keep up (load.go).
	Saturation *Saturation `json:"saturation,omitempty"`
}

// SLO is a per-request service level objective in ms; an unset (nil) bound
// is not checked. A completed request is good when its TTFT, TPOT and E2E
// are each at most the bound, as AIPerf counts good requests
// (aiperf/metrics/types/good_request_count_metric.py: a record without the
// SLO's metric is not good): a request below 2 output tokens has no TPOT
// (AIPerf's inter_token_latency raises NoMetricValue below 2 tokens), so it
// misses a TPOT bound.
type SLO struct {
	TTFTMs *float64 `json:"ttft_ms,omitempty"`
	TPOTMs *float64 `json:"tpot_ms,omitempty"`
	E2EMs  *float64 `json:"e2e_ms,omitempty"`
}

// meets reports whether completed record r is within every bound of o; with
// zeroTPOT a record without a TPOT (below 2 output tokens) meets a TPOT
// bound (vLLM's rule, SetVLLMGoodput).
func (o *SLO) meets(r *Record, zeroTPOT bool) bool {
	if v, ok := r.TTFT(); o.TTFTMs != nil && (!ok || v > *o.TTFTMs) {
		return false
	}
	if v, ok := r.TPOT(); o.TPOTMs != nil && (!ok && !zeroTPOT || ok && v > *o.TPOTMs) {
		return false
	}
	return o.E2EMs == nil || r.E2E() <= *o.E2EMs
}

// Goodput is the completed requests within an SLO, as AIPerf counts them
// (good_request_count and goodput, aiperf/metrics/types/goodput_metric.py):
// GoodputRPS = good requests / the measured window (DurationMs; null when
// it is 0), SLOAttainment = good / completed (null with nothing completed).
// vLLM's request_goodput differs only for outputs of one token, whose TPOT
// it takes as 0 (a pass) where AIPerf has none (a miss): SetVLLMGoodput.
type Goodput struct {
	SLO           SLO      `json:"slo"`
	GoodRequests  int      `json:"good_requests"`
	GoodputRPS    *float64 `json:"goodput_rps"`
	SLOAttainment *float64 `json:"slo_attainment"`
}

// WindowRule says whether a record bounds the measured window: the window
// runs from the earliest send to the latest end of the records it accepts.
// It is a load generator's rule; AIPerfWindow is the default.
type WindowRule func(r *Record) bool

// AIPerfWindow is AIPerf's benchmark duration: only completed requests
// (AIPerf's valid records) bound the window, so a rejected, failed or
// canceled request is outside it (aiperf/metrics/types/min_request_metric.py
// and max_response_metric.py are record metrics, which AIPerf's
// MetricRecordProcessor computes for valid records only).
func AIPerfWindow(r *Record) bool { return r.Status == StatusCompleted }

// EveryRequestWindow bounds the window by every request sent, whatever its
// end: the rule of a load generator that times its whole run (vLLM's
// `vllm bench serve` measures its duration from the benchmark's start to
// the end of its last request, failed ones included).
func EveryRequestWindow(*Record) bool { return true }

// Accumulator collects records and closes into a Summary in one step.
//
// It keeps, per completed request, its TTFT, TPOT, TTST and E2E (float64,
// ms) and its input and output tokens (int32): 40 bytes at most (the output
// tokens per second per user are 1000 / TPOT, derived at Close).
type Accumulator struct {
	s               Summary
	ttft, tpot, e2e []float64
	ttst            []float64
	isl, os         []int32
	itl             gapPool
	lastEndNs       int64
	firstSendNs     int64 // valid once added
	added           bool  // a record bounds the window
	startNs         int64 // SetWindowStart, valid when started
	started         bool
	window          WindowRule
	slo             *SLO
	zeroTPOT        bool // SetVLLMGoodput
	good            int
	more            []float64 // SetPercentiles, beside the fixed ones
}

// Reserve sizes the per-request samples for n completed requests, so that a
// replay whose request count is known does not grow (and copy) them.
func (a *Accumulator) Reserve(n int) {
	a.ttft, a.tpot, a.e2e = slices.Grow(a.ttft, n), slices.Grow(a.tpot, n), slices.Grow(a.e2e, n)
	a.ttst, a.isl, a.os = slices.Grow(a.ttst, n), slices.Grow(a.isl, n), slices.Grow(a.os, n)
}

// SetSLO makes the summary count the completed requests within slo (its
// Goodput); call it before the first Add.
func (a *Accumulator) SetSLO(slo SLO) { a.slo = &slo }

// SetVLLMGoodput makes the goodput count as vLLM's request_goodput does: a
// completed request of fewer than 2 output tokens has a TPOT of 0 for the
// SLO, so it meets any TPOT bound (calculate_metrics in
// vllm/benchmarks/serve.py: "if output_len <= 1, we regard tpot as 0 for
// goodput"); AIPerf's rule, the default, has no TPOT for it and misses.
func (a *Accumulator) SetVLLMGoodput() { a.zeroTPOT = true }

// AddGap pools one gap (ns) between consecutive tokens a client received.
// Only completed requests receive tokens, so every gap belongs to the ITL pool.
func (a *Accumulator) AddGap(gapNs int64) { a.itl.add(gapNs, 1) }

// AddGaps pools n gaps of gapNs each (n ≥ 1): the tokens a pass gave its
// steadily decoding requests, which all waited the same gap since their
// previous token. The pool keeps equal gaps as one run, so this costs the
// same as one AddGap.
func (a *Accumulator) AddGaps(gapNs int64, n int) { a.itl.add(gapNs, int64(n)) }

// SetPercentiles makes every statistic of the summary also hold the
// percentiles ps (ascending, each in (0, 100]: CheckPercentiles) that are
// not among the FixedPercentiles, in Stats.More.
func (a *Accumulator) SetPercentiles(ps []float64) {
	a.more = extraPercentiles(ps)
	a.itl.more = a.more
}

// SetWindowRule makes rule decide which records bound the measured window
// (AIPerfWindow when never called); call it before the first Add.
func (a *Accumulator) SetWindowRule(rule WindowRule) { a.window = rule }

// SetWindowStart starts the window at ns at the latest: the rule of a load
// generator whose clock starts before its first send. `vllm bench serve`
// takes benchmark_start_time before get_request sleeps the first arrival's
// delay and stops it once every request has ended (benchmark() in
// vllm/benchmarks/serve.py), so its duration holds that first delay. Call it
// when the measured phase begins (again, to move it there).
func (a *Accumulator) SetWindowStart(ns int64) { a.startNs, a.started = ns, true }

// Add counts one terminal record.
func (a *Accumulator) Add(r *Record) {
	if a.window == nil {
		a.window = AIPerfWindow
	}
	if a.window(r) {
		a.lastEndNs = max(a.lastEndNs, r.EndNs)
		if !a.added || r.SendNs < a.firstSendNs {
			a.firstSendNs, a.added = r.SendNs, true
		}
	}
	a.s.Preemptions += int64(r.Preemptions)
	switch r.Status {
	case StatusCompleted:
		a.s.Completed++
	case StatusRejected:
		a.s.Rejected++
		return
	case StatusFailed:
		a.s.Failed++
		return
	case StatusCanceled:
		a.s.Canceled++
		return
	default:
		panic("report: unknown status " + r.Status)
	}
	a.s.TotalInputTokens += int64(r.InputTokens)
	a.s.TotalOutputTokens += int64(r.OutputTokens)
	a.s.TotalCachedTokens += int64(r.CachedTokens)
	if v, ok := r.TTFT(); ok {
		a.ttft = append(a.ttft, v)
	}
	if v, ok := r.TPOT(); ok {
		a.tpot = append(a.tpot, v)
	}
	if v, ok := r.TTST(); ok {
		a.ttst = append(a.ttst, v)
	}
	a.isl = append(a.isl, int32(r.InputTokens))
	a.os = append(a.os, int32(r.OutputTokens))
	a.e2e = append(a.e2e, r.E2E())
	if a.slo != nil && a.slo.meets(r, a.zeroTPOT) {
		a.good++
	}
}

// FirstSendNs is the window's start: the earliest send of the records added
// so far that bound it, or the start SetWindowStart gave if earlier (0
// before any record).
func (a *Accumulator) FirstSendNs() int64 {
	if !a.added {
		return 0
	}
	if a.started && a.startNs < a.firstSendNs {
		return a.startNs
	}
	return a.firstSendNs
}

// WindowNs is the measured window: last response end received − first send
// of the records that bound it (0 before any).
func (a *Accumulator) WindowNs() int64 { return a.lastEndNs - a.FirstSendNs() }

// Close computes the summary. gpus is the total GPU count of the deployment.
func (a *Accumulator) Close(gpus int) Summary {
	s := a.s
	win := a.WindowNs()
	s.DurationMs = ms(win)
	if win > 0 {
		sec := float64(win) / 1e9
		rps, tps := float64(s.Completed)/sec, float64(s.TotalOutputTokens)/sec
		s.RequestThroughputRPS, s.OutputTokenThroughputTPS = &rps, &tps
		s.GPUHours = float64(gpus) * sec / 3600
	}
	// one sort buffer for every sample list, in turn (8 bytes a request)
	var buf []uint64
	s.TTFT, buf = computeSamples(a.ttft, buf, a.more)
	s.TPOT, buf = computeSamples(a.tpot, buf, a.more)
	s.E2E, buf = computeSamples(a.e2e, buf, a.more)
	s.TTST, buf = computeSamples(a.ttst, buf, a.more)
	s.ITL = a.itl.stats()
	// per user: 1000 / TPOT of each request with a TPOT > 0 (Record.PerUserTPS),
	// made in place of the TPOT samples, whose statistics are done
	perUser := a.tpot[:0]
	for _, v := range a.tpot {
		if v > 0 {
			perUser = append(perUser, 1000/v)
		}
	}
	s.OutputTPSPerUser, buf = computeSamples(perUser, buf, a.more)
	s.InputSequenceLength, buf = computeInts(a.isl, buf, a.more)
	s.OutputSequenceLength, _ = computeInts(a.os, buf, a.more)
	if a.slo != nil {
		g := &Goodput{SLO: *a.slo, GoodRequests: a.good}
		if win > 0 {
			rps := float64(a.good) / (float64(win) / 1e9)
			g.GoodputRPS = &rps
		}
		if s.Completed > 0 {
			att := float64(a.good) / float64(s.Completed)
			g.SLOAttainment = &att
		}
		s.Goodput = g
	}
	return s
}

// computeInts is Compute of integer samples: sorted as integers (the same
// order), then as float64 values made in buf's memory (returned for the
// next call).
func computeInts(xs []int32, buf []uint64, more []float64) (*Stats, []uint64) {
	slices.Sort(xs)
	if cap(buf) < len(xs) {
		buf = make([]uint64, len(xs))
	}
	if len(xs) == 0 {
		return nil, buf
	}
	fs := unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(buf))), len(xs))
	for i, x := range xs {
		fs[i] = float64(x)
	}
	return weightedStats(fs, nil, more), buf
}
