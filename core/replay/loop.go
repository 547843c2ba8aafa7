package replay

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/aisimulate/aisimulate/core/client"
	"github.com/aisimulate/aisimulate/core/clock"
	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/aisimulate/aisimulate/core/report"
	"github.com/aisimulate/aisimulate/core/workload"
)

// flight is one request between its send and the client acting on its end.
type flight struct {
	rec    int // index into sim.records
	req    workload.Request
	eng    *engine.Request // on its aggregated or prefill worker
	dec    *engine.Request // P/D: on its decode worker (nil when aggregated)
	pw, dw int32           // global ids of its first worker (aggregated or prefill) and its decode worker
	lastNs int64           // last token received by the client
	slot   int32           // closed-loop client, -1 in an open loop
	hashes []uint64        // prefix-cache block hashes and their group keys (buffers reused)
	groups []uint64
	// reject is why its request can never run on the first pool's workers
	// ("" if it can), checked once at its send
	reject string

	gen      uint32  // bumped when the flight is freed: stale events and outputs are ignored
	stage    uint8   // where the request is (stage* constants), for cancellation
	ended    bool    // the client has its end (completed, rejected, failed, canceled)
	received int     // output tokens received by the client
	gaps     []int64 // with timeouts only: ITL gaps, pooled when the request completes
	chunkNs  []int64 // WithTokenGaps: when the client received each chunk so far
	warmup   bool    // sent in the load generator's warm-up phase: not reported
	// unheard: output tokens of this session's earlier turns that the
	// generator put in the history but the client never received (a turn
	// rejected, failed or canceled): the later turns' prompts leave them out
	unheard int
	// routed: what a kv_router placement of its first pool (0) and of the
	// P/D decode pool (1) holds for it until its prefill and its end
	routed [2]kvPlaced
	// A session turn of a Mooncake trace in AIPerf's deltas_without_responses
	// context mode (deltas.go): pieces is the conversation its prompt
	// continues, histTokens tokens (the earlier rows and the replies the
	// client received); its send appends its own row's pieces (nPrompt in
	// all) and its reply's.
	pieces     []workload.Piece
	nPrompt    int
	histTokens int
}

// Where a flight's request is, for cancellation.
const (
	stageSent     uint8 = iota // sent, not yet at the engine
	stageEngine                // on its aggregated or prefill worker (queued, running or holding KV)
	stageWaitKV                // P/D: waiting for decode blocks
	stageTransfer              // P/D: KV moving to the decode worker
	stageDecode                // P/D: on its decode worker
)

// engineID packs a flight's slot and generation into engine.Request.ID, so that
// outputs of a canceled request still queued for detokenization are recognised.
func engineID(idx int32, gen uint32) int64 { return int64(gen)<<32 | int64(uint32(idx)) }

// flightOf returns the flight an engine output belongs to, or nil if that
// request has since ended (canceled) or its flight was reused.
func (m *sim) flightOf(id int64) (int32, *flight) {
	idx := int32(uint32(id))
	f := m.flights[idx]
	if f.gen != uint32(id>>32) || f.ended {
		return idx, nil
	}
	return idx, f
}

// sim is the state of one replay.
type sim struct {
	spec *config.Spec
	// pcts are the percentiles chosen (WithPercentiles), checked, or nil
	pcts []float64
	// chunks holds each ended request's chunk times (WithTokenGaps), or nil
	chunks *report.ChunkTimes
	// given is the spec's traffic as given (a traffic.benchmark, which spec
	// holds expanded; metadata.spec shows it), and bench describes it (nil
	// without one)
	given config.Traffic
	bench *report.Benchmark
	// readyCheck: the first warm-up request is the benchmark's test request,
	// whose failure stops the tool (config.Benchmark.ReadyCheck)
	readyCheck bool
	// benchClock: the load generator's clock bounds the window (tool
	// vllm_bench_serve: from the measured phase's start, every request)
	benchClock bool
	// ipCap: inference-perf's client cap on requests in flight in a rate
	// stage (config.InferencePerfBenchmark.InFlightCap; 0: none), which the
	// replay refuses to pass
	ipCap   int
	ipBench *config.InferencePerfBenchmark
	dep     *deployment
	// watch sees the measured requests (WithWatcher; nil: none)
	watch Watcher
	tr    *traffic
	h     eventHeap
	now   int64

	// Workers have global ids (event payloads, per-worker arrays); each pool
	// holds a contiguous range of them.
	workers []engine.Worker
	poolOf  []*poolRT
	pools   []*poolRT
	// busy[w]: worker w runs a pass (from the pass's start to its end, as
	// the replay starts and ends them): read at every event for every
	// worker, so kept here rather than asked of the engine
	busy []bool

	flights []*flight
	free    []int32 // unused flight slots
	active  int

	records []report.Record
	cols    *recordColumns // WithRecordColumns: the records as columns, not in records
	acc     report.Accumulator
	pending workload.Request // open loop: the next request to send

	path client.Path
	// loops, per worker (global rank), when detokenizing or the intake
	// shares its loop: its API server's event loop (poolRT.loopOf), built
	// once so that an arrival and a pass end index it without asking the pool
	loops []*client.OutputProcessor
	outQ  []outQueue // per worker: outputs waiting for their job
	// recvNs, per worker: when the client received the worker's latest
	// outputs (a pass end, or its detokenization job's end). A steadily
	// decoding request's previous token is always there (stepOuts).
	recvNs []int64
	// inbox (async scheduling only), per worker: requests that reached it
	// while a pass was running, added to its queue once the next pass is formed.
	inbox [][]held
	// intaking (a shared event loop with data parallelism only),
	// per worker: requests placed on it whose input processing on its loop
	// is not done yet (arrive; heldLoad counts them).
	intaking [][]held

	// halt is set when the replay cannot go on: an event would pass
	// clock.Horizon (at) or the replay grew past its memory budget
	// (guardMemory); the loop stops with it after the current timestamp.
	halt error
	// mem is the replay's memory estimate and budget (memory.go).
	mem *MemoryEstimate

	tl *report.Timeline // every pass, when WithTimeline; nil otherwise

	hist []workload.Piece // history's scratch (deltas.go)
	// kvRouting: a pool places by kv_router (router.go), whose accounts the
	// request's life updates
	kvRouting bool

	// Cruising workers (cruise.go): cruiseEnd[w] is the end of worker w's
	// running pass when it cruises (math.MaxInt64 when it does not); nil
	// when the replay's workers never cruise. nCruise counts them; stalled
	// is set when the last startPasses left a worker idle with work.
	cruiseEnd []int64
	nCruise   int
	landed    int64  // cruising passes ended
	landedOut *int64 // runOptions.landed: where the run leaves landed (tests)
	stalled   bool

	// Control (control.go): the context whose done channel the loop polls,
	// the progress callback, and the count of requests that ended.
	ctx        context.Context
	done       <-chan struct{}
	onProgress func(Progress)
	ended      int64

	load loadStats // the measured requests in flight and the queues they met (load.go)
}

