package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/aisimulate/aisimulate/core/client"
	"github.com/aisimulate/aisimulate/core/clock"
	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/workload"
)

// traffic sends the workload's requests: it streams the source, applies the
// stop conditions and gives each request its send time.
type traffic struct {
	feed        *client.Feed
	src         workload.Source
	path        string // the trace file, for errors
	closer      io.Closer
	mode        string                 // config.LoadTrace, LoadRate, LoadConcurrency or LoadStages
	trace       *workload.TraceArrival // trace mode: send = timestamp / speedup
	arrival     workload.Arrival       // rate mode, and an open-loop stage
	concurrency int
	maxRequests int   // 0: no limit
	stopNs      int64 // no send this long after the warm-up's end (or 0) or later; math.MaxInt64: no limit
	// graceNs (stop.grace_s): a measured request still in flight this long
	// after the stop time is canceled; -1: none is
	graceNs int64
	sent    int
	// jitter is the client_jitter stream (client.StreamJitter) that the
	// response-overhead noise draws from.
	jitter *rand.Rand
	// clientBusyNs is the last release of a serial client (its event loop is
	// busy until then).
	clientBusyNs int64
	done         bool
	// sessions: the source may have multi-turn sessions (a trace or the
	// sessions generator), whose later turns the feed may read ahead
	sessions bool
	// grows: the source builds each turn's prompt from the conversation so
	// far (the sessions generator), assuming every earlier turn's whole
	// output; a trace's rows give the prompt as it was sent
	grows bool
	// deltas: a Mooncake trace whose session rows are each turn's new input
	// (context_mode deltas_without_responses, deltas.go)
	deltas bool

	// The warm-up phase (traffic.load.warmup_requests): warm-up requests
	// still to send, in flight (sent, not yet acted on) and sent; the clients
	// waiting for it to end; when it ended (ns), from which a rate's arrival
	// times count.
	inWarmup                       bool
	warmLeft, warmActive, warmSent int
	parked                         []int32
	warmEndNs                      int64

	// A rate's cap on requests in flight (traffic.load.max_concurrency; 0:
	// none): the arrivals in flight (sent, not yet acted on), whether the
	// next one waits for a slot and since when, and how late the sends run
	// behind the arrival process (the waits so far: the next gap counts
	// from the last send).
	capN, capActive int
	capSkip         bool // capped_arrival skip: an arrival without a slot passes unused
	capQueue        bool // capped_arrival queue: it joins capWaiting, sent oldest first
	capWaiting      []workload.Request
	capBlocked      bool
	capSinceNs      int64
	capLagNs        int64

	// The stages (traffic.load mode stages): the load, the stage being
	// run, its requests still to send and in flight (sent or read to be
	// sent, not yet acted on), when it began and the origin of its send
	// times (ns), and the stream its arrivals draw from.
	staged                  config.StagedLoad
	stage                   int
	stageLeft, stageActive  int
	stageBeginNs, stageAtNs int64
	stageRNG                *rand.Rand
}

// beginStage makes stage k the one being run, begun at beginNs: its sends
// count from lead_s later (inference-perf starts a stage's timer 1 s ahead);
// an open-loop stage's send times are drawn now (workload.Spread, a
// per-second Poisson), a closed-loop stage's clients send from then.
func (tr *traffic) beginStage(k int, beginNs int64) error {
	st := tr.staged.Stages[k]
	tr.stage, tr.stageLeft, tr.stageActive = k, st.Requests, 0
	tr.stageBeginNs = beginNs
	tr.stageAtNs = clock.Add(beginNs, clock.Span(tr.staged.LeadS*1e9))
	var err error
	switch {
	case st.Concurrency > 0:
		tr.arrival, tr.concurrency = nil, st.Concurrency
	case st.Arrival == config.StageSpread:
		tr.arrival, err = workload.NewSpread(st.Requests, clock.Span(st.DurationS*1e9), tr.stageRNG)
	default:
		tr.arrival, err = workload.NewPerSecondPoisson(st.RateRPS, st.Requests, tr.stageRNG)
	}
	if err != nil {
		return cfgErr(fmt.Sprintf("traffic.load.stages[%d]", k), err)
	}
	return nil
}

// nextStageAt is when the stage being run, whose last response was acted on at now,
// is found drained (the first poll at or after now, polls every poll_s from
// the stage's beginning, as inference-perf's run_stage checks its finished
// count once a second) and the next stage begins: interval_s after that.
func (tr *traffic) nextStageAt(now int64) int64 {
	found := now
	if p := clock.Span(tr.staged.PollS * 1e9); p > 0 {
		polls := (now - tr.stageBeginNs + p - 1) / p
		found = clock.Add(tr.stageBeginNs, polls*p)
	}
	return clock.Add(found, clock.Span(tr.staged.IntervalS*1e9))
}

