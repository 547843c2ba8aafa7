package aic

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/perf"
)

// The real all-reduce table of one version (4 KB: every flip is near the
// file's structure, and each read is quick), as bytes.
func realTable(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(sharedDB(t), "data", "h100_sxm", "comm", "vllm", "0.24.0", "custom_allreduce_perf.parquet"))
	require.NoError(t, err)
	return data
}

// A corrupted table is an error naming the file, never a panic: about half
// of random byte flips used to panic inside the parquet reader. The flips
// are seeded (one stream per variant), so a failure names its variant.
func TestCorruptTablesAreErrors(t *testing.T) {
	good := realTable(t)
	dir := t.TempDir()
	errs, oks := 0, 0
	for v := 0; v < 200; v++ {
		rng := rand.New(rand.NewPCG(19, uint64(v)))
		bad := append([]byte(nil), good...)
		for range 1 + rng.IntN(16) {
			bad[rng.IntN(len(bad))] ^= 1 << rng.IntN(8)
		}
		path := filepath.Join(dir, fmt.Sprintf("allreduce_%d.parquet", v))
		require.NoError(t, os.WriteFile(path, bad, 0o644))
		start := time.Now()
		rows, err := loadAllReduce(path)
		assert.Less(t, time.Since(start), 10*time.Second, "variant %d", v)
		if err != nil {
			errs++
			assert.True(t, strings.HasPrefix(err.Error(), "aic: "), "variant %d: %v", v, err)
			assert.Contains(t, err.Error(), path, "variant %d: the error names the file", v)
			continue
		}
		oks++
		assert.NotEmpty(t, rows) // a flip in a value can leave a readable table
	}
	t.Logf("%d corrupt variants: %d errors, %d read", errs+oks, errs, oks)
	assert.Positive(t, errs, "the flips must reach the reader's failure paths")
}

// A table that failed to load is read again once repaired, and a table
// replaced on disk is read again (the cache is keyed by path, size and
// modification time); the same file read as another row type is its own
// entry, not "loaded as another table type".
func TestTableCacheFollowsTheFile(t *testing.T) {
	good := realTable(t)
	path := filepath.Join(t.TempDir(), "custom_allreduce_perf.parquet")
	require.NoError(t, os.WriteFile(path, good[:len(good)/3], 0o644))
	_, err := loadAllReduce(path)
	require.Error(t, err)

	require.NoError(t, os.WriteFile(path, good, 0o644))
	rows, err := loadAllReduce(path)
	require.NoError(t, err, "the repaired file is read again")
	n := len(rows)
	assert.Positive(t, n)

	// replaced by a table with fewer rows: the new file is what is read
	require.NoError(t, os.WriteFile(path, []byte("not parquet"), 0o644))
	future := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(path, future, future))
	_, err = loadAllReduce(path)
	assert.ErrorContains(t, err, path, "a replaced file is never served from the cache")

	require.NoError(t, os.WriteFile(path, good, 0o644))
	_, err = loadGEMM(path) // the all-reduce file read as GEMM rows
	assert.NotContains(t, fmt.Sprint(err), "another table type")
	rows, err = loadAllReduce(path)
	require.NoError(t, err)
	assert.Len(t, rows, n)
}

// max_num_batched_tokens of 2^62 used to size five tabulated arrays of
// exabytes (a panic: len out of range); the table stops at
// MaxTabulatedTokens and a larger pass is priced on the fly.
func TestTabulationIsBounded(t *testing.T) {
	m, err := New(sharedModel(t, "Qwen/Qwen3-32B"), builtinSystem(t, "h100_sxm"),
		Options{Backend: "vllm", Database: sharedDB(t), Version: "0.24.0", TP: 2, MaxTokens: 1 << 62})
	require.NoError(t, err)
	assert.Len(t, m.gemmNs, MaxTabulatedTokens+1)
	huge := &perf.Batch{Prefill: []perf.Chunk{{NewTokens: 1<<20 + 1}}, Samplers: 1}
	assert.Greater(t, m.PassTime(huge), int64(1e9), "a 1M-token pass takes seconds, priced on the fly")
}