// outQueue holds, in FIFO order, the outputs of each pass whose detokenization
// job has not completed yet. Jobs complete in submission order (one FIFO server
// per worker), so a job's outputs are always at the head. Outputs are kept by
// request id, not by pointer: a request canceled meanwhile may have had its
// engine.Request reused, and its id tells the stale output apart.
type outQueue struct {
	outs []output
	jobs []job
	oh   int // head of outs
	jh   int // head of jobs
}

// job is one pass's outputs: its explicit outputs, the count of steady
// requests that each received a token (engine.Worker.FinishPass) and how many
// of those are measured (not warm-up requests).
type job struct{ outs, steady, measured int }

// output is one engine output as the client will receive it.
type output struct {
	id     int64 // engine.Request.ID: flight slot and generation
	kind   int   // engine.OutToken, engine.OutFinished or outSync
	tokens int   // outSync: the tokens it received implicitly
}

// outSync is an output that ends a request's implicit decoding: the tokens it
// produced in the passes up to and including this job's (engine.Sync).
const outSync = -1

func (q *outQueue) push(outs []engine.Out, steady, measured int) {
	for _, o := range outs {
		q.outs = append(q.outs, output{id: o.Req.ID, kind: o.Kind})
	}
	q.jobs = append(q.jobs, job{len(outs), steady, measured})
}

// pending reports whether a job is waiting for its detokenization.
func (q *outQueue) pending() bool { return q.jh < len(q.jobs) }

// sync adds a sync to the newest job (pending): the request's last implicit
// token is among that job's.
func (q *outQueue) sync(id int64, tokens int) {
	q.outs = append(q.outs, output{id: id, kind: outSync, tokens: tokens})
	q.jobs[len(q.jobs)-1].outs++
}

// pop returns the head job's outputs (valid until the next push), its steady
// count and how many of those are measured.
func (q *outQueue) pop() ([]output, int, int) {
	j := q.jobs[q.jh]
	q.jh++
	outs := q.outs[q.oh : q.oh+j.outs]
	q.oh += j.outs
	if q.jh == len(q.jobs) { // drained: reuse the buffers from the start
		q.outs, q.jobs, q.oh, q.jh = q.outs[:0], q.jobs[:0], 0, 0
	}
	return outs, j.steady, j.measured
}

// Run replays a spec (decoded, or built in Go with every field given) and
// returns its report. spec is not changed: the options apply to Run's own
// copy. Errors: *config.Error for a spec the core cannot build (with the
// field), *workload.DataError for bad workload data (file and line), other
// errors for simulation failures.
func Run(spec *config.Spec, opts ...Option) (*report.Report, error) {
	return run(context.Background(), spec, opts)
}

func run(ctx context.Context, spec *config.Spec, opts []Option) (*report.Report, error) {
	m, err := prepare(spec, opts)
	if err != nil {
		return nil, err
	}
	defer m.tr.close()
	s := m.spec
	m.ctx, m.done = ctx, ctx.Done()
	// Growing the records slice copied every record log2(n) times (a sixth of a
	// large closed loop's time); size it once when the count is known (an
	// upper bound: a synthetic count, max_requests, a trace's lines, the
	// arrivals a rate fits in max_duration_s), never from a count the run
	// may not reach (1e9 requests stopped after 1 s preallocated 2.7 GB).
	if m.mem.Exact && m.mem.Requests > 0 {
		if m.cols == nil {
			m.records = make([]report.Record, 0, min(m.mem.Requests, 1<<24))
		}
		m.acc.Reserve(int(min(m.mem.Requests, 1<<24)))
	}
	if err := m.start(); err != nil {
		return nil, err
	}
	if err := m.loop(); err != nil {
		return nil, err
	}
	if err := m.poll(); err != nil { // the last progress, and a stop during the last steps
		return nil, err
	}
	if err := m.checkEnd(); err != nil {
		return nil, err
	}
	if m.landedOut != nil {
		*m.landedOut = m.landed
	}
	if file := s.Traffic.Source.TracePath(); m.sent() == 0 && file != "" && m.tr.feed.Rows() == 0 {
		return nil, &workload.DataError{File: file, Msg: "the trace has no requests"}
	}
	// The warm-up requests were sent before any measured one: the first
	// warmSent records. They ran, but a load generator does not report them.
	if w := m.tr.warmSent; w > 0 && m.sent() <= w {
		return nil, warmupTookAll(s, w)
	}
	md := m.dep.metadata(s, m)
	md.Percentiles = m.pcts
	rep := &report.Report{Metadata: md, Summary: m.acc.Close(m.dep.gpus()), Timeline: m.tl}
	if m.chunks != nil {
		m.chunks.Cut(m.tr.warmSent, m.sent()-m.tr.warmSent)
		rep.Chunks = m.chunks
	}
	m.loadSummary(&rep.Summary, md.Pools)
	if m.cols != nil {
		if err := m.cols.flush(m.tr.warmSent); err != nil {
			return nil, err
		}
		rep.Columns = &m.cols.b
	} else {
		rep.Records = m.records[m.tr.warmSent:]
	}
	return rep, nil
}

// rec is record i (its index in send order).
func (m *sim) rec(i int) *report.Record {
	if m.cols != nil {
		return m.cols.at(i)
	}
	return &m.records[i]
}

// sent is the number of requests sent (records made).
func (m *sim) sent() int {
	if m.cols != nil {
		return m.cols.n
	}
	return len(m.records)
}

