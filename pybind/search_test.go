package pybind

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const searchQuestion = `"spec": {"engine": {"model": "meta-llama/Llama-3.1-8B-Instruct", "system": "h100_sxm"},
  "traffic": {"source": {"type": "synthetic", "num_requests": 50, "isl": 500, "osl": 20},
  "load": {"mode": "rate", "rate_rps": 5}}},
  "space": {"gpus": [1, 2], "modes": ["aggregated"], "max_num_seqs": [32], "max_num_batched_tokens": [1024],
  "weights": [""], "kv_cache": [""]},
  "slo": {"ttft_ms": 1000, "tpot_ms": 50, "percentile": 90}`

// SearchPlan lists the candidates (1×TP1, 2×TP1, 1×TP2 on up to 2 GPUs) and
// a candidate's spec; SearchRun appends each candidate's result to the
// journal in candidate order.
func TestSearchPlanAndRun(t *testing.T) {
	plan := envelope(t, SearchPlan(`{`+searchQuestion+`, "specs_of": [1]}`))["plan"]
	cands := plan["candidates"].([]any)
	var keys []string
	for _, c := range cands {
		keys = append(keys, c.(map[string]any)["key"].(string))
	}
	assert.Equal(t, []string{
		"aggregated 1×TP1 seqs=32 tokens=1024 weights=checkpoint kv=default",
		"aggregated 2×TP1 seqs=32 tokens=1024 weights=checkpoint kv=default",
		"aggregated 1×TP2 seqs=32 tokens=1024 weights=checkpoint kv=default",
	}, keys)
	spec := plan["specs"].(map[string]any)["1"].(map[string]any)
	assert.Equal(t, 2.0, spec["engine"].(map[string]any)["workers"].(map[string]any)["aggregated"].(map[string]any)["count"])
	assert.Equal(t, 50.0, plan["offer"].(map[string]any)["requests"])

	journal := filepath.Join(t.TempDir(), "j.jsonl")
	out := envelope(t, SearchRun(`{`+searchQuestion+`, "indices": [0, 2], "jobs": 2, "journal": "`+journal+`"}`))
	assert.Equal(t, 2.0, out["search"]["done"])
	data, err := os.ReadFile(journal)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, 2)
	for i, want := range []float64{0, 2} {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &r))
		assert.Equal(t, want, r["index"])
		assert.Equal(t, "simulated", r["fate"])
	}
	e := envelope(t, SearchRun(`{`+searchQuestion+`, "indices": [2, 0], "journal": "`+journal+`"}`))["error"]
	assert.Equal(t, "indices", e["field"])
	e = envelope(t, SearchPlan(`{`+strings.Replace(searchQuestion, `"ttft_ms": 1000`, `"ttft_ms": -1`, 1)+`}`))["error"]
	assert.Equal(t, "slo", e["field"])
}