func openTraffic(s *config.Spec) (*traffic, error) {
	t := &s.Traffic
	tr := &traffic{maxRequests: t.Stop.MaxRequests, stopNs: math.MaxInt64, graceNs: -1}
	if t.Stop.MaxDurationS > 0 {
		tr.stopNs = max(1, int64(math.Round(t.Stop.MaxDurationS*1e9))) // a positive limit is never "no limit"
		if g := t.Stop.GraceS; g != nil {
			tr.graceNs = int64(math.Round(*g * 1e9))
		}
	}
	streams := workload.NewStreams(s.Execution.Seed)
	tr.jitter = streams.Get(client.StreamJitter)
	var src workload.Source
	var err error
	switch v := t.Source.Type.(type) {
	case config.MooncakeSource:
		src, tr.closer, err = workload.OpenMooncakeBlocks(v.Path, v.BlockTokens())
		tr.path, tr.deltas = v.Path, v.Deltas()
	case config.AzureSource:
		src, tr.closer, err = workload.OpenAzure(v.Path)
		tr.path = v.Path
	case config.LLMServingSimSource:
		src, tr.closer, err = workload.OpenLLMServingSim(v.Path)
		tr.path = v.Path
	case config.SyntheticSource:
		warm, _, prompt := t.Load.Warmup()
		if prompt == "" || prompt == config.WarmupPromptSource || prompt == config.WarmupPromptIsolated {
			// AIPerf's --warmup-request-count W --request-count N sends W
			// warm-up requests, then N measured ones: W more from the source
			v.NumRequests += warm
		}
		src, err = workload.NewSynthetic(v, streams)
		switch {
		case err != nil:
		case prompt == config.WarmupPromptFirst:
			src = workload.RepeatFirstCapped(src, warm, t.Load.WarmupMaxOutputTokens())
		case prompt == config.WarmupPromptLeading:
			src = workload.RepeatLeading(src, warm)
		case prompt == config.WarmupPromptIsolated:
			src = workload.IsolateLeading(src, warm)
		}
	case config.SessionsSource:
		src, err = workload.NewSessions(v, streams)
	default:
		panic(fmt.Sprintf("replay: traffic.source type %T has no reader", v))
	}
	if err != nil {
		var de *workload.DataError
		if errors.As(err, &de) {
			return nil, err
		}
		return nil, cfgErr("traffic.source", err)
	}
	tr.feed, tr.src = client.NewFeed(src), src
	_, synthetic := t.Source.Type.(config.SyntheticSource)
	tr.sessions = !synthetic
	_, tr.grows = t.Source.Type.(config.SessionsSource)
	switch l := t.Load.Mode.(type) {
	case config.TraceLoad:
		tr.mode, tr.trace = config.LoadTrace, workload.NewTraceArrival(l.Speedup)
	case config.RateLoad:
		tr.mode = config.LoadRate
		tr.arrival, err = newRateArrival(l, streams.Get("arrival"))
		if err == nil && l.SpanS > 0 { // the times rescaled so that the last arrives at span_s
			var probe workload.Arrival
			if probe, err = newRateArrival(l, workload.NewStreams(s.Execution.Seed).Get("arrival")); err == nil {
				tr.arrival, err = workload.NewScaledTo(tr.arrival, probe, t.Source.Type.(config.SyntheticSource).NumRequests, clock.Span(l.SpanS*1e9))
			}
		}
		if err != nil {
			return nil, cfgErr("traffic.load", err)
		}
		// a warm-up phase first: its clients send as a closed loop's do
		n, c, _ := t.Load.Warmup()
		tr.inWarmup, tr.warmLeft, tr.concurrency = n > 0, n, c
		tr.capN, tr.capSkip, tr.capQueue = l.MaxConcurrency, l.CappedArrival == config.CappedSkip, l.CappedArrival == config.CappedQueue
	case config.ConcurrencyLoad:
		tr.mode, tr.concurrency = config.LoadConcurrency, l.Concurrency
		tr.inWarmup, tr.warmLeft = l.WarmupRequests > 0, l.WarmupRequests
	case config.StagedLoad:
		tr.mode, tr.staged, tr.stageRNG = config.LoadStages, l, streams.Get("arrival")
		if err := tr.beginStage(0, 0); err != nil {
			return nil, err
		}
	default:
		panic(fmt.Sprintf("replay: traffic.load mode %T has no sender", l))
	}
	return tr, nil
}

