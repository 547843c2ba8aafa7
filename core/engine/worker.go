package engine

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/perf"
)

// Config is what one worker needs besides its perf model.
type Config struct {
	MaxNumSeqs          int
	MaxNumBatchedTokens int
	BlockSize           int  // tokens per KV block
	NumBlocks           int  // KV capacity of the worker, in blocks
	MaxModelLen         int  // prompt + output tokens a request may have
	PrefixCaching       bool // reuse cached full prompt blocks
}

// Request is the engine's view of one request. The replay fills the first four
// fields; the worker owns the rest while the request is on it.
type Request struct {
	ID     int64    // the replay's request id, echoed in outputs
	Prompt int      // prompt tokens
	Output int      // output tokens to produce (0: prefill only)
	Hashes []uint64 // prefix-cache hash chain of the prompt's full blocks (nil: no reuse)

	// CachedTokens is the prefix-cache hit of the request's first admission.
	CachedTokens int
	// Preemptions counts how often the request was preempted and recomputed.
	Preemptions int
	// Generated counts output tokens produced so far.
	Generated int

	computed   int     // tokens whose KV is in the cache
	scheduled  int     // tokens computed in the current pass
	admitted   bool    // first admission done (CachedTokens set)
	registered int     // leading full blocks already offered to the prefix cache
	blocks     []int32 // KV blocks held, in token order
}

// tokens is the number of tokens the request has: its prompt and every output
// token produced so far (the last one is not yet in the KV cache).
func (r *Request) tokens() int { return r.Prompt + r.Generated }

// Output kinds of a pass.
const (
	// OutToken: the request produced one output token at the pass end.
	OutToken = iota
	// OutFinished: the request finished (after its last token, or after its
	// prefill when it has no output); its KV blocks are released.
	OutFinished
)

// Out is one event of a finished pass.
type Out struct {
	Req  *Request
	Kind int
}

// Worker is one serving engine instance (TP GPUs acting as one).
type Worker struct {
	cfg  Config
	perf perf.Model
	kv   *kvManager

	waiting deque
	running []*Request

	busy  bool
	batch perf.Batch
	outs  []Out

	// BusyNs is the total time the worker spent in passes.
	BusyNs int64
	// Passes counts the passes run.
	Passes int64
}

// NewWorker returns an idle worker with an empty KV cache.
func NewWorker(cfg Config, pm perf.Model) (*Worker, error) {
	switch {
	case cfg.MaxNumSeqs < 1, cfg.MaxNumBatchedTokens < 1, cfg.BlockSize < 1, cfg.NumBlocks < 1, cfg.MaxModelLen < 1:
		return nil, fmt.Errorf("engine: invalid config %+v", cfg)
	case pm == nil:
		return nil, fmt.Errorf("engine: no perf model")
	}
	return &Worker{cfg: cfg, perf: pm, kv: newKVManager(cfg.NumBlocks, cfg.PrefixCaching)}, nil
}

// blocksFor is the number of KV blocks that hold n tokens.
func (w *Worker) blocksFor(n int) int { return (n + w.cfg.BlockSize - 1) / w.cfg.BlockSize }

// CheckFits returns why the request can never run on this worker, or "" if it can:
// prompt + output longer than max_model_len, or more KV blocks than the whole cache.
func (w *Worker) CheckFits(prompt, output int) string {
	if prompt+output > w.cfg.MaxModelLen {
		return fmt.Sprintf("prompt (%d) + output (%d) tokens exceed max_model_len (%d)", prompt, output, w.cfg.MaxModelLen)
	}
	// The last output token is sampled, never written to the cache.
	need := w.blocksFor(prompt + max(output-1, 0))
	if need > w.cfg.NumBlocks {
		return fmt.Sprintf("needs %d KV blocks, more than the whole cache (%d blocks of %d tokens)", need, w.cfg.NumBlocks, w.cfg.BlockSize)
	}
	return ""
}

// Add queues a request that arrived at the worker. The caller has checked it
// with CheckFits.
func (w *Worker) Add(r *Request) { w.waiting.PushBack(r) }

// Busy reports whether a pass is running.
func (w *Worker) Busy() bool { return w.busy }

// HasWork reports whether a request is waiting or running.
func (w *Worker) HasWork() bool { return len(w.running) > 0 || w.waiting.Len() > 0 }

// Outstanding is the number of requests on the worker (waiting or running).
func (w *Worker) Outstanding() int { return len(w.running) + w.waiting.Len() }

// KVStats returns the block manager's counters.
func (w *Worker) KVStats() KVStats { return w.kv.stats }

// KVFree is the number of unreferenced blocks (free or cached).
func (w *Worker) KVFree() int { return w.kv.available() }

// KVCached is the number of unreferenced blocks still holding cached content.
func (w *Worker) KVCached() int { return w.kv.lruLen }

// StartPass forms a pass at its start and returns its duration in ns (≥ 1).
// ok is false when there is nothing to run. The worker must be idle.
func (w *Worker) StartPass() (durNs int64, ok bool) {
	if w.busy {
		panic("engine: StartPass on a busy worker")
	}
	if !w.schedule() {
		return 0, false
	}
	d := w.perf.PassTime(&w.batch)
	if d < 1 {
		panic(fmt.Sprintf("engine: perf model %s returned a pass time of %d ns", w.perf.Name(), d))
	}
	w.busy = true
	w.BusyNs += d
	w.Passes++
	return d, true
}

// FinishPass applies the running pass at its end: KV written, tokens sampled,
// finished requests released. It returns the pass's outputs in running order;
// the slice is reused by the next call.
func (w *Worker) FinishPass() []Out {
	if !w.busy {
		panic("engine: FinishPass on an idle worker")
	}
	w.busy = false
	w.outs = w.outs[:0]
	kept := w.running[:0]
	for _, r := range w.running {
		if r.scheduled == 0 {
			kept = append(kept, r)
			continue
		}
		r.computed += r.scheduled
		r.scheduled = 0
		w.registerFull(r)
		if r.computed < r.tokens() {
			kept = append(kept, r) // a partial prefill chunk
			continue
		}
		if r.Generated < r.Output {
			r.Generated++
			w.outs = append(w.outs, Out{Req: r, Kind: OutToken})
		}
		if r.Generated >= r.Output {
			w.kv.release(r.blocks)
			r.blocks = r.blocks[:0]
			w.outs = append(w.outs, Out{Req: r, Kind: OutFinished})
			continue
		}
		kept = append(kept, r)
	}
	clear(w.running[len(kept):])
	w.running = kept
	return w.outs
}

// registerFull offers each newly completed full prompt block to the prefix cache.
func (w *Worker) registerFull(r *Request) {
	if w.kv.cache == nil {
		return
	}
	full := min(r.computed/w.cfg.BlockSize, len(r.Hashes), len(r.blocks))
	for j := r.registered; j < full; j++ {
		w.kv.register(r.blocks[j], r.Hashes[j])
	}
	if full > r.registered {
		r.registered = full
	}
}
