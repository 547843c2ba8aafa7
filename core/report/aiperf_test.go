package report

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Three requests as the core's columns: 0 completed (10 output tokens),
// 1 rejected, 2 a session turn canceled after its first token.
func aiperfTable() ([]byte, []TableColumn) {
	le := binary.LittleEndian
	var data []byte
	var cols []TableColumn
	i64 := func(name, null string, v ...int64) {
		cols = append(cols, TableColumn{Name: name, Dtype: "<i8", Offset: int64(len(data)), Null: null})
		for _, x := range v {
			data = le.AppendUint64(data, uint64(x))
		}
	}
	f64 := func(name string, v ...float64) {
		cols = append(cols, TableColumn{Name: name, Dtype: "<f8", Offset: int64(len(data)), Null: "nan"})
		for _, x := range v {
			data = le.AppendUint64(data, math.Float64bits(x))
		}
	}
	nan := math.NaN()
	i64("request_id", "", 0, 1, 2)
	i64("status", "negative", 0, 1, 2)
	cols[1].Labels = []string{"completed", "rejected", "canceled"}
	i64("reason", "negative", -1, 0, 1)
	cols[2].Labels = []string{"prompt longer than max_model_len", "request_timeout_ms"}
	i64("input_tokens", "", 1000, 50000, 300)
	i64("output_tokens", "", 10, 0, 1)
	f64("send_ms", 2.5, 3, 10)
	f64("end_ms", 102.5, 3, 60)
	f64("ttft_ms", 40, nan, 20)
	f64("ttst_ms", 5, nan, nan)
	f64("tpot_ms", 6.25, nan, nan)
	f64("e2e_ms", 100, 0, 50)
	i64("session_id", "negative", -1, -1, 4)
	i64("turn", "negative", -1, -1, 2)
	i64("session_num", "", 0, 1, 2)
	return data, cols
}

func TestWriteTableAIPerfRecords(t *testing.T) {
	data, cols := aiperfTable()
	var out bytes.Buffer
	require.NoError(t, WriteTable(&out, bytes.NewReader(data), 3, cols, 0, 3, FormatAIPerf))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 3)
	// Completed: e2e 100 ms = (102.5 − 2.5); tpot 6.25 ms = (100 − 40) / (10 − 1)
	// would be 6.67 — the column's own value is written, never recomputed;
	// per user 1000 / 6.25 = 160 tokens/s; prefill 1000 / 0.040 s = 25000 tokens/s.
	assert.Equal(t, `{"metadata": {"session_num": 0, "x_request_id": "0", "x_correlation_id": "request-0", "conversation_id": "request-0", "turn_index": 0, `+
		`"request_start_ns": 2500000, "request_ack_ns": null, "request_end_ns": 102500000, "worker_id": "aisimulate", "record_processor_id": "aisimulate", `+
		`"benchmark_phase": "profiling", "was_cancelled": false, "cancellation_time_ns": null}, "metrics": {`+
		`"input_sequence_length": {"value": 1000, "unit": "tokens"}, "time_to_first_token": {"value": 40.0, "unit": "ms"}, `+
		`"time_to_second_token": {"value": 5.0, "unit": "ms"}, "request_latency": {"value": 100.0, "unit": "ms"}, `+
		`"output_token_count": {"value": 10, "unit": "tokens"}, "output_sequence_length": {"value": 10, "unit": "tokens"}, `+
		`"inter_token_latency": {"value": 6.25, "unit": "ms"}, "output_token_throughput_per_user": {"value": 160.0, "unit": "tokens/sec/user"}, `+
		`"prefill_throughput_per_user": {"value": 25000.0, "unit": "tokens/sec/user"}}, "error": null}`, lines[0])
	assert.Equal(t, `{"metadata": {"session_num": 1, "x_request_id": "1", "x_correlation_id": "request-1", "conversation_id": "request-1", "turn_index": 0, `+
		`"request_start_ns": 3000000, "request_ack_ns": null, "request_end_ns": 3000000, "worker_id": "aisimulate", "record_processor_id": "aisimulate", `+
		`"benchmark_phase": "profiling", "was_cancelled": false, "cancellation_time_ns": null}, "metrics": {"error_isl": {"value": 50000, "unit": "tokens"}}, `+
		`"error": {"code": 400, "type": "RequestRejected", "message": "prompt longer than max_model_len"}}`, lines[1])
	// A session turn: session_num is the column's (the conversation's number),
	// the correlation id the session's.
	assert.Equal(t, `{"metadata": {"session_num": 2, "x_request_id": "2", "x_correlation_id": "session-4", "conversation_id": "session-4", "turn_index": 2, `+
		`"request_start_ns": 10000000, "request_ack_ns": null, "request_end_ns": 60000000, "worker_id": "aisimulate", "record_processor_id": "aisimulate", `+
		`"benchmark_phase": "profiling", "was_cancelled": true, "cancellation_time_ns": 60000000}, "metrics": {"error_isl": {"value": 300, "unit": "tokens"}}, `+
		`"error": {"code": 499, "type": "RequestCancellationError", "message": "request_timeout_ms"}}`, lines[2])
	for _, l := range lines {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &v), l)
	}
}

