package pybind

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/aisimulate/aisimulate/core/replay"
)

// A run is one replay that the caller can watch (Progress) and stop (Stop)
// from another thread while Replay runs it: Python creates it with NewRun,
// passes its id in Replay's options, polls Progress, calls Stop on Ctrl-C,
// and Forget when done. gopy releases the GIL during every call, so these
// calls run while Replay does.
type run struct {
	ctx    context.Context
	cancel context.CancelFunc
	// the last progress the loop reported (replay.WithProgress)
	sent, finished, expected, nowNs, stopNs atomic.Int64
	started, ended                          atomic.Bool
}

var (
	runsMu sync.Mutex
	runs   = map[string]*run{}
	nextID atomic.Int64
)

// NewRun registers a run and returns its id.
func NewRun() string {
	ctx, cancel := context.WithCancel(context.Background())
	id := strconv.FormatInt(nextID.Add(1), 10)
	runsMu.Lock()
	runs[id] = &run{ctx: ctx, cancel: cancel}
	runsMu.Unlock()
	return id
}

func lookupRun(id string) *run {
	runsMu.Lock()
	defer runsMu.Unlock()
	return runs[id]
}

// Stop asks run id to stop: its replay returns an "interrupted" error at the
// event loop's next look (every replay.checkEvery timestamps). Stopping a run
// that has not started makes it stop at once; an unknown id is ignored.
func Stop(id string) {
	if r := lookupRun(id); r != nil {
		r.cancel()
	}
}

// Forget drops run id (after its Replay returned, or instead of it).
func Forget(id string) {
	runsMu.Lock()
	r := runs[id]
	delete(runs, id)
	runsMu.Unlock()
	if r != nil {
		r.cancel()
	}
}

// Progress returns run id's last reported progress: {"progress": {"started",
// "ended", "sent", "finished", "expected", "now_ms", "stop_ms"}} (counts of
// requests; expected 0 when unknown; stop_ms 0 without stop.max_duration_s),
// or {"progress": null} for an unknown id.
func Progress(id string) string {
	r := lookupRun(id)
	if r == nil {
		return `{"progress":null}`
	}
	b, _ := json.Marshal(map[string]any{"progress": map[string]any{
		"started": r.started.Load(), "ended": r.ended.Load(),
		"sent": r.sent.Load(), "finished": r.finished.Load(), "expected": r.expected.Load(),
		"now_ms": float64(r.nowNs.Load()) / 1e6, "stop_ms": float64(r.stopNs.Load()) / 1e6,
	}})
	return string(b)
}

// options returns the replay options that report the replay's progress to r.
func (r *run) options() []replay.Option {
	return []replay.Option{replay.WithProgress(func(p replay.Progress) {
		r.sent.Store(p.Sent)
		r.finished.Store(p.Finished)
		r.expected.Store(p.Expected)
		r.nowNs.Store(p.NowNs)
		r.stopNs.Store(p.StopNs)
		r.started.Store(true)
	})}
}