// newRateArrival is mode rate's arrival process, drawing from rng.
func newRateArrival(l config.RateLoad, rng *rand.Rand) (workload.Arrival, error) {
	switch l.Arrival {
	case config.ArrivalPoisson:
		return workload.NewPoisson(l.RateRPS, rng)
	case config.ArrivalConstant:
		return workload.NewConstant(l.RateRPS)
	case config.ArrivalGamma:
		return workload.NewGamma(l.RateRPS, l.CV, rng)
	}
	panic("replay: traffic.load.arrival " + l.Arrival + " has no process")
}

func (tr *traffic) close() {
	if tr.closer != nil {
		tr.closer.Close()
	}
}

// allowed reports whether one more request may be sent at sendNs.
// stop.max_requests counts measured requests (AIPerf's --request-count): the
// warm-up ones are sent besides. stop.max_duration_s counts the measured
// phase only, from the end of the warm-up (AIPerf's --benchmark-duration is
// the profiling phase's; the warm-up phase is not bounded by it).
func (tr *traffic) allowed(sendNs int64) bool {
	return (tr.maxRequests == 0 || tr.sent-tr.warmSent < tr.maxRequests) &&
		(tr.inWarmup || sendNs-tr.warmEndNs < tr.stopNs)
}

// mayCancel reports whether a request of the replay may be canceled by its
// client (request_timeout_ms, or stop.grace_s): its gaps are then pooled
// only once it completes.
func mayCancel(path client.Path, tr *traffic) bool {
	return path.TimeoutNs > 0 || tr.graceNs >= 0 && tr.stopNs != math.MaxInt64
}

// graceEndNs is when the client cancels the measured requests still in
// flight (stop.grace_s after the stop time), math.MaxInt64 for never; only
// once the measured phase has begun.
func (tr *traffic) graceEndNs() int64 {
	if tr.graceNs < 0 || tr.stopNs == math.MaxInt64 || tr.inWarmup {
		return math.MaxInt64
	}
	return clock.Add(clock.Add(tr.warmEndNs, tr.stopNs), tr.graceNs)
}

// stopAtNs is the time (ns) from which no request is sent by
// stop.max_duration_s, math.MaxInt64 for none; during a warm-up phase, as if
// the measured phase started now.
func (tr *traffic) stopAtNs(now int64) int64 {
	if tr.stopNs == math.MaxInt64 {
		return math.MaxInt64
	}
	if tr.inWarmup {
		return now + tr.stopNs
	}
	return tr.warmEndNs + tr.stopNs
}

// nextTurn reads the turn after prev in its session and the time it is sent,
// as AIPerf's fixed schedule dispatches a later turn when the previous one
// returns (timing/strategies/fixed_schedule.py, handle_credit_return): in load
// mode trace a turn with a timestamp is sent at that timestamp, or at prev's
// release when the release comes later (never before the previous turn is
// done); otherwise at prev's release plus the turn's own delay (or the path's
// inter-turn delay). ok is false when the session is over or a stop condition
// is reached.
func (tr *traffic) nextTurn(prev, r *workload.Request, releaseNs int64, path *client.Path) (sendNs int64, ok bool, err error) {
	if ok, err = tr.feed.NextTurn(prev, r); !ok {
		return 0, false, tr.feedErr(err)
	}
	if tr.mode == config.LoadTrace && r.HasTimestamp {
		if sendNs, err = tr.traceAt(r); err != nil {
			return 0, false, err
		}
		sendNs = max(sendNs, releaseNs)
	} else {
		sendNs = clock.Add(releaseNs, path.TurnDelayNs(r.DelayNs, r.HasDelay)) // a trace delay may be up to 2^63 ns
	}
	if !tr.allowed(sendNs) {
		return 0, false, nil
	}
	tr.sent++
	return sendNs, true, nil
}