// prepare builds a replay's state from a copy of spec with the options
// applied (m.spec): deployment, client path, traffic and workers. The caller
// closes m.tr.
func prepare(spec *config.Spec, opts []Option) (*sim, error) {
	s := spec.Clone()
	o := runOptions{spec: s}
	for _, opt := range opts {
		opt(&o)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	given, bench := s.Traffic, s.Traffic.Benchmark
	notes := s.ExpandBenchmark()
	dep, err := buildDeployment(s, o.cache)
	if err != nil {
		return nil, err
	}
	path := clientPath(s)
	mem, err := estimate(s, dep, recordsHeld(&o), o.chunks)
	if err != nil {
		return nil, err
	}
	if err := mem.checkBudget(s); err != nil {
		return nil, err
	}
	tr, err := openTraffic(s)
	if err != nil {
		return nil, err
	}
	m := &sim{spec: s, dep: dep, tr: tr, path: path, mem: mem, onProgress: o.progress, given: given}
	if bench != nil {
		m.bench = &report.Benchmark{Tool: bench.Name(), Traffic: s.Traffic.JSON(), Notes: notes}
		m.readyCheck = bench.ReadyCheck()
		if ip, ok := bench.Tool.(config.InferencePerfBenchmark); ok {
			m.ipCap, _ = ip.InFlightCap()
			m.ipBench = &ip
		}
		switch bench.Name() {
		case config.ToolVLLMBenchServe:
			// its duration runs from the benchmark's start (after the
			// warm-ups) to the end of its last request, failed ones included
			// (report.Accumulator.SetWindowStart)
			m.benchClock = true
			m.acc.SetWindowRule(report.EveryRequestWindow)
			m.acc.SetWindowStart(0)
		case config.ToolSGLangBenchServing:
			// benchmark_start_time to the end of its last request, failed
			// ones included (benchmark(), python/sglang/bench_serving.py);
			// get_request yields the first request at once, so the start is
			// the first measured send, not a gap before it
			m.acc.SetWindowRule(report.EveryRequestWindow)
		}
	}
	// sessions' later turns held to reach the next session's start: at most
	// what the budget leaves once everything else is counted
	tr.feed.MaxHeld = int(max(1, (mem.Budget-(mem.Total-mem.Held))/requestB))
	m.watch = o.watch
	if o.slo != nil {
		if err := checkSLO(o.slo); err != nil {
			tr.close()
			return nil, err
		}
		m.acc.SetSLO(*o.slo)
		if bench != nil && bench.Name() == config.ToolVLLMBenchServe {
			m.acc.SetVLLMGoodput()
		}
	}
	if o.chunks {
		m.chunks = &report.ChunkTimes{}
	}
	if o.pcts != nil {
		ps, err := report.CheckPercentiles(o.pcts)
		if err != nil {
			tr.close()
			return nil, &config.Error{Field: "percentiles", Msg: err.Error()}
		}
		m.acc.SetPercentiles(ps)
		m.pcts = ps
	}
	if o.columns {
		expect := 0
		if mem.Exact {
			expect = int(min(mem.Requests, pageRows))
		}
		m.cols = newRecordColumns(o.pageShift, expect, o.emit)
		if n, ok := tr.src.(workload.SessionNamer); ok { // string ids: session_id labelled
			m.cols.b.SessionNames = n.SessionNames
		}
	}
	if o.timeline {
		m.tl = &report.Timeline{}
		for _, p := range dep.pools {
			m.tl.Pools = append(m.tl.Pools, p.name)
			m.tl.KVBlocksTotal = append(m.tl.KVBlocksTotal, p.cfg.NumBlocks)
		}
	}
	for pi, p := range dep.pools {
		rt := &poolRT{pool: p, first: len(m.workers), index: uint8(pi)}
		cfg := p.cfg
		// a request's gaps are pooled once it completes; its chunks are seen one by one
		cfg.PerTokenDecode = o.perToken || mayCancel(path, tr) || o.chunks
		cfg.DecodeWindows = perf.DecodeWindows(p.perf) // windowed attention: Σ min(kv+1, W), kept in aggregate
		for i := 0; i < p.count*p.dp; i++ {
			w, err := dep.family.NewWorker(cfg, p.perf)
			if err != nil {
				tr.close()
				return nil, err
			}
			rt.workers = append(rt.workers, w)
			m.workers = append(m.workers, w)
			m.poolOf = append(m.poolOf, rt)
		}
		if p.lockstep {
			rt.batches = make([]perf.Batch, p.dp)
		}
		if p.dp > 1 { // the requests a rank holds that its engine does not see yet
			rt.heldLoad = m.heldLoad
		}
		if b, ok := dep.family.(engine.RankBalancer); ok && p.dp > 1 {
			rt.balancer, rt.loads = b, make([]engine.Load, p.dp)
		}
		if g, ok := dep.family.(engine.GroupPlanner); ok && p.lockstep {
			rt.planner = g
		}
		switch p.placement {
		case config.PlacementKVRouter:
			rt.kv, m.kvRouting = newKVRouter(rt, s.Execution.Seed), true
		case config.PlacementPrefixAffinity:
			rt.aff = newPrefixAffinity(rt, s.Execution.Seed)
		}
		m.pools = append(m.pools, rt)
	}
	m.recvNs = make([]int64, len(m.workers))
	m.busy = make([]bool, len(m.workers))
	if path.Detokenize || path.SharedLoop {
		procs := make([]client.OutputProcessor, len(m.workers))
		m.loops = make([]*client.OutputProcessor, len(m.workers))
		for w := range m.loops {
			m.loops[w] = &procs[m.poolOf[w].loopOf(w)]
		}
	}
	if path.Detokenize {
		m.outQ = make([]outQueue, len(m.workers))
	}
	if dep.overlap() {
		m.inbox = make([][]held, len(m.workers))
	}
	if path.SharedLoop {
		m.intaking = make([][]held, len(m.workers))
	}
	m.landedOut = o.landed
	if !o.noCruise && m.canCruise() {
		m.cruiseEnd = make([]int64, len(m.workers))
		for i := range m.cruiseEnd {
			m.cruiseEnd[i] = math.MaxInt64
		}
	}
	return m, nil
}

// start schedules the first sends: the first request of an open loop, or one
// request per closed-loop client at time 0.
func (m *sim) start() error {
	if m.tr.mode == config.LoadStages {
		m.at(m.tr.stageAtNs, phaseArrival, evStageStart, -1, 0)
		return nil
	}
	if m.tr.mode == config.LoadConcurrency || m.tr.inWarmup {
		// Every client sends at 0, in client order; a client that finds the
		// workload exhausted stays idle, so the loop stops at the first one.
		for c := 0; c < m.tr.concurrency && !m.tr.done; c++ {
			if err := m.slotNext(int32(c)); err != nil {
				return err
			}
		}
		return nil
	}
	return m.prefetch()
}

// prefetch reads the next open-loop request and schedules its send.
func (m *sim) prefetch() error {
	t, ok, err := m.tr.next(&m.pending, m.now)
	if err != nil || !ok {
		return err
	}
	m.at(t, phaseArrival, evSend, -1, 0)
	return nil
}

// sendArrival sends the open loop's pending request now and reads the next.
func (m *sim) sendArrival() error {
	m.send(m.newFlight(&m.pending, -1))
	if m.tr.capN > 0 {
		m.tr.capActive++
	}
	return m.prefetch()
}

// capReleased: the client acted on a capped rate's request (traffic.load.
// max_concurrency), freeing its slot: an arrival waiting for one is sent now,
// unless stop.max_duration_s has passed while it waited (AIPerf checks its
// phase again once it has the slot, and sends nothing more); the sends after
// it run the wait later.
func (m *sim) capReleased() error {
	tr := m.tr
	tr.capActive--
	if len(tr.capWaiting) > 0 { // capped_arrival queue: the oldest waiting goes
		r := tr.capWaiting[0]
		tr.capWaiting = tr.capWaiting[1:]
		m.send(m.newFlight(&r, -1))
		tr.capActive++
		return nil
	}
	if !tr.capBlocked {
		return nil
	}
	tr.capBlocked = false
	if m.now-tr.warmEndNs >= tr.stopNs {
		tr.unsend()
		return nil
	}
	tr.capLagNs += m.now - tr.capSinceNs
	return m.sendArrival()
}

// skipArrival: an arrival of a capped rate found no free slot and passes
// unused (capped_arrival skip); the pending request goes at the next
// arrival, unless stop.max_duration_s ends before it.
func (m *sim) skipArrival() error {
	tr := m.tr
	at, err := tr.rateArrival()
	if err != nil {
		return err
	}
	if at = clock.Add(tr.warmEndNs, at); at-tr.warmEndNs >= tr.stopNs {
		tr.unsend()
		return nil
	}
	m.at(at, phaseArrival, evSend, -1, 0)
	return nil
}

// setNow moves the clock to t, the loop's next timestamp (an event's or a
// cruising pass end's).
func (m *sim) setNow(t int64) {
	if t < m.now {
		clockWentBack(m.now, t)
	}
	m.now = t
}

// clockWentBack panics on INV-3 (time never goes back); out of line, so that
// setNow stays small enough to inline.
//
//go:noinline
func clockWentBack(now, t int64) {
	panic(fmt.Sprintf("replay: INV-3 clock went back from %d to %d ns", now, t))
}

func (m *sim) loop() error {
	if err := m.poll(); err != nil { // stopped before it started
		return err
	}
	steps := 0
	for {
		if m.nCruise > 0 {
			if err := m.cruise(&steps); err != nil {
				return err
			}
		}
		if m.h.Len() == 0 {
			break // cruise returns with an empty queue only when no worker cruises
		}
		if steps++; steps&(checkEvery-1) == 0 {
			if err := m.poll(); err != nil {
				return err
			}
		}
		t := m.h.next()
		m.setNow(t)
		m.h.setTime(t)
		if m.nCruise > 0 {
			m.landCruises(t)
		}
		for {
			e, ok := m.h.popAt(t)
			if !ok {
				break
			}
			if err := m.dispatch(&e); err != nil {
				return err
			}
		}
		m.startPasses()
		if m.halt != nil {
			return m.halt
		}
	}
	return nil
}

func (m *sim) dispatch(e *event) error {
	switch e.kind {
	case evPassEnd:
		m.passEnd(int(e.idx))
	case evSend:
		if tr := m.tr; tr.capN > 0 && tr.capActive >= tr.capN { // its time has come, no slot is free
			switch {
			case tr.capSkip:
				return m.skipArrival()
			case tr.capQueue: // it waits at the client; the next arrival keeps its time
				tr.capWaiting = append(tr.capWaiting, m.pending)
				return m.prefetch()
			}
			tr.capBlocked, tr.capSinceNs = true, m.now // it waits for one
			return nil
		}
		return m.sendArrival()
	case evTurnSend:
		m.send(e.idx)
	case evReceive:
		outs, steady, measured := m.outQ[e.idx].pop()
		for _, o := range outs {
			if o.kind == outSync {
				m.sync(o.id, o.tokens, m.now)
			} else {
				m.receive(o.id, o.kind)
			}
		}
		m.steadyTokens(int(e.idx), steady, measured, len(outs) > 0)
	case evArrival:
		if m.flights[e.idx].gen == e.gen {
			m.arrive(e.idx)
		}
	case evIntakeDone:
		if m.flights[e.idx].gen == e.gen {
			m.intakeDone(e.idx)
		}
	case evRelease:
		return m.release(e.idx)
	case evTransferEnd:
		if m.flights[e.idx].gen == e.gen {
			m.transferEnd(e.idx)
		}
	case evTimeout, evGraceEnd:
		if f := m.flights[e.idx]; f.gen == e.gen && !f.ended {
			m.cancel(e.idx, e.kind == evGraceEnd)
		}
	case evStageStart:
		return m.startStage()
	}
	return nil
}

// startStage: the stage being run starts sending (traffic.load mode
// stages): an open loop's first arrival is read, or every client of a
// closed loop sends, in client order.
func (m *sim) startStage() error {
	if m.tr.arrival != nil {
		return m.prefetch()
	}
	for c := 0; c < m.tr.concurrency && m.tr.stageLeft > 0 && !m.tr.done; c++ {
		if err := m.slotNext(int32(c)); err != nil {
			return err
		}
	}
	return nil
}

// stageReleased: a request of the stage being run was acted on (its client,
// slot ≥ 0, sends its next one); when the stage has sent and seen back all
// of its requests, the next stage begins (traffic.nextStageAt).
func (m *sim) stageReleased(slot int32) error {
	tr := m.tr
	tr.stageActive--
	if slot >= 0 {
		if err := m.slotNext(slot); err != nil {
			return err
		}
	}
	if tr.stageLeft > 0 || tr.stageActive > 0 || tr.stage+1 == len(tr.staged.Stages) || tr.done {
		return nil
	}
	if err := tr.beginStage(tr.stage+1, tr.nextStageAt(m.now)); err != nil {
		return err
	}
	m.at(tr.stageAtNs, phaseArrival, evStageStart, -1, 0)
	return nil
}

// newFlight takes a flight for request r of closed-loop client slot (−1: open loop).
func (m *sim) newFlight(r *workload.Request, slot int32) int32 {
	m.active++
	var idx int32
	if n := len(m.free); n > 0 {
		idx = m.free[n-1]
		m.free = m.free[:n-1]
	} else {
		f := &flight{eng: m.dep.family.NewRequest()}
		if m.dep.disagg {
			f.dec = m.dep.family.NewRequest()
		}
		m.flights = append(m.flights, f)
		idx = int32(len(m.flights) - 1)
		if len(m.flights)%guardEvery == 0 {
			m.guardMemory()
		}
	}
	f := m.flights[idx]
	f.req, f.slot = *r, slot
	f.stage, f.ended, f.received, f.warmup, f.unheard = stageSent, false, 0, false, 0
	f.gaps, f.chunkNs = f.gaps[:0], f.chunkNs[:0]
	if m.kvRouting {
		f.routed = [2]kvPlaced{}
	}
	f.pieces, f.nPrompt, f.histTokens = f.pieces[:0], 0, 0
	return idx
}

// send: the client sends flight idx's request at m.now; it reaches the engine
// after the send leg.
func (m *sim) send(idx int32) {
	f := m.flights[idx]
	r := &f.req
	f.lastNs = report.NoTime
	rec := report.Record{
		RequestID: r.ID, InputTokens: r.InputTokens, SendNs: m.now, ArrivalNs: report.NoTime,
		FirstTokenNs: report.NoTime, SecondTokenNs: report.NoTime, Worker: -1, PrefillWorker: -1, DecodeWorker: -1, SessionID: r.SessionID, Turn: r.Turn,
	}
	if m.cols != nil {
		f.rec = m.cols.add(rec)
	} else {
		f.rec = len(m.records)
		m.records = append(m.records, rec)
	}
	if m.sent()%guardEvery == 0 {
		m.guardMemory()
	}
	if m.watch != nil && !f.warmup {
		m.watched(m.watch.Sent(f.rec-m.tr.warmSent, m.rec(f.rec)))
	}
	if !m.load.runStarted { // the run's span, for worker_utilization, starts here
		m.load.runStarted, m.load.runStartNs = true, m.now
	}
	if !f.warmup {
		m.load.sent(m.now, int64(r.InputTokens)+int64(r.OutputTokens), m.queueSample())
	}
	var hashes, groups []uint64
	partial := 0
	f.reject = m.fitReason(r)
	if m.ipCap > 0 && m.active > m.ipCap && m.halt == nil && m.tr.mode == config.LoadStages && m.tr.staged.Stages[m.tr.stage].Concurrency == 0 {
		m.halt = m.ipBench.InFlightCapError("traffic.benchmark", m.active)
	}
	if f.reject != "" && f.warmup && m.readyCheck && m.halt == nil {
		// every warm-up copies the first prompt, the test request's
		m.halt = cfgErr("traffic.benchmark", fmt.Errorf("the initial test request (the first prompt: %d input tokens, %d output) is rejected: %s; "+
			"vllm bench serve stops there (\"Initial test run failed - Please make sure benchmark arguments are correctly specified\")", r.InputTokens, r.OutputTokens, f.reject))
	}
	deltas := m.tr.deltas && r.SessionID >= 0
	if deltas {
		m.turnPieces(f)
	}
	if cfg := &m.pools[0].cfg; cfg.PrefixCaching && f.reject == "" {
		if deltas { // its blocks are the conversation's: each one a group of its own
			f.hashes = workload.PieceHashes(f.pieces, cfg.HashBlock(), f.hashes)
			hashes = f.hashes
		} else if cfg.PartialBlockHash { // an engine that matches prefixes token by token
			hashes, partial = f.tokenKeys(r, cfg.HashBlock())
		} else {
			f.hashes, f.groups = workload.BlockHashesGroups(r, cfg.BlockSize, f.hashes, f.groups)
			hashes, groups = f.hashes, f.groups
		}
	}
	f.eng.Reset(engineID(idx, f.gen), r.InputTokens, r.OutputTokens, hashes, groups)
	f.eng.PartialTokens = partial
	f.eng.Unmeasured = f.warmup // its steady tokens' gaps are not pooled (steadyTokens)
	// the decode-side request is used only with P/D (else it stays zero)
	if m.dep.disagg {
		f.dec.Reset(0, 0, 0, nil, nil)
	}
	if m.sharedLoop() { // reaches the API server; its input processing waits on the loop (arrive)
		m.at(m.now+m.path.SendNs, phaseArrival, evArrival, idx, f.gen)
	} else {
		m.at(m.now+m.path.ArrivalDelayNs(r.InputTokens), phaseArrival, evArrival, idx, f.gen)
	}
	if m.path.TimeoutNs > 0 {
		m.at(m.now+m.path.TimeoutNs, phaseClientAction, evTimeout, idx, f.gen)
	}
	if g := m.tr.graceEndNs(); g != math.MaxInt64 && !f.warmup {
		m.at(g, phaseClientAction, evGraceEnd, idx, f.gen)
	}
}

// tokenKeys makes r's prefix keys for an engine that matches prefixes token
// by token (engine.Config.PartialBlockHash): the hashes of its blocks of bs
// tokens, then that of the known content's last, partial block, whose
// tokens it returns (0: none).
func (f *flight) tokenKeys(r *workload.Request, bs int) ([]uint64, int) {
	f.hashes = workload.BlockHashes(r, bs, f.hashes)
	if h, n, ok := workload.PartialBlockHash(r, bs, f.hashes); ok {
		f.hashes = append(f.hashes, h)
		return f.hashes, n
	}
	return f.hashes, 0
}

// canRun reports whether r can ever run on the first pool's workers (all
// alike). One that cannot is rejected when it arrives, so its prefix hashes
// (one per block of a prompt of any length: a billion-token prompt's would
// take 1 GB) are not built; the work stays proportional to what runs.
func (m *sim) canRun(r *workload.Request) bool { return m.fitReason(r) == "" }

// fitReason is why r can never run on the first pool's workers, or "" if it
// can: the arrival's check (CheckFits, or CheckPrefill with P/D), made once.
func (m *sim) fitReason(r *workload.Request) string {
	w := m.workers[m.pools[0].first]
	if m.dep.disagg {
		return w.CheckPrefill(r.InputTokens, r.OutputTokens)
	}
	return w.CheckFits(r.InputTokens, r.OutputTokens)
}

// arrive places a request that reached the engine on a worker of the first
// pool (aggregated or prefill), or rejects it. With a shared event loop the
// request has reached the worker's API server: it is placed, and reaches the
// engine when its input processing on that worker's loop is done (intakeDone).
func (m *sim) arrive(idx int32) {
	f := m.flights[idx]
	if f.ended { // canceled during the send leg
		return
	}
	rec := m.rec(f.rec)
	p := m.pools[0]
	w := p.place(f.eng.Prompt, f.eng.Hashes, m.now, &f.routed[0])
	rec.Worker = p.server(w)
	f.pw = int32(w)
	if m.sharedLoop() { // still stageSent: a cancel meanwhile finds nothing on the worker
		if p.dp > 1 { // counted on its rank by the next placement (heldLoad)
			m.intaking[w] = append(m.intaking[w], held{idx, f.gen})
		}
		m.at(m.loops[w].Intake(&m.path, m.now, f.req.InputTokens), phaseArrival, evIntakeDone, idx, f.gen)
		return
	}
	f.stage = stageEngine
	rec.ArrivalNs = m.now
	if m.dep.disagg {
		m.arrivePD(idx, w)
		return
	}
	m.reachEngine(idx, w)
}

// intakeDone: flight idx's input processing on its worker's API server loop
// is done (arrive); it reaches the engine now.
func (m *sim) intakeDone(idx int32) {
	f := m.flights[idx]
	if f.ended { // canceled during its input processing
		return
	}
	m.rec(f.rec).ArrivalNs = m.now
	f.stage = stageEngine
	m.reachEngine(idx, int(f.pw))
}

// reachEngine admits flight idx's request to aggregated worker w, or rejects
// it (fitReason, checked at the send).
func (m *sim) reachEngine(idx int32, w int) {
	f := m.flights[idx]
	if reason := f.reject; reason != "" {
		m.rec(f.rec).Reason = reason
		m.end(idx, report.StatusRejected)
		return
	}
	m.admit(w, idx)
}

// sharedLoop reports whether a request's input processing runs on its
// worker's API server event loop (engine.tokenization.shared_event_loop;
// aggregated workers only).
func (m *sim) sharedLoop() bool { return m.path.SharedLoop && !m.dep.disagg }

// held is a request in a worker's inbox: its flight and the flight's generation.
type held struct {
	idx int32
	gen uint32
}

// admit queues flight idx's request on worker w. With async scheduling a
// request that arrives while w runs a pass waits in w's inbox: vLLM's engine
// core forms pass k+1 while pass k runs (EngineCore.step_with_batch_queue with
// a batch queue of two), and it takes new requests from its input queue only
// between steps, so one that arrives during pass k first runs in pass k+2 —
// one pass later than without async scheduling. Measured on vLLM 0.19.0
// (../shared/data/real/llmservingsim: first_token_ts − scheduled_ts is two
// step times for a request whose prompt fits one step).
func (m *sim) admit(w int, idx int32) {
	f := m.flights[idx]
	if m.inbox != nil && m.busy[w] && m.poolOf[w].overlap {
		m.inbox[w] = append(m.inbox[w], held{idx, f.gen})
		return
	}
	m.workers[w].Add(f.eng)
}

// heldLoad is the requests in worker w's inbox, and those placed on it still
// in input processing on its API server's loop, and their prompt tokens (a
// RankBalancer counts them on the rank).
func (m *sim) heldLoad(w int) engine.Load {
	var l engine.Load
	if m.intaking != nil {
		keep := m.intaking[w][:0] // those that reached the engine or ended are dropped
		for _, h := range m.intaking[w] {
			if f := m.flights[h.idx]; f.gen == h.gen && !f.ended && f.stage == stageSent {
				keep = append(keep, h)
				l.Requests++
				l.PromptTokens += f.eng.Prompt
			}
		}
		m.intaking[w] = keep
	}
	if m.inbox == nil {
		return l
	}
	for _, h := range m.inbox[w] {
		if f := m.flights[h.idx]; f.gen == h.gen && !f.ended {
			l.Requests++
			l.PromptTokens += f.eng.Prompt
		}
	}
	return l
}

// startPasses forms a pass on every idle worker with work, in global order.
// The data-parallel ranks of a lockstep worker start together
// (startLockstep).
func (m *sim) startPasses() {
	m.stalled = false
	for i, busy := range m.busy {
		if busy { // (a lockstep worker's ranks are busy together: its group has nothing to start)
			continue
		}
		if p := m.poolOf[i]; p.lockstep {
			if (i-p.first)%p.dp == 0 {
				m.startLockstep(p, i)
			}
			continue
		}
		w := m.workers[i]
		if w.HasWork() && m.startPass(i) {
			m.flushInbox(i)
			continue
		}
		if m.flushInbox(i) && w.HasWork() && m.startPass(i) {
			continue
		}
		m.stalled = m.stalled || w.HasWork()
	}
}

// startPass forms a pass on idle worker w; false when nothing can run. A
// pass of steady requests only cruises (cruise.go) instead of ending by an
// event.
func (m *sim) startPass(w int) bool {
	d, ok := m.workers[w].StartPass()
	m.applySyncs(w)
	if !ok {
		return false
	}
	m.passStarted(w, d)
	return true
}

// passStarted schedules the end of the pass worker w started at m.now,
// lasting d ns: an event, or the worker cruises.
func (m *sim) passStarted(w int, d int64) {
	m.busy[w] = true
	if end := m.now + d; m.cruiseEnd != nil && end <= clock.Horizon && m.workers[w].OnlySteady() {
		m.cruiseEnd[w] = end
		m.nCruise++
	} else {
		m.at(end, phasePassEnd, evPassEnd, int32(w), 0)
	}
	if m.tl != nil {
		m.recordPass(w, d)
	}
	if m.kvRouting {
		m.kvEvents(w)
	}
}

// kvEvents hands a kv_router the KV events worker w recorded in its last
// call (a pass formed, a handoff reserved), which happened at m.now.
func (m *sim) kvEvents(w int) {
	if p := m.poolOf[w]; p.kv != nil {
		p.kv.events(w-p.first, m.workers[w].KVEvents(), m.now)
	}
}

// applySyncs hands the client the implicit tokens of the requests that worker
// w's last StartPass or PlanPass took out of the steady set (engine.Sync).
func (m *sim) applySyncs(w int) {
	for _, s := range m.workers[w].Syncs() {
		// the request's last implicit token was in the worker's latest
		// outputs: still queued for detokenization, or already received
		if m.path.Detokenize && m.outQ[w].pending() {
			m.outQ[w].sync(s.Req.ID, s.Tokens)
		} else {
			m.sync(s.Req.ID, s.Tokens, m.recvNs[w])
		}
	}
}

// flushInbox adds worker w's held requests to its queue in arrival order,
// skipping any the client canceled meanwhile; it reports whether it added any.
func (m *sim) flushInbox(w int) bool {
	if m.inbox == nil || len(m.inbox[w]) == 0 {
		return false
	}
	added := false
	for _, h := range m.inbox[w] {
		if f := m.flights[h.idx]; f.gen == h.gen && !f.ended {
			m.workers[w].Add(f.eng)
			added = true
		}
	}
	m.inbox[w] = m.inbox[w][:0]
	return added
}

// startLockstep is startPasses for the dp ranks first … first+dp−1 of a
// lockstep worker: the ranks' inboxes join their queues after the group's
// pass is formed, or before it when no rank had anything to run.
func (m *sim) startLockstep(p *poolRT, first int) {
	started, idle := m.startGroup(p, first)
	if !idle {
		return
	}
	flushed := false
	for r := 0; r < p.dp; r++ {
		flushed = m.flushInbox(first+r) || flushed
	}
	if !started && flushed {
		m.startGroup(p, first)
	}
}

// startGroup starts a pass on the dp ranks first … first+dp−1 of a lockstep
// worker when all of them are idle (idle) and one can run something
// (started): each rank plans its own pass (an idle rank runs a dummy one),
// the pool's perf model prices them together (the MoE layers gather every
// rank's tokens) and all end together, at the slowest rank.
func (m *sim) startGroup(p *poolRT, first int) (started, idle bool) {
	ranks := m.workers[first : first+p.dp]
	work := false
	for r, w := range ranks {
		if m.busy[first+r] {
			return false, false
		}
		work = work || w.HasWork()
	}
	if !work {
		return false, true
	}
	planned := false
	if p.planner != nil {
		planned = p.planner.PlanGroup(ranks)
	}
	for r, w := range ranks {
		if p.planner == nil {
			planned = w.PlanPass() || planned
		}
		m.applySyncs(first + r)
		p.batches[r] = *w.Batch()
	}
	if !planned {
		return false, true
	}
	d := p.perf.(groupPricer).GroupPassTime(p.batches)
	for r, w := range ranks {
		w.BeginPass(d)
		m.busy[first+r] = true
		m.at(m.now+d, phasePassEnd, evPassEnd, int32(first+r), 0)
		if m.tl != nil {
			m.recordPass(first+r, d)
		}
		if m.kvRouting {
			m.kvEvents(first + r)
		}
	}
	return true, true
}

// recordPass appends worker w's pass, started at m.now and lasting d ns, to
// the timeline.
func (m *sim) recordPass(w int, d int64) {
	st := m.workers[w].PassStats()
	p := m.poolOf[w]
	m.tl.Passes = append(m.tl.Passes, report.Pass{
		Pool: p.index, Worker: int32(w - p.first), StartNs: m.now, EndNs: m.now + d,
		PrefillTokens: int64(st.PrefillTokens), PrefillRequests: int32(st.PrefillRequests),
		DecodeRequests: int32(st.DecodeRequests), Running: int32(st.Running), Waiting: int32(st.Waiting),
		KVBlocksUsed: int64(st.KVBlocksUsed), KVBlocksCached: int64(st.KVBlocksCached),
	})
}

// passEnd applies a finished pass. Without detokenization the client receives
// its outputs at once; with it, they become one job of the worker's output
// processor and reach the client when the job completes.
func (m *sim) passEnd(w int) {
	m.busy[w] = false
	m.load.passEnded(m.now)
	outs, steady := m.workers[w].FinishPass()
	measured := steady - m.workers[w].SteadyUnmeasured()
	if m.dep.disagg {
		if m.poolOf[w].name == "prefill" {
			m.prefillDone(outs)
			return
		}
		m.retryHandoffs(w)
	}
	if !m.path.Detokenize {
		for _, o := range outs {
			m.receive(o.Req.ID, o.Kind)
		}
		m.steadyTokens(w, steady, measured, len(outs) > 0)
		return
	}
	if len(outs) == 0 && steady == 0 {
		return
	}
	tokens := steady
	for i := range outs {
		if outs[i].Kind == engine.OutToken {
			tokens++
		}
	}
	m.outQ[w].push(outs, steady, measured)
	m.at(m.loops[w].Submit(&m.path, m.now, tokens), phaseClientReceive, evReceive, int32(w), 0)
}

// receive: the client receives one output of request id at m.now.
func (m *sim) receive(id int64, kind int) {
	idx, f := m.flightOf(id)
	if f == nil {
		return // canceled after the pass emitted it
	}
	switch kind {
	case engine.OutToken:
		m.token(idx)
	case engine.OutFinished:
		m.end(idx, report.StatusCompleted)
	}
}

// steadyTokens: the client receives, at m.now, one token for each of the
// steady requests of worker w's pass (engine.Worker.FinishPass). Each one's
// previous token came with the worker's previous outputs (it decoded in the
// previous pass, implicitly or not), so all of them waited the same gap; the
// pass's outputs become the worker's latest. measured of the steady requests
// are not warm-up requests: only their gaps are pooled, as token pools the
// gaps of explicit outputs. explicit says the pass had other outputs.
func (m *sim) steadyTokens(w, steady, measured int, explicit bool) {
	if measured > 0 {
		m.acc.AddGaps(m.now-m.recvNs[w], measured)
	}
	if steady > 0 || explicit {
		m.recvNs[w] = m.now
	}
}

// sync: request id's implicit decoding ended (engine.Sync); the client has
// received its tokens implicitly, the last one at atNs.
func (m *sim) sync(id int64, tokens int, atNs int64) {
	_, f := m.flightOf(id)
	if f == nil {
		return
	}
	if m.chunks != nil {
		panic("replay: tokens received implicitly while chunk times are recorded (per-token decoding)")
	}
	f.received += tokens
	f.lastNs = atNs
}

// token records that the client received one output token at m.now.
func (m *sim) token(idx int32) {
	f := m.flights[idx]
	f.received++
	if m.chunks != nil && !f.warmup {
		// the tokens received at one instant are one chunk (one streamed message)
		if n := len(f.chunkNs); n == 0 || f.chunkNs[n-1] != m.now {
			f.chunkNs = append(f.chunkNs, m.now)
		}
	}
	if f.received == 2 {
		m.rec(f.rec).SecondTokenNs = m.now
	}
	if f.lastNs == report.NoTime {
		m.rec(f.rec).FirstTokenNs = m.now
		if m.watch != nil && !f.warmup {
			m.watched(m.watch.FirstToken(f.rec-m.tr.warmSent, m.rec(f.rec)))
		}
		if m.kvRouting {
			if p := m.pools[len(m.pools)-1]; p.kv != nil { // the pool that produces tokens
				p.kv.prefillDone(&f.routed[len(m.pools)-1])
			}
		}
	} else if mayCancel(m.path, m.tr) { // the request may yet be canceled: pool at completion
		f.gaps = append(f.gaps, m.now-f.lastNs)
	} else if !f.warmup {
		m.acc.AddGap(m.now - f.lastNs)
	}
	f.lastNs = m.now
}

// end records that the client received the end of the response at m.now and
// schedules the client's action on it.
func (m *sim) end(idx int32, status string) {
	f := m.flights[idx]
	rec := m.rec(f.rec)
	f.ended = true
	m.ended++
	rec.Status, rec.EndNs = status, m.now
	if m.kvRouting {
		for i, p := range m.pools {
			if p.kv != nil {
				p.kv.free(&f.routed[i], f.eng.Hashes)
			}
		}
	}
	rec.OutputTokens = f.received
	rec.CachedTokens = f.eng.CachedTokens
	rec.Preemptions = f.eng.Preemptions
	if f.dec != nil {
		rec.Preemptions += f.dec.Preemptions
	}
	switch {
	case status == report.StatusCompleted && !f.warmup:
		for _, g := range f.gaps {
			m.acc.AddGap(g)
		}
	case f.lastNs != report.NoTime && !mayCancel(m.path, m.tr) && status != report.StatusCompleted:
		panic("replay: a request that received tokens ended " + status + "; its ITL gaps are pooled")
	}
	if !f.warmup {
		if m.chunks != nil {
			m.chunks.Add(f.rec, f.chunkNs)
		}
		m.acc.Add(rec)
		m.load.ended(rec.SendNs, m.now)
		if m.watch != nil {
			m.watched(m.watch.Ended(f.rec-m.tr.warmSent, rec))
		}
	}
	rel := m.path.SerialReleaseNs(m.now, m.tr.clientBusyNs, rec.OutputTokens, m.path.JitterNs(m.tr.jitter))
	m.tr.clientBusyNs = rel
	m.at(rel, phaseClientAction, evRelease, idx, 0)
}

// release: the client acts on the finished response. A session's next turn is
// sent after its delay; otherwise a closed-loop client sends its next request.
func (m *sim) release(idx int32) error {
	f := m.flights[idx]
	m.rec(f.rec).ReleaseNs = m.now
	if m.cols != nil {
		m.cols.final(f.rec, m.tr.warmSent)
		if m.cols.err != nil && m.halt == nil {
			m.halt = m.cols.err // the sink failed (a full disk): stop here
		}
	}
	slot, warm := f.slot, f.warmup
	f.gen++ // events and outputs still pending for this request are now stale
	m.free = append(m.free, idx)
	m.active--
	if f.req.SessionID >= 0 {
		var next workload.Request
		at, ok, err := m.tr.nextTurn(&f.req, &next, m.now, &m.path)
		if err != nil {
			return err
		}
		if ok && warm {
			return m.tr.warmupSessionErr(&f.req, &next)
		}
		if ok {
			unheard := 0
			if m.tr.grows { // the history holds what the client received, as a chat client appends the reply it got
				unheard = f.unheard + f.req.OutputTokens - f.received
				if next.InputTokens != math.MaxInt { // a saturated prompt stays longer than any max_model_len
					next.InputTokens -= unheard
				}
			}
			hist, histTokens := m.history(f, &next)
			nidx := m.newFlight(&next, slot) // may reuse f
			m.flights[nidx].unheard = unheard
			if m.tr.deltas {
				nf := m.flights[nidx]
				nf.pieces, nf.histTokens = append(nf.pieces, hist...), histTokens
			}
			m.at(at, phaseClientAction, evTurnSend, nidx, 0)
			return nil
		}
	}
	if warm {
		m.tr.warmActive--
	}
	if m.tr.mode == config.LoadStages {
		return m.stageReleased(slot)
	}
	if slot >= 0 {
		return m.slotNext(slot)
	}
	if m.tr.capN > 0 {
		return m.capReleased()
	}
	return nil
}

// slotNext sends closed-loop client slot's next request at m.now, if any.
// During a warm-up phase (traffic.load.warmup_requests) the slot sends the
// next warm-up request while any are left; after the last one it waits until
// every warm-up response has been acted on (AIPerf waits for all of them
// before profiling), and the client that acts on the last one starts the
// measured phase: every waiting client sends then, in client order.
func (m *sim) slotNext(slot int32) error {
	tr := m.tr
	warm := tr.inWarmup && tr.warmLeft > 0
	if tr.inWarmup && !warm {
		if tr.warmActive > 0 {
			tr.parked = append(tr.parked, slot)
			return nil
		}
		// the last warm-up response was acted on: every client starts (an
		// open loop's arrivals start, counted from now)
		slots := append(tr.parked, slot)
		tr.inWarmup, tr.parked, tr.warmEndNs = false, nil, m.now
		if m.benchClock {
			m.acc.SetWindowStart(m.now)
		}
		if tr.mode != config.LoadConcurrency {
			return m.prefetch()
		}
		slices.Sort(slots)
		for _, s := range slots {
			if err := m.slotNext(s); err != nil {
				return err
			}
		}
		return nil
	}
	var r workload.Request
	_, ok, err := tr.next(&r, m.now)
	if err != nil || !ok {
		return err
	}
	idx := m.newFlight(&r, slot)
	if warm {
		m.flights[idx].warmup = true
		tr.warmLeft--
		tr.warmActive++
		tr.warmSent++
	}
	m.send(idx)
	return nil
}

// checkEnd verifies INV-1 (every sent request reached one terminal status) and
// INV-2 (every KV block is back: free or cached).
func (m *sim) checkEnd() error {
	if m.active != 0 {
		return fmt.Errorf("replay: INV-1 broken: %d requests never finished (engine stalled)", m.active)
	}
	for i, w := range m.workers {
		c, total := w.Counters(), m.poolOf[i].cfg.NumBlocks
		if st := c.KV; st.Allocated+st.Reused != st.Released || c.KVFree != total {
			return fmt.Errorf("replay: INV-2 broken on worker %d: %+v, %d of %d blocks free", i, st, c.KVFree, total)
		}
	}
	return nil
}
