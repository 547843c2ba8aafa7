package aic

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNearestVersion(t *testing.T) {
	vs := func(ss ...string) []version {
		var out []version
		for _, s := range ss {
			v, err := parseVersion(s)
			require.NoError(t, err)
			out = append(out, v)
		}
		return out
	}
	tests := []struct {
		name, want string
		have       []string
		best       string
	}{
		// 0.12.0 is 2000 from 0.14.0, 7000 from 0.19.0, 12000 from 0.24.0
		{"silicon rows use the nearest", "0.12.0", []string{"0.14.0", "0.19.0", "0.24.0"}, "0.14.0"},
		{"exact", "0.24.0", []string{"0.14.0", "0.24.0"}, "0.24.0"},
		// 0.20.0 is 2000 from both 0.18.0 and 0.22.0: the newer wins
		{"tie goes to the newer", "0.20.0", []string{"0.18.0", "0.22.0"}, "0.22.0"},
		{"suffix ignored", "0.14.1.dev1+g", []string{"0.14.0", "0.19.0"}, "0.14.0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := vs(tc.want)[0]
			got, ok := nearestVersion(w, vs(tc.have...))
			require.True(t, ok)
			assert.Equal(t, tc.best, got.Raw)
		})
	}
	_, err := parseVersion("latest")
	assert.ErrorContains(t, err, `"latest"`)
	// a development build without a patch number (the kda tables' vLLM)
	dev, err := parseVersion("0.1.dev19262")
	require.NoError(t, err)
	assert.Equal(t, [3]int{0, 1, 0}, dev.Parts)
	_, err = parseVersion("0.1.x")
	assert.ErrorContains(t, err, "part 3 is not a number")
}

// TestLocateTraps runs the table resolution on the shared data: reuse.yaml
// redirects, the known-bad h200 0.19.0 context attention, nearest versions.
func TestLocateTraps(t *testing.T) {
	db := sharedDB(t)
	t.Run("h100 0.22.0 holds only reuse.yaml: GEMMs read from 0.24.0", func(t *testing.T) {
		dir, err := systemDir(db, "h100_sxm")
		require.NoError(t, err)
		src, err := locate(dir, "h100_sxm", "vllm", "0.22.0", TableGEMM)
		require.NoError(t, err)
		assert.Equal(t, "0.22.0", src.Version)
		assert.Equal(t, "0.24.0", src.ReadFrom)
		assert.Contains(t, src.Note, "reuse.yaml")
	})
	t.Run("h200 0.19.0 context attention is skipped", func(t *testing.T) {
		dir, err := systemDir(db, "h200_sxm")
		require.NoError(t, err)
		src, err := locate(dir, "h200_sxm", "vllm", "0.19.0", TableContextAttention)
		require.NoError(t, err)
		// 0.18.0 is 1000 away; 0.22.0 (→ 0.24.0 by reuse) is 3000 away
		assert.Equal(t, "0.18.0", src.Version)
		assert.Contains(t, src.Note, "known trap")
		gen, err := locate(dir, "h200_sxm", "vllm", "0.19.0", TableGenerationAttention)
		require.NoError(t, err)
		assert.Equal(t, "0.19.0", gen.Version, "only the context table is bad")
	})
	t.Run("0.12.0 falls back to 0.14.0 and says so", func(t *testing.T) {
		dir, err := systemDir(db, "h100_sxm")
		require.NoError(t, err)
		src, err := locate(dir, "h100_sxm", "vllm", "0.12.0", TableAllReduce)
		require.NoError(t, err)
		assert.Equal(t, "0.14.0", src.Version)
		assert.Contains(t, src.Note, "nearest 0.14.0")
	})
	t.Run("unknown system names the database", func(t *testing.T) {
		_, err := systemDir(db, "tpu_v9")
		assert.ErrorContains(t, err, "tpu_v9")
	})
}

// TestReuseRedirectWinsOverLocalFile builds a two-version database by hand.
func TestReuseRedirectWinsOverLocalFile(t *testing.T) {
	root := t.TempDir()
	fam := filepath.Join(root, "data", "toy", "gemm", "vllm")
	for _, v := range []string{"0.1.0", "0.2.0"} {
		require.NoError(t, os.MkdirAll(filepath.Join(fam, v), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(fam, v, "gemm_perf.parquet"), []byte("x"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(fam, "0.1.0", "reuse.yaml"),
		[]byte("reuse:\n- table: gemm_perf\n  from_version: 0.2.0\n"), 0o644))
	src, err := locate(filepath.Join(root, "data", "toy"), "toy", "vllm", "0.1.0", TableGEMM)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(fam, "0.2.0", "gemm_perf.parquet"), src.Path)
}

// A database without an engine's tables of a family (TensorRT-LLM's GEMMs on a
// system measured for vLLM only) is named with the engines it has and the
// ways on, not as the operating system's "open …: no such file or directory".
func TestMissingEngineTablesNameTheEnginesThere(t *testing.T) {
	root := t.TempDir()
	sys := filepath.Join(root, "data", "toy")
	require.NoError(t, os.MkdirAll(filepath.Join(sys, "gemm", "vllm", "0.1.0"), 0o755))
	_, err := locate(sys, "toy", "trtllm", "1.0.0", TableGEMM)
	require.Error(t, err)
	assert.Equal(t, "aic: the kernel tables of toy have no gemm tables of engine trtllm (only vllm's, in "+
		filepath.Join(sys, "gemm")+"): use engine.perf.source roofline, which needs no tables, "+
		"or a system whose tables have them", err.Error())
	_, err = locate(sys, "toy", "vllm", "0.1.0", TableContextAttention) // no attention folder at all
	assert.ErrorContains(t, err, "have no attention tables of engine vllm (none of any engine, in ")
}