// next reads the next request that starts something (a lone request or a
// session's first turn) and its send time (ns). For a closed loop the caller
// passes now, the time its client is ready. ok is false when the workload is
// over: the source is exhausted or a stop condition is reached.
func (tr *traffic) next(r *workload.Request, now int64) (sendNs int64, ok bool, err error) {
	if tr.done || !tr.allowed(now) {
		tr.done = true
		return 0, false, nil
	}
	if tr.mode == config.LoadStages && tr.stageLeft == 0 { // the next stage begins when this one drains
		return 0, false, nil
	}
	if ok, err := tr.feed.NextStart(r); !ok {
		tr.done = true
		return 0, false, tr.feedErr(err)
	}
	switch {
	case tr.inWarmup: // a warm-up client sends when it is ready
		sendNs = now
	case tr.mode == config.LoadTrace:
		if err := tr.startErr(r); err != nil {
			return 0, false, err
		}
		if sendNs, err = tr.traceAt(r); err != nil {
			return 0, false, err
		}
	case tr.mode == config.LoadRate:
		if sendNs, err = tr.rateArrival(); err != nil {
			return 0, false, err
		}
		sendNs = clock.Add(clock.Add(tr.warmEndNs, sendNs), tr.capLagNs) // counted from the warm-up's end (0 without one), behind by the cap's waits
	case tr.mode == config.LoadStages && tr.arrival != nil:
		at, _ := tr.arrival.Next() // a stage's arrivals are as many as its requests
		sendNs = clock.Add(tr.stageAtNs, at)
	default:
		sendNs = now
	}
	if !tr.allowed(sendNs) {
		tr.done = true
		return 0, false, nil
	}
	tr.sent++
	if tr.mode == config.LoadStages {
		tr.stageLeft--
		tr.stageActive++
	}
	return sendNs, true, nil
}

// rateArrival is mode rate's next arrival time (ns, from the warm-up's end),
// or an error when the arrivals run past the end of the virtual clock.
func (tr *traffic) rateArrival() (int64, error) {
	at, more := tr.arrival.Next()
	if !more {
		return 0, cfgErr("traffic.load.rate_rps", fmt.Errorf("arrivals run past the end of the virtual clock (int64 ns) after %d requests", tr.sent))
	}
	return at, nil
}

// unsend ends the sends on a request read but never sent (stop.max_duration_s
// passed while a capped rate's arrival waited).
func (tr *traffic) unsend() {
	tr.sent--
	tr.done = true
}

// traceAt is the send time (ns) of a row's timestamp in load mode trace, or a
// DataError naming the row when it is past the end of the virtual clock.
func (tr *traffic) traceAt(r *workload.Request) (int64, error) {
	sendNs := tr.trace.At(r.Timestamp)
	if sendNs <= int64(maxClockNs) {
		return sendNs, nil
	}
	origin := "its first row"
	if o, ok := tr.src.(workload.TimeOriginer); ok {
		if ms, text, ok := o.TimeOrigin(); ok && text == ms {
			origin = fmt.Sprintf("the trace's first timestamp, %s ms", ms)
		} else if ok {
			origin = "the trace's first timestamp, " + text
		}
	}
	return 0, &workload.DataError{File: tr.path, Line: r.Line, Field: "timestamp", Msg: fmt.Sprintf(
		"%.6g s after the time origin (%s) is past the end of the virtual clock (2^60 ns, 36 years) at speedup %g",
		float64(r.Timestamp)/1e9, origin, tr.trace.Speedup())}
}

// startErr checks a row that starts something (a lone request, or a
// session's first turn; the replay's and Check's one rule): load mode trace
// sends it at its timestamp, so it needs one.
func (tr *traffic) startErr(r *workload.Request) error {
	if tr.mode != config.LoadTrace || r.HasTimestamp {
		return nil
	}
	return &workload.DataError{File: tr.path, Line: r.Line, Field: "timestamp",
		Msg: "missing: load mode trace sends each request at its timestamp (only a later turn of a session, sent after the turn before it, may go without one)"}
}

