package pybind

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const stepSpec = `{"engine": {"model": "Qwen/Qwen3-32B", "system": "h100_sxm",
  "perf": {"source": "linear", "base_ms": 2, "per_prefill_token_ms": 0.01, "per_decode_seq_ms": 0.1},
  "scheduler": {"num_gpu_blocks": 1000, "max_model_len": 4096}},
  "traffic": {"source": {"type": "synthetic", "num_requests": 1, "isl": 1, "osl": 1},
  "load": {"mode": "concurrency", "concurrency": 1}}}`

// StepTime prices each pass with the spec's perf model: docs/design.md's
// worked example 1 (linear: 2 ms + 0.01 ms per prompt token + 0.1 ms per
// decode), pass 1 (a 512-token chunk: 7.12 ms) and pass 3 (a decode and a
// 100-token prompt: 2 + 0.10 + 1.00 = 3.10 ms); linear has no breakdown.
func TestStepTime(t *testing.T) {
	rq := `{"spec": ` + stepSpec + `, "passes": [[{"prefill": [[512, 0, 0]]}],
	  [{"prefill": [[100, 0, 1]], "decode": [1000]}]]}`
	var out struct {
		Step struct {
			Pool      string         `json:"pool"`
			PerfModel string         `json:"perf_model"`
			Limits    map[string]int `json:"limits"`
			Passes    []struct {
				TimeNs      int64          `json:"time_ns"`
				BreakdownNs map[string]any `json:"breakdown_ns"`
			} `json:"passes"`
		} `json:"step"`
	}
	require.NoError(t, json.Unmarshal([]byte(StepTime(rq)), &out))
	require.Len(t, out.Step.Passes, 2)
	assert.Equal(t, "aggregated", out.Step.Pool)
	assert.Equal(t, "linear", out.Step.PerfModel)
	assert.Equal(t, int64(7_120_000), out.Step.Passes[0].TimeNs)
	assert.Equal(t, int64(3_100_000), out.Step.Passes[1].TimeNs)
	assert.Nil(t, out.Step.Passes[0].BreakdownNs)
	// the pool's limits: the spec's max_model_len, and the batch limits MemoryPlan
	// gives for the same deployment
	var plan struct {
		Memory struct {
			Pools []map[string]any `json:"pools"`
		} `json:"memory"`
	}
	require.NoError(t, json.Unmarshal([]byte(MemoryPlan(stepSpec)), &plan))
	require.Len(t, plan.Memory.Pools, 1)
	pool := plan.Memory.Pools[0]
	assert.Equal(t, map[string]int{"max_model_len": 4096, "max_num_seqs": int(pool["max_num_seqs"].(float64)),
		"max_num_batched_tokens": int(pool["max_num_batched_tokens"].(float64))}, out.Step.Limits)
	assert.Positive(t, out.Step.Limits["max_num_seqs"])
}

// A bad batch or pool is a config error naming the field; an unknown
// request member is refused.
func TestStepTimeErrors(t *testing.T) {
	for rq, field := range map[string]string{
		`{"spec": ` + stepSpec + `, "passes": [[{"prefill": [[0, 0, 1]]}]]}`:          "passes[0][0].prefill[0].tokens",
		`{"spec": ` + stepSpec + `, "passes": [[{"decode": [1]}], [{}]]}`:             "passes[1][0]",
		`{"spec": ` + stepSpec + `, "passes": [[]]}`:                                  "passes[0]",
		`{"spec": ` + stepSpec + `, "pool": "decode", "passes": [[{"decode": [1]}]]}`: "pool",
	} {
		e := envelope(t, StepTime(rq))["error"]
		assert.Equal(t, "config", e["kind"], rq)
		assert.Equal(t, field, e["field"], rq)
	}
	e := envelope(t, StepTime(`{"spec": `+stepSpec+`, "batch": 1}`))["error"]
	assert.Contains(t, e["message"], "unknown field")
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"GEMMNs": "gemm_ns", "AllReduceNs": "all_reduce_ns",
		"ContextAttentionNs": "context_attention_ns", "DraftNs": "draft_ns"} {
		assert.Equal(t, want, snake(in))
	}
}

// MemoryPlan gives each pool's KV blocks; with num_gpu_blocks given there
// is no plan.
func TestMemoryPlan(t *testing.T) {
	e := envelope(t, MemoryPlan(stepSpec))["memory"]
	pools := e["pools"].([]any)
	require.Len(t, pools, 1)
	p := pools[0].(map[string]any)
	assert.Equal(t, 1000.0, p["num_gpu_blocks"])
	assert.Equal(t, 16000.0, p["kv_tokens"])
	assert.Nil(t, p["plan"])
}
