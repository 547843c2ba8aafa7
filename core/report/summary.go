package report

// Summary is the aggregate of a replay (docs/metrics.md). Latency statistics cover
// completed requests only; a metric without any value is null.
type Summary struct {
	Completed int `json:"completed"`
	Rejected  int `json:"rejected"`
	Failed    int `json:"failed"`
	Canceled  int `json:"canceled"`
	// DurationMs is the measured window: from the first request sent to the
	// last response received by the client (not including the client's
	// response overhead), AIPerf's benchmark duration (aiperf/metrics/types/
	// benchmark_duration_metric.py: max response timestamp − min request
	// timestamp).
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
}

// Accumulator collects records and closes into a Summary in one step.
type Accumulator struct {
	s               Summary
	ttft, tpot, e2e []float64
	itl             gapPool
	lastEndNs       int64
	firstSendNs     int64 // NoTime until a record is added
	added           bool
}

// AddGap pools one gap (ns) between consecutive tokens a client received.
// Only completed requests receive tokens, so every gap belongs to the ITL pool.
func (a *Accumulator) AddGap(gapNs int64) { a.itl.add(gapNs, 1) }

// AddGaps pools n gaps of gapNs each (n ≥ 1): the tokens a pass gave its
// steadily decoding requests, which all waited the same gap since their
// previous token. The pool keeps equal gaps as one run, so this costs the
// same as one AddGap.
func (a *Accumulator) AddGaps(gapNs int64, n int) { a.itl.add(gapNs, int64(n)) }

// Add counts one terminal record.
func (a *Accumulator) Add(r *Record) {
	a.lastEndNs = max(a.lastEndNs, r.EndNs)
	if !a.added || r.SendNs < a.firstSendNs {
		a.firstSendNs, a.added = r.SendNs, true
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
	a.e2e = append(a.e2e, r.E2E())
}

// FirstSendNs is the earliest send of the records added so far (0 before any).
func (a *Accumulator) FirstSendNs() int64 {
	if !a.added {
		return 0
	}
	return a.firstSendNs
}

// WindowNs is the measured window: last response end received − first send
// (0 before any record).
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
	s.TTFT, s.TPOT, s.E2E, s.ITL = Compute(a.ttft), Compute(a.tpot), Compute(a.e2e), a.itl.stats()
	return s
}
