package aic

import (
	"fmt"
	"os"
	"reflect"
	"sync"
)

// Rows as stored in the parquet files; only the columns the simulator uses.
// Latency is in ms in the files.
type gemmRow struct {
	Dtype   string  `parquet:"gemm_dtype,optional"`
	M       int64   `parquet:"m,optional"`
	N       int64   `parquet:"n,optional"`
	K       int64   `parquet:"k,optional"`
	Latency float64 `parquet:"latency,optional"`
}

type attnRow struct {
	Batch   int64   `parquet:"batch_size,optional"`
	ISL     int64   `parquet:"isl,optional"`
	Heads   int64   `parquet:"num_heads,optional"`
	KVHeads int64   `parquet:"num_key_value_heads,optional"`
	HeadDim int64   `parquet:"head_dim,optional"`
	KVDtype string  `parquet:"kv_cache_dtype,optional"`
	Step    int64   `parquet:"step,optional"`
	Window  int64   `parquet:"window_size,optional"`
	Latency float64 `parquet:"latency,optional"`
}

type allReduceRow struct {
	NumGPUs     int64  `parquet:"num_gpus,optional"`
	MessageSize int64  `parquet:"message_size,optional"`
	Backend     string `parquet:"backend,optional"`
	// Implementation names the kernel where there is no backend column
	// (TensorRT-LLM's tables: trtllm).
	Implementation string  `parquet:"implementation,optional"`
	Latency        float64 `parquet:"latency,optional"`
}

// gemmKey, attnKey and allReduceKey identify a measurement; a second row with
// the same key is a duplicate and is dropped (the first row wins; older
// versions carry rows tagged with two patch versions, and 0.24.0 measures
// some shapes with several kernels).
type gemmKey struct {
	dtype   string
	m, n, k int64
}

type attnKey struct {
	kvDtype                                      string
	batch, isl, heads, kvHeads, headDim, step, w int64
}

type allReduceKey struct{ gpus, size int64 }

// tableCache holds every parsed table of the process, keyed by the file's
// identity (path, size, modification time) and the row type. The tables are
// immutable once loaded, so sharing them between replays (and goroutines) is
// safe; a file is parsed once per process ("load tables once per process").
// A file that failed to load is not kept (a repaired file is read again), and
// a file replaced on disk has a new identity, so it is read again too. This is
// the package's only shared state.
var tableCache sync.Map // tableID → *cacheEntry

// tableID identifies one version of a table file read as one row type.
type tableID struct {
	path  string
	size  int64
	mtime int64 // ns
	rows  reflect.Type
}

type cacheEntry struct {
	once sync.Once
	rows any
	err  error
}

// loadRows reads and de-duplicates a table once per file version. T is one
// of the row types; key returns the key of a row and whether to keep the row
// at all (filters such as CUDA-graph all-reduce rows). Errors name the file:
// it is missing, corrupt (a panic inside the parquet reader is recovered
// into an error), or has no usable row.
func loadRows[T any, K comparable](path string, key func(*T) (K, bool)) ([]T, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("aic: reading %s: %w", path, err)
	}
	id := tableID{path: path, size: fi.Size(), mtime: fi.ModTime().UnixNano(), rows: reflect.TypeFor[T]()}
	e, _ := tableCache.LoadOrStore(id, &cacheEntry{})
	ce := e.(*cacheEntry)
	ce.once.Do(func() { ce.rows, ce.err = readRows(path, key) })
	if ce.err != nil {
		tableCache.CompareAndDelete(id, ce) // try again next time: the file may be repaired
		return nil, ce.err
	}
	return ce.rows.([]T), nil
}

// readRows parses the table at path and keeps the first row of each key.
// A corrupt file can make the parquet reader panic (an index out of range on
// a flipped length, about half of random byte flips); the panic is recovered
// into an error naming the file.
func readRows[T any, K comparable](path string, key func(*T) (K, bool)) (out []T, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("aic: reading %s: the file is corrupt (the parquet reader failed: %v)", path, r)
		}
	}()
	rows, err := readParquet[T](path)
	if err != nil {
		return nil, fmt.Errorf("aic: reading %s: %w", path, err)
	}
	seen := make(map[K]struct{}, len(rows))
	out = rows[:0]
	for i := range rows {
		k, keep := key(&rows[i])
		if !keep {
			continue
		}
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		out = append(out, rows[i])
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("aic: %s has no usable rows", path)
	}
	return out, nil
}

func validLatency(ms float64) bool { return ms > 0 && ms < 1e9 }

func loadGEMM(path string) ([]gemmRow, error) {
	return loadRows(path, func(r *gemmRow) (gemmKey, bool) {
		return gemmKey{r.Dtype, r.M, r.N, r.K}, r.M > 0 && r.N > 0 && r.K > 0 && validLatency(r.Latency)
	})
}

func loadAttention(path string) ([]attnRow, error) {
	return loadRows(path, func(r *attnRow) (attnKey, bool) {
		return attnKey{r.KVDtype, r.Batch, r.ISL, r.Heads, r.KVHeads, r.HeadDim, r.Step, r.Window},
			r.Batch > 0 && r.ISL > 0 && r.Heads > 0 && r.KVHeads > 0 && validLatency(r.Latency)
	})
}

// allReduceEagerRow is an allReduceRow read for its eager rows: a type of
// its own, so that the table cache (keyed by path and row type) keeps both
// selections of one file.
type allReduceEagerRow allReduceRow

// loadAllReduceEager returns vLLM's eager rows (backend vllm_eager), the
// all-reduce of a pass that runs without a CUDA graph (Model.arSeconds);
// none (no error) from a table without them (SGLang's, TensorRT-LLM's):
// every valid row is read, keyed by its backend too, and the eager ones
// picked after, since readRows refuses a file the key function keeps no row of.
func loadAllReduceEager(path string) ([]allReduceRow, error) {
	type key struct {
		backend           string
		gpus, messageSize int64
	}
	rows, err := loadRows(path, func(r *allReduceEagerRow) (key, bool) {
		return key{r.Backend, r.NumGPUs, r.MessageSize}, r.NumGPUs > 1 && r.MessageSize > 0 && validLatency(r.Latency)
	})
	if err != nil {
		return nil, err
	}
	var out []allReduceRow
	for i := range rows {
		if rows[i].Backend == "vllm_eager" {
			out = append(out, allReduceRow(rows[i]))
		}
	}
	return out, nil
}

// loadAllReduce keeps the CUDA-graph rows (backend vllm_graph, or
// sglang_graph in SGLang's tables): the engines serve decode passes from
// CUDA graphs; the eager rows carry ≈ 20 µs of launch cost. TensorRT-LLM's
// tables hold one kind of row, its own all-reduce kernel (implementation
// trtllm, no backend column); SGLang's 0.5.6.post2 files hold such rows too,
// and knownBad keeps them out (SGLang runs its own all-reduce).
func loadAllReduce(path string) ([]allReduceRow, error) {
	return loadRows(path, func(r *allReduceRow) (allReduceKey, bool) {
		kept := r.Backend == "vllm_graph" || r.Backend == "sglang_graph" || (r.Backend == "" && r.Implementation == "trtllm")
		return allReduceKey{r.NumGPUs, r.MessageSize},
			kept && r.NumGPUs > 1 && r.MessageSize > 0 && validLatency(r.Latency)
	})
}
