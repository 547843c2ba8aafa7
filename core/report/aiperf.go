package report

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// FormatAIPerf writes one AIPerf per-request record per row, the lines of
// AIPerf's profile_export.jsonl (its MetricRecordInfo: "metadata", "metrics",
// "error"; field names and units from AIPerf's "Working with Profile Export
// Files" and metrics reference). The table must hold the columns request_id,
// status (labelled), input_tokens, output_tokens, send_ms, end_ms and
// session_num (the conversation's number: the caller numbers sessions and
// lone requests together, in order of first appearance, over the whole table,
// which this writer may only see a chunk of); reason, dataset_entry (a
// request's synthetic dataset entry, null outside a dataset: its
// conversation_id is "entry-N", as AIPerf's records name the dataset
// conversation a re-sent prompt came from), ttft_ms, ttst_ms, tpot_ms, e2e_ms, session_id and turn are used
// when present. docs/exports.md gives the mapping and what has no simulated
// counterpart.
const FormatAIPerf = "aiperf"

// aiperfCols holds the index in the table of each column an AIPerf record
// reads (-1: absent).
type aiperfCols struct {
	id, status, reason, in, out, send, end, ttft, ttst, tpot, e2e, session, turn, conv, entry int
	// chunkOff and chunkN: a row's chunk times in chunks (inter_chunk_latency),
	// when the table has them
	chunkOff, chunkN int
	chunks           *chunkReader
}

func newAIPerfCols(cols []TableColumn) (aiperfCols, error) {
	idx := map[string]int{}
	for i, c := range cols {
		idx[c.Name] = i
	}
	get := func(name string) int {
		if i, ok := idx[name]; ok {
			return i
		}
		return -1
	}
	a := aiperfCols{
		id: get("request_id"), status: get("status"), reason: get("reason"),
		in: get("input_tokens"), out: get("output_tokens"), send: get("send_ms"), end: get("end_ms"),
		ttft: get("ttft_ms"), ttst: get("ttst_ms"), tpot: get("tpot_ms"), e2e: get("e2e_ms"),
		session: get("session_id"), turn: get("turn"), conv: get("session_num"), entry: get("dataset_entry"),
		chunkOff: get("chunk_offset"), chunkN: get("chunk_count"),
	}
	for _, need := range []struct {
		name string
		i    int
	}{{"request_id", a.id}, {"status", a.status}, {"input_tokens", a.in}, {"output_tokens", a.out},
		{"send_ms", a.send}, {"end_ms", a.end}, {"session_num", a.conv}} {
		if need.i < 0 {
			return a, fmt.Errorf("the AIPerf format needs the column %s", need.name)
		}
	}
	if cols[a.status].Labels == nil {
		return a, fmt.Errorf("the AIPerf format needs status as a labelled column")
	}
	return a, nil
}

// aiperfRow reads row r of a block of column values (bufs[i]: column i,
// sizes[i] bytes a value).
type aiperfRow struct {
	cols  []TableColumn
	bufs  [][]byte
	sizes []int64
	r     int64
}

// cell is column i's bytes for the row.
func (r aiperfRow) cell(i int) []byte {
	return r.bufs[i][r.r*r.sizes[i] : (r.r+1)*r.sizes[i]]
}

// int reads an integer column; ok is false for a null or an absent column.
func (r aiperfRow) int(i int) (v int64, ok bool) {
	if i < 0 {
		return 0, false
	}
	c := &r.cols[i]
	b := r.cell(i)
	if c.Dtype == "<f8" {
		f := math.Float64frombits(binary.LittleEndian.Uint64(b))
		if math.IsNaN(f) {
			return 0, false
		}
		return int64(f), true
	}
	v = cellInt(c.Dtype, b)
	if c.Null == "negative" && v < 0 {
		return v, false
	}
	return v, true
}

// float reads a float column; ok is false for a null (NaN) or an absent column.
func (r aiperfRow) float(i int) (float64, bool) {
	if i < 0 {
		return 0, false
	}
	if r.cols[i].Dtype != "<f8" {
		v, ok := r.int(i)
		return float64(v), ok
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(r.cell(i)))
	return f, !math.IsNaN(f)
}

// label reads a labelled column's string ("" for a null or an absent column).
func (r aiperfRow) label(i int) string {
	v, ok := r.int(i)
	if !ok || r.cols[i].Labels == nil || v >= int64(len(r.cols[i].Labels)) {
		return ""
	}
	return r.cols[i].Labels[v]
}

