package aic

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// FuzzTable: any bytes given as a perf table read as each row type to rows
// or to an error naming the file; never a panic (about half of random flips
// of a real table used to panic inside the parquet reader). The real 4 KB
// all-reduce table seeds it when the shared data is present (the corpus in
// the repository holds no parquet copy of it). Reading allocates at most
// 64 MB plus 1 KB per byte of the file: a corrupt length used to ask for
// gigabytes ("PAR1PAR1", 8 bytes, declared an 827 MB footer).
func FuzzTable(f *testing.F) {
	_, file, _, _ := runtime.Caller(0)
	real := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared", "data", "aic", "systems", "data", "h100_sxm", "comm", "vllm", "0.24.0", "custom_allreduce_perf.parquet")
	if data, err := os.ReadFile(real); err == nil {
		f.Add(data)
	}
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Add([]byte("PAR1PAR1"))                 // a footer length of 827 MB
	f.Add([]byte("PAR1\xff\xff\xff\xffPAR1")) // 4 GB
	dir := f.TempDir()
	n := 0
	f.Fuzz(func(t *testing.T, data []byte) {
		n++ // a fresh path each time: the cache keys a file by path, size and mtime
		path := filepath.Join(dir, fmt.Sprintf("t%d.parquet", n))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, load := range []func(string) error{
			func(p string) error { _, err := loadAllReduce(p); return err },
			func(p string) error { _, err := loadGEMM(p); return err },
			func(p string) error { _, err := loadAttention(p); return err },
		} {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := load(path)
			runtime.ReadMemStats(&after)
			if err != nil && !strings.Contains(err.Error(), path) {
				t.Fatalf("the error does not name the file: %v", err)
			}
			// what a file may make the reader allocate: its rows and decoded
			// columns within readParquet's bounds, and some fixed buffers
			if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(64<<20+1024*len(data)); got > limit {
				t.Fatalf("reading %d bytes allocated %d MB (limit %d MB)", len(data), got>>20, limit>>20)
			}
		}
	})
}
