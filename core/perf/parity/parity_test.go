package parity

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"testing"

	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// paths returns the repository root, the golden file, the shared model
// configs and perf tables ("" when ../shared is absent).
func paths(t *testing.T) (golden, modelDir, db string) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	golden = filepath.Join(root, "tests", "goldens", "perf_parity.json")
	shared := filepath.Join(root, "..", "shared", "data", "aic")
	if _, err := os.Stat(filepath.Join(shared, "systems", "data")); err != nil {
		t.Skipf("shared data not found at %s: the goldens need the model configs and perf tables", shared)
	}
	return golden, filepath.Join(shared, "model_configs"), filepath.Join(shared, "systems")
}

// goldenFile is tests/goldens/perf_parity.json.
type goldenFile struct {
	Comment    string                      `json:"comment"`
	Models     map[string]string           `json:"perf_models"`
	PassTimeNs map[string]map[string]int64 `json:"pass_time_ns"` // point key → shape → ns
}

func compute(t *testing.T, modelDir, db string) goldenFile {
	g := goldenFile{
		Comment: "Pinned pass times (ns) of both perf sources; re-pin with `make goldens` and say why (tests/goldens/README.md).",
		Models:  map[string]string{}, PassTimeNs: map[string]map[string]int64{},
	}
	for _, p := range Points() {
		rl, m, err := Models(p, modelDir, db)
		require.NoError(t, err, "%+v", p)
		for _, src := range []perf.Model{rl, m} {
			key := p.Key(src.Name())
			g.Models[src.Name()[:len(src.Name())-3]] = src.Name()
			g.PassTimeNs[key] = map[string]int64{}
			for _, s := range Shapes(perf.DecodeWindows(src)) {
				b := s.Batch
				g.PassTimeNs[key][s.Name] = src.PassTime(&b)
			}
		}
	}
	return g
}

// TestParityGoldens fails on any drift of a pinned pass time (±1 ns for
// floating-point rounding across platforms). AISIMULATE_UPDATE_GOLDENS=1
// (`make goldens`) rewrites the file instead.
func TestParityGoldens(t *testing.T) {
	golden, modelDir, db := paths(t)
	got := compute(t, modelDir, db)
	if os.Getenv("AISIMULATE_UPDATE_GOLDENS") != "" {
		data, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(golden, append(data, '\n'), 0o644))
		t.Logf("rewrote %s", golden)
		return
	}
	data, err := os.ReadFile(golden)
	require.NoError(t, err, "missing goldens: run `make goldens`")
	var want goldenFile
	require.NoError(t, json.Unmarshal(data, &want))
	assert.Equal(t, want.Models, got.Models, "perf model versions changed: re-pin with `make goldens`")
	keys := make([]string, 0, len(want.PassTimeNs))
	for k := range want.PassTimeNs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	require.Len(t, got.PassTimeNs, len(want.PassTimeNs), "grid changed: re-pin with `make goldens`")
	for _, k := range keys {
		for shape, ns := range want.PassTimeNs[k] {
			g, ok := got.PassTimeNs[k][shape]
			require.True(t, ok, "%s %s missing", k, shape)
			assert.InDelta(t, ns, g, 1, "%s %s drifted: %d → %d ns", k, shape, ns, g)
		}
	}
}

// TestParityMonotone is the invariant paired with the goldens, on the same
// points and shapes: one more decode, or one more prompt token in the first
// chunk, never makes a pass shorter, and every pass lasts ≥ 1 ns.
func TestParityMonotone(t *testing.T) {
	_, modelDir, db := paths(t)
	for _, p := range Points() {
		rl, m, err := Models(p, modelDir, db)
		require.NoError(t, err)
		for _, src := range []perf.Model{rl, m} {
			windows := perf.DecodeWindows(src)
			for _, s := range Shapes(windows) {
				b := s.Batch
				base := src.PassTime(&b)
				assert.GreaterOrEqual(t, base, int64(1))
				more := b
				more.DecodeWindowSums = slices.Clone(b.DecodeWindowSums)
				more.AddDecodeWindows(1024, windows)
				more.Samplers++
				assert.GreaterOrEqual(t, src.PassTime(&more), base, "%s %s + decode", p.Key(src.Name()), s.Name)
				if len(b.Prefill) > 0 {
					longer := b
					longer.Prefill = append([]perf.Chunk(nil), b.Prefill...)
					longer.Prefill[0].NewTokens += 64
					assert.GreaterOrEqual(t, src.PassTime(&longer), base, "%s %s + prompt", p.Key(src.Name()), s.Name)
				}
			}
		}
	}
}