// msToNs converts a virtual-clock time in ms to integer ns (the core's own
// unit, so the rounding only undoes the float ms).
func msToNs(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

// AIPerf error of a request that did not complete: an HTTP-like code and a
// type, by status (docs/exports.md).
var aiperfErrors = map[string]struct {
	code int
	typ  string
}{
	"rejected": {400, "RequestRejected"},          // vLLM answers 400 to a prompt it cannot take
	"failed":   {500, "RequestFailed"},            // the engine gave up on it
	"canceled": {499, "RequestCancellationError"}, // AIPerf's own code and type for a cancel
}

// metricStart writes `"name": {"value": ` (after a comma unless first).
func metricStart(b []byte, first *bool, name string) []byte {
	if !*first {
		b = append(b, ", "...)
	}
	*first = false
	b = append(b, '"')
	b = append(b, name...)
	return append(b, `": {"value": `...)
}

// metricEnd writes `, "unit": "unit"}`.
func metricEnd(b []byte, unit string) []byte {
	b = append(b, `, "unit": "`...)
	b = append(b, unit...)
	return append(b, `"}`...)
}

func appendMetric(b []byte, first *bool, name string, v float64, unit string) []byte {
	return metricEnd(AppendPyFloat(metricStart(b, first, name), v), unit)
}

func appendIntMetric(b []byte, first *bool, name string, v int64, unit string) []byte {
	return metricEnd(strconv.AppendInt(metricStart(b, first, name), v, 10), unit)
}

// appendAIPerfRecord writes one row as an AIPerf record (without the newline).
func appendAIPerfRecord(b []byte, a *aiperfCols, r aiperfRow) ([]byte, error) {
	id, _ := r.int(a.id)
	status := r.label(a.status)
	session, inSession := r.int(a.session)
	turn, _ := r.int(a.turn)
	send, _ := r.float(a.send)
	end, _ := r.float(a.end)
	in, _ := r.int(a.in)
	out, _ := r.int(a.out)

	// metadata: session_num numbers the conversations (a session, or a lone
	// request) once, as AIPerf does (its exporters key records by session_num
	// and turn_index). x_correlation_id / conversation_id live in two name
	// spaces that cannot meet: "session-" + the session id (or the trace's own
	// name for it, a labelled session_id column) and "request-" + the request
	// id of a lone request (a session "1" and lone request 1 shared "1").
	num, _ := r.int(a.conv)
	name := r.label(a.session)
	b = append(b, `{"metadata": {"session_num": `...)
	b = strconv.AppendInt(b, num, 10)
	b = append(b, `, "x_request_id": "`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, '"')
	corr := func(b []byte) []byte {
		switch {
		case name != "":
			return appendJSONString(b, "session-"+name)
		case inSession:
			b = append(b, `"session-`...)
			b = strconv.AppendInt(b, session, 10)
		default:
			b = append(b, `"request-`...)
			b = strconv.AppendInt(b, id, 10)
		}
		return append(b, '"')
	}
	b = append(b, `, "x_correlation_id": `...)
	b = corr(b)
	b = append(b, `, "conversation_id": `...)
	if entry, ok := r.int(a.entry); ok {
		b = append(b, `"entry-`...)
		b = strconv.AppendInt(b, entry, 10)
		b = append(b, '"')
	} else {
		b = corr(b)
	}
	b = append(b, `, "turn_index": `...)
	if !inSession {
		turn = 0
	}
	b = strconv.AppendInt(b, turn, 10)
	b = append(b, `, "request_start_ns": `...)
	b = strconv.AppendInt(b, msToNs(send), 10)
	b = append(b, `, "request_ack_ns": null, "request_end_ns": `...)
	b = strconv.AppendInt(b, msToNs(end), 10)
	b = append(b, `, "worker_id": "aisimulate", "record_processor_id": "aisimulate", "benchmark_phase": "profiling", "was_cancelled": `...)
	if status == "canceled" {
		b = append(b, `true, "cancellation_time_ns": `...)
		b = strconv.AppendInt(b, msToNs(end), 10)
	} else {
		b = append(b, `false, "cancellation_time_ns": null`...)
	}
	b = append(b, `}, "metrics": {`...)
	first := true
	if status != "completed" {
		b = appendIntMetric(b, &first, "error_isl", in, "tokens")
		e, ok := aiperfErrors[status]
		if !ok {
			e = aiperfErrors["failed"]
		}
		b = append(b, `}, "error": {"code": `...)
		b = strconv.AppendInt(b, int64(e.code), 10)
		b = append(b, `, "type": "`...)
		b = append(b, e.typ...)
		b = append(b, `", "message": `...)
		msg := r.label(a.reason)
		if msg == "" {
			msg = status
		}
		b = appendJSONString(b, msg)
		return append(b, "}}"...), nil
	}
	b = appendIntMetric(b, &first, "input_sequence_length", in, "tokens")
	ttft, hasTTFT := r.float(a.ttft)
	if hasTTFT {
		b = appendMetric(b, &first, "time_to_first_token", ttft, "ms")
	}
	if v, ok := r.float(a.ttst); ok {
		b = appendMetric(b, &first, "time_to_second_token", v, "ms")
	}
	e2e, ok := r.float(a.e2e)
	if !ok {
		e2e = end - send
	}
	b = appendMetric(b, &first, "request_latency", e2e, "ms")
	b = appendIntMetric(b, &first, "output_token_count", out, "tokens")
	b = appendIntMetric(b, &first, "output_sequence_length", out, "tokens")
	if tpot, ok := r.float(a.tpot); ok {
		b = appendMetric(b, &first, "inter_token_latency", tpot, "ms")
		if tpot > 0 {
			// AIPerf: 1 / inter_token_latency in seconds
			b = appendMetric(b, &first, "output_token_throughput_per_user", 1000/tpot, "tokens/sec/user")
		}
	}
	if a.chunks != nil {
		off, _ := r.int(a.chunkOff)
		n, _ := r.int(a.chunkN)
		if n >= 2 { // AIPerf: no value below two responses
			ns, err := a.chunks.times(off, n)
			if err != nil {
				return nil, fmt.Errorf("row %d: %w", id, err)
			}
			b = appendInterChunkLatency(b, &first, ns)
		}
	}
	if hasTTFT && ttft > 0 {
		// AIPerf: input_sequence_length / TTFT in seconds
		b = appendMetric(b, &first, "prefill_throughput_per_user", float64(in)/(ttft/1000), "tokens/sec/user")
	}
	return append(b, `}, "error": null}`...), nil
}