func TestWriteTableAIPerfNeedsItsColumns(t *testing.T) {
	data, cols := aiperfTable()
	var out bytes.Buffer
	err := WriteTable(&out, bytes.NewReader(data), 3, cols[:4], 0, 3, FormatAIPerf)
	assert.ErrorContains(t, err, "needs the column")
	err = WriteTable(&out, bytes.NewReader(data), 3, cols[:len(cols)-1], 0, 3, FormatAIPerf)
	assert.ErrorContains(t, err, "needs the column session_num")
	unlabelled := append([]TableColumn{}, cols...)
	unlabelled[1].Labels = nil
	assert.ErrorContains(t, WriteTable(&out, bytes.NewReader(data), 3, unlabelled, 0, 3, FormatAIPerf), "labelled")
}

// A trace that names its sessions by strings: the session_id column is
// labelled, and the record's correlation and conversation ids are the trace's
// own name after "session-" (JSON-escaped), session_num still the conversation's number.
func TestWriteTableAIPerfSessionNames(t *testing.T) {
	data, cols := aiperfTable()
	cols[len(cols)-3].Labels = []string{"a", "b", "c", "d", `conv "7"`}
	var out bytes.Buffer
	require.NoError(t, WriteTable(&out, bytes.NewReader(data), 3, cols, 2, 3, FormatAIPerf))
	assert.True(t, strings.HasPrefix(out.String(), `{"metadata": {"session_num": 2, "x_request_id": "2", `+
		`"x_correlation_id": "session-conv \"7\"", "conversation_id": "session-conv \"7\"", "turn_index": 2, `), out.String())
	// rows outside a session have their request id, in a name space of their
	// own: a session named "0" would be "session-0"
	out.Reset()
	require.NoError(t, WriteTable(&out, bytes.NewReader(data), 3, cols, 0, 1, FormatAIPerf))
	assert.Contains(t, out.String(), `"x_correlation_id": "request-0", "conversation_id": "request-0", `)
}

// A request of a synthetic dataset names its entry as its conversation
// (AIPerf's records carry the dataset conversation a re-sent prompt came
// from); its correlation id stays its own; rows without an entry (null) keep
// the request's or the session's.
func TestWriteTableAIPerfDatasetEntry(t *testing.T) {
	data, cols := aiperfTable()
	cols = append(cols, TableColumn{Name: "dataset_entry", Dtype: "<i8", Offset: int64(len(data)), Null: "negative"})
	for _, e := range []int64{3, -1, -1} {
		data = binary.LittleEndian.AppendUint64(data, uint64(e))
	}
	var out bytes.Buffer
	require.NoError(t, WriteTable(&out, bytes.NewReader(data), 3, cols, 0, 3, FormatAIPerf))
	lines := strings.Split(out.String(), "\n")
	assert.Contains(t, lines[0], `"x_correlation_id": "request-0", "conversation_id": "entry-3", `)
	assert.Contains(t, lines[1], `"x_correlation_id": "request-1", "conversation_id": "request-1", `)
	assert.Contains(t, lines[2], `"x_correlation_id": "session-4", "conversation_id": "session-4", `)
}

// With chunk times, a completed record of two or more chunks has AIPerf's
// inter_chunk_latency: its gaps in ms (ns × 1000 / 10⁹, AIPerf's display
// conversion), unit ms. Record 0 has chunks at 42.5, 44.6, 48.8 and 50.034567
// ms: gaps 2.1, 4.2 and 1.234567 ms; record 2 (canceled, one chunk) and
// record 1 (rejected) have none.
func TestWriteTableAIPerfInterChunkLatency(t *testing.T) {
	data, cols := aiperfTable()
	le := binary.LittleEndian
	for _, c := range []struct {
		name string
		v    []int64
	}{{"chunk_offset", []int64{1, 0, 0}}, {"chunk_count", []int64{4, 0, 1}}} {
		cols = append(cols, TableColumn{Name: c.name, Dtype: "<i8", Offset: int64(len(data))})
		for _, x := range c.v {
			data = le.AppendUint64(data, uint64(x))
		}
	}
	times := TimesColumn{Offset: int64(len(data)), N: 5}
	for _, ns := range []int64{30_000_000, 42_500_000, 44_600_000, 48_800_000, 50_034_567} {
		data = le.AppendUint64(data, uint64(ns))
	}
	var out bytes.Buffer
	require.NoError(t, WriteTableRowsWith(&out, bytes.NewReader(data), 3, cols, 0, 3, FormatAIPerf, false, &times))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 3)
	assert.Contains(t, lines[0], `"inter_chunk_latency": {"value": [2.1, 4.2, 1.234567], "unit": "ms"}`)
	assert.NotContains(t, lines[1], "inter_chunk_latency")
	assert.NotContains(t, lines[2], "inter_chunk_latency")
	var rec struct {
		Metrics map[string]struct {
			Value any    `json:"value"`
			Unit  string `json:"unit"`
		} `json:"metrics"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &rec))
	assert.Equal(t, []any{2.1, 4.2, 1.234567}, rec.Metrics["inter_chunk_latency"].Value)

	// chunk times need their columns, and spans inside the times given
	require.Error(t, WriteTableRowsWith(&out, bytes.NewReader(data), 3, cols[:len(cols)-2], 0, 3, FormatAIPerf, false, &times))
	short := TimesColumn{Offset: times.Offset, N: 3}
	err := WriteTableRowsWith(&out, bytes.NewReader(data), 3, cols, 0, 3, FormatAIPerf, false, &short)
	assert.ErrorContains(t, err, "chunk times [1, 5) outside the 3 given")
}
