package replay

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"sync"
	"unsafe"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
	"github.com/aisimulate/aisimulate/core/workload"
)

// The memory of a replay grows with its workload: what is kept per request,
// per request in flight, per session turn read ahead and per KV block
// touched. Each part is priced from the size of the structure that holds it
// (unsafe.Sizeof, so the estimate follows the code):
//
//	base       the interpreter, numpy and the Go runtime: 64 MiB (a
//	           10-request replay through the Python API peaks at 46 MiB)
//	records    n × (its columns + the summary's samples): through the Python
//	           API the core encodes each record as columns once final
//	           (WithRecordColumns) and keeps the columns (145 bytes) and the
//	           summary's samples of it (samplesB); the columns go to a file
//	           and back to the system (debug.FreeOSMemory) before Python reads
//	           them, so the two copies are never resident together; plus up
//	           to two pages of whole Records waiting to be final. A Go Run
//	           keeps Records instead; a streamed run keeps only the samples
//	           and the pages.
//	in flight  F × (flight + 3 events + its KV block ids + its prefix hashes),
//	           F the closed loop's clients, else the ranks' running sets and
//	           an overloaded open loop's queue at its last arrival (queue.go)
//	held       later session turns read ahead to reach the next session's
//	           start × workload.Request
//	KV index   blocks touched × the engine's BytesPerBlock, per worker (at most
//	           its capacity)
//	dataset    entries × 20 bytes
//
// Nothing is charged for the collector's headroom (the extension runs with
// GOGC=200): what grows with the requests is allocated once (the columns'
// chunks, the samples sized up front when the count is known, the pages
// reused), so the heap holds little garbage. docs/benchmarks.md "Memory"
// lists the measured peaks the estimate is checked against
// (test_estimate_error_against_the_measured_peak in tests/test_memory.py
// states the error).
const (
	memBaseBytes   = 64 << 20
	datasetEntryB  = 20
	traceTokensReq = 8192 // tokens per trace request when the file is not read ahead (about a Mooncake row)
)

var (
	recordB  = int64(unsafe.Sizeof(report.Record{}))
	requestB = int64(unsafe.Sizeof(workload.Request{}))
	passB    = int64(unsafe.Sizeof(report.Pass{}))
	colB     = int64(report.ColumnsBytes(1<<20) >> 20) // 145: the columns' widths, without the padding of one record
	// samplesB is what the summary keeps per completed request
	// (report.Accumulator: TTFT, TPOT, TTST, E2E as float64 and the input
	// and output tokens as int32) and the float64 its Close makes of one
	// sample at a time.
	samplesB = int64(4*8 + 2*4 + 8)
)

// flightBytes is the memory of one flight of deployment d: itself, its
// engine requests (the family's own request type, which embeds
// engine.Request; two with P/D) and three events.
func flightBytes(d *deployment) int64 {
	req := int64(reflect.TypeOf(d.family.NewRequest().Impl()).Elem().Size())
	if d.disagg {
		req *= 2
	}
	return int64(unsafe.Sizeof(flight{})) + req + 3*int64(unsafe.Sizeof(event{}))
}

// MemoryEstimate is a replay's expected peak memory, bytes, by part.
type MemoryEstimate struct {
	// Requests is the number of requests the estimate counts a record for:
	// the spec's count (num_requests, sessions × mean turns, a trace's lines),
	// capped by stop.max_requests and, at a rate, by the arrivals that fit
	// stop.max_duration_s. Exact is false when the count is only expected
	// (sessions' turns) or a lower bound (a closed loop stopped by duration:
	// the clients' first requests); the run is then also watched as it goes.
	Requests int64 `json:"requests"`
	Exact    bool  `json:"exact"`
	// InFlight is the number of requests in flight the estimate counts: the
	// closed loop's clients, else the ranks' running sets plus Queued.
	InFlight int64 `json:"in_flight"`
	// Queued is the part of InFlight that an overloaded open loop of
	// synthetic requests leaves waiting at its last arrival, n·(1 − μ/λ)
	// with μ ServiceRPS (queue.go); 0 otherwise. The up-front refusal does
	// not count it (an expectation: the run-time guard watches the queue).
	Queued int64 `json:"queued"`
	// ServiceRPS is μ, the requests per second the deployment is priced to
	// complete with a queue that is never empty (queue.go); 0 when not
	// priced (a closed loop, a trace or sessions).
	ServiceRPS float64 `json:"service_rps"`
	Base       int64   `json:"base_bytes"`
	Records    int64   `json:"records_bytes"`
	Flights    int64   `json:"in_flight_bytes"`
	Held       int64   `json:"held_turns_bytes"`
	KVIndex    int64   `json:"kv_index_bytes"`
	Dataset    int64   `json:"dataset_bytes"`
	Total      int64   `json:"total_bytes"`
	// Budget is execution.max_memory_gb in bytes, or the machine default
	// (half of its memory); BudgetSource says which.
	Budget       int64  `json:"budget_bytes"`
	BudgetSource string `json:"budget_source"`

	perRecord, perFlight int64 // for the run-time guard
	paged                bool  // records wait in pages of WithRecordColumns
}