// readAll reads a workload without replaying it (Check). First the starts
// the replay reads before any response can come back (readStarts), through
// the feed as the replay reads them, so that reading ahead past later turns
// of open sessions meets the memory budget as the replay's does (feedErr);
// then the rest of a trace through its reader: the first bad row's error, as
// the replay would meet it, and a row that starts something (outside a
// session, or a session's first row) that startErr refuses. A generated
// workload has nothing more to read. Every read looks at ctx (polledSource):
// the feed is made anew over the polled source, nothing having been read yet.
func (tr *traffic) readAll(ctx context.Context) error {
	src := &polledSource{Source: tr.src, ctx: ctx, path: tr.path}
	held := tr.feed.MaxHeld
	tr.feed = client.NewFeed(src)
	tr.feed.MaxHeld = held
	if err := tr.readStarts(); err != nil || tr.path == "" {
		return err
	}
	started := map[int64]bool{} // sessions whose first row has been read here
	var r workload.Request
	for {
		err := src.Next(&r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if r.SessionID < 0 || !started[r.SessionID] && !tr.feed.Open(r.SessionID) {
			if err := tr.startErr(&r); err != nil {
				return err
			}
		}
		if r.SessionID >= 0 {
			started[r.SessionID] = true
		}
	}
}

// readStarts reads, as the replay does (next), the requests that start
// something which the replay reads before any turn can end: one per client of
// a closed loop, all sending at 0 (only the warm-up's when there is one: the
// others wait for it), or the first two of an open loop (the second is read
// when the first is sent). No later turn is taken before then, so whatever
// the feed holds to reach them, the replay holds too. Nothing is read ahead
// without sessions.
func (tr *traffic) readStarts() error {
	if !tr.sessions {
		return nil
	}
	reads := 2
	if tr.mode == config.LoadConcurrency {
		reads = tr.concurrency
		if tr.inWarmup {
			reads = min(reads, tr.warmLeft)
		}
	}
	var r workload.Request
	var now int64
	for i := 0; i < reads; i++ {
		sendNs, ok, err := tr.next(&r, now)
		if err != nil || !ok {
			return err
		}
		if tr.mode != config.LoadConcurrency {
			now = sendNs // the next start is read when this one is sent
		}
	}
	return nil
}

// maxClockNs bounds every time a spec may produce: an eighth of int64 ns
// (36 years), so that sums of delays on top of it cannot wrap.
const maxClockNs = float64(1 << 60)

// feedErr names the memory budget when the feed would read too far ahead
// (client.HeldLimitError) and what to change: a generator's turns per
// session, or a trace's sessions (rows of one session read past to reach
// the next start); other errors pass unchanged.
func (tr *traffic) feedErr(err error) error {
	var he *client.HeldLimitError
	if !errors.As(err, &he) {
		return err
	}
	change := "traffic.source.turns"
	if tr.path != "" {
		change = "the trace's rows between one session's start and the next (" + tr.path + ")"
	}
	if tr.mode == config.LoadConcurrency {
		change += " or traffic.load.concurrency"
	}
	return &config.Error{Field: "execution.max_memory_gb", Msg: he.Error() +
		", which would pass the memory budget: lower " + change + ", or raise execution.max_memory_gb"}
}

// warmupTookAll is the error of a replay whose warm-up phase sent every
// request (w of them), so that nothing is left to report: a trace with no
// more rows than traffic.load.warmup_requests (its first rows are the
// warm-up). (A
// synthetic source sends its warm-up requests besides its num_requests.)
func warmupTookAll(s *config.Spec, w int) error {
	why := "the source had no more requests"
	if file := s.Traffic.Source.TracePath(); file != "" {
		why = fmt.Sprintf("the trace %s has no more rows", file)
	}
	return cfgErr("traffic.load.warmup_requests", fmt.Errorf(
		"all %d requests the replay sent were warm-up requests (%s), leaving none to measure: lower it below the request count", w, why))
}

// warmupSessionErr is the error of a warm-up request (prev) whose session
// has a later turn (next): traffic.load.warmup_requests counts a trace's
// first rows, and a multi-turn session cannot be split between the warm-up
// and the measured phase (AIPerf keeps each conversation in one phase and
// warms multi-turn workloads up with sessions of their own,
// --num-warmup-sessions), so the combination is refused rather than
// measured wrong.
func (tr *traffic) warmupSessionErr(prev, next *workload.Request) error {
	where := "the source"
	if tr.path != "" {
		where = fmt.Sprintf("%s line %d", tr.path, prev.Line)
	}
	return cfgErr("traffic.load.warmup_requests", fmt.Errorf(
		"warm-up request %d (%s) starts a session with later turns (line %d): a trace's first rows are the warm-up, "+
			"and a multi-turn session cannot be split between the warm-up and the measured requests; "+
			"remove warmup_requests for a trace with multi-turn sessions", prev.ID, where, next.Line))
}

// DatasetEntries is the dataset entry each request of s draws, by request id
// (warm-up requests first), when s is a synthetic source with a dataset
// (traffic.source.dataset) without shared prefixes; nil otherwise. It reads the source the replay
// reads, so the entries are the replay's: the AIPerf export names a request's
// conversation by its entry, as AIPerf's records name the dataset conversation
// a re-sent prompt came from.
func DatasetEntries(s *config.Spec) ([]int64, error) {
	if s.Traffic.Benchmark != nil {
		s = s.Clone()
		s.ExpandBenchmark()
	}
	if src, ok := s.Traffic.Source.Type.(config.SyntheticSource); !ok || src.Dataset == nil || src.Dataset.Prefix != nil {
		return nil, nil // (a shared-prefix dataset's requests name their group first, not their entry)
	}
	tr, err := openTraffic(s)
	if err != nil {
		return nil, err
	}
	defer tr.close()
	var out []int64
	var r workload.Request
	for {
		if err := tr.src.Next(&r); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		out = append(out, r.HashIDs[0]) // a dataset request's one id is its entry
	}
}
