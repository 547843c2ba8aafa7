package report

// Summary is the aggregate of a replay (DESIGN.md §8). Latency statistics cover
// completed requests only; a metric without any value is null.
type Summary struct {
	Completed int `json:"completed"`
	Rejected  int `json:"rejected"`
	Failed    int `json:"failed"`
	Canceled  int `json:"canceled"`
	// DurationMs runs from the start of the replay to the last response received
	// by the client (not including the client's response overhead).
	DurationMs float64 `json:"duration_ms"`
	// RequestThroughputRPS = completed / duration (requests per second); null
	// when the duration is 0 (nothing was received after the start).
	RequestThroughputRPS *float64 `json:"request_throughput_rps"`
	// OutputTokenThroughputTPS = output tokens of completed requests / duration.
	OutputTokenThroughputTPS *float64 `json:"output_token_throughput_tps"`
	// GPUHours = GPUs of every worker × duration (the deployment is provisioned
	// for the whole run, idle or not).
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
}

// AddGap pools one gap (ns) between consecutive tokens a client received.
// Only completed requests receive tokens, so every gap belongs to the ITL pool.
func (a *Accumulator) AddGap(gapNs int64) { a.itl.add(gapNs) }

// Add counts one terminal record.
func (a *Accumulator) Add(r *Record) {
	a.lastEndNs = max(a.lastEndNs, r.EndNs)
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

// LastEndNs is the latest response end received so far.
func (a *Accumulator) LastEndNs() int64 { return a.lastEndNs }

// Close computes the summary. gpus is the total GPU count of the deployment.
func (a *Accumulator) Close(gpus int) Summary {
	s := a.s
	s.DurationMs = ms(a.lastEndNs)
	if a.lastEndNs > 0 {
		sec := float64(a.lastEndNs) / 1e9
		rps, tps := float64(s.Completed)/sec, float64(s.TotalOutputTokens)/sec
		s.RequestThroughputRPS, s.OutputTokenThroughputTPS = &rps, &tps
		s.GPUHours = float64(gpus) * sec / 3600
	}
	s.TTFT, s.TPOT, s.E2E, s.ITL = Compute(a.ttft), Compute(a.tpot), Compute(a.e2e), a.itl.stats()
	return s
}