// EstimateMemory validates s, builds its deployment and returns its memory
// estimate (nothing is simulated) for a Run with opts (WithRecordColumns
// changes what is held per request). Errors as Run's.
func EstimateMemory(s *config.Spec, opts ...Option) (*MemoryEstimate, error) {
	var o runOptions
	for _, opt := range opts {
		opt(&o)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	s = s.Clone() // buildDeployment fills the per-system defaults
	s.ExpandBenchmark()
	dep, err := buildDeployment(s, nil)
	if err != nil {
		return nil, err
	}
	return estimate(s, dep, recordsHeld(&o), o.chunks)
}

// How a replay holds its records, for its memory estimate.
type heldAs int

const (
	heldRecords  heldAs = iota // Report.Records (a Go caller's Run)
	heldColumns                // Report.Columns (WithRecordColumns: the Python API)
	heldStreamed               // streamed to a sink (WithRecordColumns with a sink)
)

// recordsHeld is how a run with options o holds its records.
func recordsHeld(o *runOptions) heldAs {
	switch {
	case !o.columns:
		return heldRecords
	case o.emit == nil:
		return heldColumns
	}
	return heldStreamed
}

// estimate prices a validated spec on its deployment; chunks: the run
// records chunk times (WithTokenGaps).
func estimate(s *config.Spec, dep *deployment, held heldAs, chunks bool) (*MemoryEstimate, error) {
	t := &s.Traffic
	e := &MemoryEstimate{Base: memBaseBytes, Exact: true}
	var n float64 // requests
	var tokens float64
	var turns float64 // mean turns per session (sessions source)
	var isl, osl float64
	warm, _, _ := t.Load.Warmup() // warm-up requests, sent besides a synthetic source's and max_requests' count
	switch src := t.Source.Type.(type) {
	case config.SyntheticSource:
		n = float64(src.NumRequests) + float64(warm)
		isl, osl = lengthMean(src.ISL), lengthMean(src.OSL)
		tokens = isl + osl
		if d := src.Dataset; d != nil {
			e.Dataset = int64(d.Entries) * datasetEntryB
		}
	case config.SessionsSource:
		turns = lengthMean(src.Turns)
		isl, osl = lengthMean(src.ISL), lengthMean(src.OSL)
		n = float64(src.NumSessions) * turns
		e.Exact = false // tokens: below, once n is known
	default: // a trace: at most one request per line
		lines, err := countLines(t.Source.TracePath())
		if err != nil {
			return nil, err
		}
		n, tokens = float64(lines), traceTokensReq
	}
	if m := t.Stop.MaxRequests; m > 0 && float64(m)+float64(warm) < n {
		n, e.Exact = float64(m)+float64(warm), true
	}
	if d := t.Stop.MaxDurationS; d > 0 {
		switch l := t.Load.Mode.(type) {
		case config.RateLoad:
			// Poisson arrivals in d s: mean λd, standard deviation √(λd); five of
			// them above the mean is exceeded with probability ~3e-7
			if lim := l.RateRPS*d + 5*math.Sqrt(l.RateRPS*d) + 16; lim < n {
				n = lim
			}
		case config.ConcurrencyLoad: // how many finish in d cannot be known before running
			if c := float64(l.Concurrency); c < n {
				n, e.Exact = c, false
			}
		}
	}
	e.Requests = sat(math.Ceil(n))

	// requests in flight: the clients of a closed loop, else every rank's
	// running set and an overloaded open loop's queue
	inflight := float64(0)
	closed, isClosed := t.Load.Mode.(config.ConcurrencyLoad)
	if isClosed {
		inflight = float64(closed.Concurrency)
	} else {
		for _, p := range dep.pools {
			inflight += float64(p.count*p.dp) * float64(p.cfg.MaxNumSeqs)
		}
	}
	inflight = math.Min(inflight, n)
	if rate, ok := t.Load.Mode.(config.RateLoad); ok {
		if src, ok := t.Source.Type.(config.SyntheticSource); ok {
			e.ServiceRPS = serviceRate(dep, steadyWorkload{isl: isl, osl: osl,
				cached: src.Dataset != nil && dep.pools[0].cfg.PrefixCaching})
			q := math.Min(queuedAtLastArrival(n, rate.RateRPS, e.ServiceRPS), n-inflight)
			if c := float64(rate.MaxConcurrency); c > 0 && rate.CappedArrival != config.CappedQueue { // the cap holds the rest at the client, unread (a queue holds them read)
				inflight = math.Min(inflight, c)
				q = math.Min(q, c-inflight)
			}
			e.Queued = sat(math.Floor(q))
			inflight += float64(e.Queued)
		}
	}
	e.InFlight = sat(math.Ceil(inflight))

	cfg := &dep.pools[0].cfg
	if _, ok := t.Source.Type.(config.SessionsSource); ok {
		// a turn's prompt is the conversation so far: on average half of a
		// session's, and a session sends at most n turns
		tokens = (math.Min(turns, n) + 1) / 2 * (isl + osl)
	}
	// a longer request is rejected before its blocks or hashes exist
	tokens = math.Min(tokens, float64(cfg.MaxModelLen))
	blocks := math.Ceil(tokens / float64(cfg.BlockSize)) // KV blocks of one request
	e.perFlight = flightBytes(dep) + int64(blocks)*4
	if cfg.PrefixCaching {
		e.perFlight += int64(blocks) * 16 // hashes and group keys
	}
	e.perRecord = samplesB
	pages := 0.0 // records waiting in the pages of the column mode
	switch held {
	case heldRecords:
		e.perRecord += recordB
	case heldColumns:
		e.perRecord += colB
		pages, e.paged = math.Min(n, 2*pageRows), true
	case heldStreamed:
		pages, e.paged = math.Min(n, 2*pageRows), true
	}
	if chunks {
		// a receive time per output token (a trace's lengths are not read
		// ahead: its request tokens stand for them) and a span per request
		out := osl
		if _, ok := t.Source.Type.(config.SyntheticSource); !ok && out == 0 {
			out = traceTokensReq
		}
		e.perRecord += int64(math.Ceil(out))*report.ChunkTimesBytes + report.ChunkSpanBytes
	}
	e.Records = sat(float64(e.Requests)*float64(e.perRecord) + pages*float64(recordB))
	e.Flights = sat(float64(e.InFlight) * float64(e.perFlight))
	if src, ok := t.Source.Type.(config.SessionsSource); ok && isClosed {
		// Sessions are generated one after another, each with all its turns:
		// to give each of its clients a session to start, the feed reads the
		// first min(clients, sessions) sessions whole and holds their later
		// turns, however few requests the run may send (max_requests); open
		// sessions keep about as many held while the loop runs.
		started := math.Min(float64(closed.Concurrency), float64(src.NumSessions))
		e.Held = sat(math.Max(started*(turns-1), 0) * float64(requestB))
	}
	for _, p := range dep.pools {
		perWorker := math.Min(float64(p.cfg.NumBlocks), math.Ceil(n/float64(p.count))*blocks)
		e.KVIndex = sat(float64(e.KVIndex) + float64(p.count)*perWorker*float64(dep.family.BytesPerBlock()))
		// a KV-aware router's index: the blocks its events say the workers
		// cache (kv_router), or every block of every prompt it placed
		// (prefix_affinity, which forgets nothing)
		switch p.placement {
		case config.PlacementKVRouter:
			e.KVIndex = sat(float64(e.KVIndex) + float64(p.count)*perWorker*float64(blockIndexBytes(p.count*p.dp)))
		case config.PlacementPrefixAffinity:
			e.KVIndex = sat(float64(e.KVIndex) + n*blocks*float64(blockIndexBytes(p.count)))
		}
	}
	e.Total = sat(float64(e.Base) + float64(e.Records) + float64(e.Flights) + float64(e.Held) + float64(e.KVIndex) + float64(e.Dataset))
	e.Budget, e.BudgetSource = MemoryBudget(s)
	return e, nil
}

// sat converts a count or byte total to int64, saturating at 2^62 (a spec
// of 2^62 sessions must be refused, not wrap).
func sat(x float64) int64 { return int64(math.Min(x, 1<<62)) }

// lengthMean is the mean of a length distribution (tokens or turns); a
// normal or lognormal's mean is clamped to its bounds.
func lengthMean(l config.Length) float64 {
	switch k := l.Kind.(type) {
	case config.FixedLength:
		return float64(k.Value)
	case config.UniformLength:
		return (float64(k.Min) + float64(k.Max)) / 2
	case config.NormalLength:
		return math.Min(math.Max(k.Mean, float64(k.Min)), float64(k.Max))
	case config.LognormalLength:
		return math.Min(math.Max(k.Mean, float64(k.Min)), float64(k.Max))
	}
	return 0
}

// countLines counts the line breaks of a trace file (plus a last line
// without one): an upper bound on its requests, read at memory speed.
func countLines(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("workload: open trace: %w", err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	var n int64
	last := byte('\n')
	for {
		k, err := f.Read(buf)
		if k > 0 {
			n += int64(bytes.Count(buf[:k], []byte{'\n'}))
			last = buf[k-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("workload: read %s: %w", path, err)
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// defaultBudgetUnknown is the budget when the machine's memory cannot be
// read (outside Linux): 8 GiB.
const defaultBudgetUnknown = 8 << 30

var machineBudget = sync.OnceValue(func() int64 {
	if m := machineMemory(); m > 0 {
		return m / 2
	}
	return defaultBudgetUnknown
})

// MemoryBudget is execution.max_memory_gb in bytes, else half of the
// machine's memory; the string says which, for messages (a replay's budget,
// and a search's: core/search).
func MemoryBudget(s *config.Spec) (int64, string) {
	if g := s.Execution.MaxMemoryGB; g != nil {
		return int64(*g * 1e9), "execution.max_memory_gb"
	}
	return machineBudget(), "the default, half of this machine's memory"
}

// checkBudget refuses a replay whose estimate passes its budget, naming the
// largest part and what to change.
func (e *MemoryEstimate) checkBudget(s *config.Spec) error {
	queue := sat(float64(e.Queued) * float64(e.perFlight))
	if e.Total-queue <= e.Budget {
		return nil
	}
	if e.Queued > 0 { // refused for what it holds besides the queue
		c := *e
		c.InFlight, c.Flights, c.Total, c.Queued = e.InFlight-e.Queued, e.Flights-queue, e.Total-queue, 0
		return c.checkBudget(s)
	}
	what := fmt.Sprintf("%d request records: %s", e.Requests, gb(e.Records))
	change := "traffic.stop.max_requests or the source's size (num_requests, num_sessions, the trace)"
	switch max(e.Records, e.Flights, e.Held, e.KVIndex, e.Dataset) {
	case e.Flights:
		what = fmt.Sprintf("%d requests in flight: %s", e.InFlight, gb(e.Flights))
		change = "traffic.load.concurrency (or the workers' max_num_seqs)"
	case e.Held:
		what = fmt.Sprintf("the later turns of the sessions its %d clients start, read ahead since sessions are generated one after another: %s", e.InFlight, gb(e.Held))
		change = "traffic.source.turns or traffic.load.concurrency"
	case e.KVIndex:
		what = fmt.Sprintf("the prefix cache's block index: %s", gb(e.KVIndex))
		change = "engine.scheduler.num_gpu_blocks (or a larger block_size)"
	}
	return &config.Error{Field: "execution.max_memory_gb", Msg: fmt.Sprintf(
		"the replay needs about %s (%s), more than its budget of %s (%s): lower %s, or raise execution.max_memory_gb",
		gb(e.Total), what, gb(e.Budget), e.BudgetSource, change)}
}

// guardEvery is how many records (or flights) pass between two checks of a
// running replay's memory against its budget.
const guardEvery = 1 << 13

// guardMemory stops a running replay that has grown past its budget (a
// closed loop stopped by duration, sessions with more turns than their mean,
// an overloaded open loop's queue): it charges what the replay holds now as
// the estimate charges it. Called every guardEvery records and flights.
func (m *sim) guardMemory() {
	e := m.mem
	if e == nil || m.halt != nil {
		return
	}
	now := e.Base + e.KVIndex + e.Dataset + int64(m.sent())*e.perRecord +
		int64(len(m.flights))*e.perFlight + int64(m.tr.feed.Held())*requestB
	if m.tl != nil {
		now += int64(len(m.tl.Passes)) * passB
	}
	if e.paged {
		now += int64(min(m.sent(), 2*pageRows)) * recordB
	}
	if now <= e.Budget {
		return
	}
	m.halt = &config.Error{Field: "execution.max_memory_gb", Msg: fmt.Sprintf(
		"the replay passed its memory budget of %s (%s) after %d requests, %d of them in flight: it holds about %s; lower traffic.stop.max_requests or traffic.stop.max_duration_s, or raise execution.max_memory_gb",
		gb(e.Budget), e.BudgetSource, m.sent(), m.active, gb(now))}
}

// gb writes bytes as GB (1e9) for messages.
func gb(b int64) string { return fmt.Sprintf("%.3g GB", float64(b)/1e9) }
