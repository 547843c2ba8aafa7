package workload

import (
	"fmt"
	"io"
	"os"
	"strconv"
)

// OpenLLMServingSim opens an LLMServingSim workload (JSONL) for streaming.
// These are the files casys-kaist/LLMServingSim replays through vLLM
// (workloads/*.jsonl, written by workloads/generators/sharegpt.py), with the
// exact prompt of every request as token ids.
//
// Format: one JSON object per line with
//
//	arrival_time_ns  ns, an integer ≥ 0, non-decreasing along the file;
//	                 Request.Timestamp counts from the first row's (the time
//	                 origin, TimeOrigin), as every trace reader does
//	input_toks       prompt tokens, an integer ≥ 1
//	output_toks      output tokens to generate, an integer ≥ 1 (required; vLLM
//	                 refuses max_tokens < 1)
//	input_tok_ids    the prompt's token ids, an array of input_toks integers
//
// Other keys (output_tok_ids: the dataset's reply, not what the engine
// generates) are ignored. Blank lines are skipped but counted for
// Request.Line; a UTF-8 byte-order mark at the start is skipped.
//
// The token ids become HashIDs with HashBlockTokens 1 (one id per token), so
// BlockHashes chains engine block j's hash over the ids of tokens
// [j·bs, (j+1)·bs) and every earlier block, as vLLM's prefix cache hashes a
// full block as hash(parent block hash, block token ids): two prompts share a
// cached block exactly when they share every token up to its end. Requests
// have SessionID -1.
//
// Errors: OpenLLMServingSim returns the os.Open error (wrapped); Next returns
// a *DataError for bad data (invalid JSON, a missing, null, non-integer,
// negative or out-of-range field, input_toks or output_toks < 1, input_tok_ids not an array
// of input_toks integers, an arrival going backwards, a field given twice in
// a row, a line over MaxLineBytes). The caller closes the returned Closer
// (the file).
func OpenLLMServingSim(path string) (Source, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("workload: open LLMServingSim workload: %w", err)
	}
	return NewLLMServingSimSource(f, path), f, nil
}

// NewLLMServingSimSource streams an LLMServingSim workload (see
// OpenLLMServingSim) from r; name is used as DataError.File. It never closes r.
func NewLLMServingSimSource(r io.Reader, name string) Source {
	m := &llmServingSimSource{}
	m.src = jsonlSource{jsonlLines: newJSONLLines(r, name), parse: m.parse}
	return m
}

// Next implements Source.
func (s *llmServingSimSource) Next(r *Request) error { return s.src.Next(r) }

// TimeOrigin implements TimeOriginer: the first row's arrival_time_ns, in ms;
// ok is false until a row has been read.
func (s *llmServingSimSource) TimeOrigin() (ms string, text string, ok bool) {
	if !s.havePrev {
		return "", "", false
	}
	o := msTime{ms: s.originNs / nsPerMs, ns: s.originNs % nsPerMs}.String()
	return o, strconv.FormatInt(s.originNs, 10) + " ns", true
}

// llmServingSimSource parses the rows of src.
type llmServingSimSource struct {
	src jsonlSource
	id  int64

	havePrev bool
	prevNs   int64
	prevLine int
	originNs int64 // the first row's arrival_time_ns
}

type llmServingSimRow struct {
	Arrival  rawRef `json:"arrival_time_ns"`
	Input    rawRef `json:"input_toks"`
	Output   rawRef `json:"output_toks"`
	InputIDs rawRef `json:"input_tok_ids"`
}

// llmServingSimFormat: the keys of llmServingSimRow, for readRow.
var llmServingSimFormat = newRowFormat(llmServingSimRow{}, "input_tok_ids")

func (s *llmServingSimSource) parse(line []byte) (Request, *DataError) {
	var raw jsonRow
	if derr := s.src.readRow(line, &llmServingSimFormat, &raw); derr != nil {
		return Request{}, derr
	}
	v := &raw.vals
	row := llmServingSimRow{v[0], v[1], v[2], v[3]}
	ts, msg := parseNsLiteral(row.Arrival)
	if msg != "" {
		return Request{}, s.src.fail("arrival_time_ns", absentMsg(&llmServingSimFormat, line, row.Arrival, msg))
	}
	in, msg := parseCountLiteral(row.Input, 1)
	if msg != "" {
		return Request{}, s.src.fail("input_toks", absentMsg(&llmServingSimFormat, line, row.Input, msg))
	}
	out, msg := parseOutputLiteral(row.Output)
	if msg != "" {
		return Request{}, s.src.fail("output_toks", absentMsg(&llmServingSimFormat, line, row.Output, msg))
	}
	if !present(row.InputIDs) {
		return Request{}, s.src.fail("input_tok_ids", "missing: the prompt's token ids are required")
	}
	ids := raw.ids
	if msg := raw.idsMsg; msg != "" {
		return Request{}, s.src.fail("input_tok_ids", msg)
	}
	if len(ids) != in {
		return Request{}, s.src.fail("input_tok_ids", fmt.Sprintf("holds %d ids, but input_toks is %d", len(ids), in))
	}
	if s.havePrev && ts < s.prevNs {
		return Request{}, s.src.fail("arrival_time_ns", fmt.Sprintf("goes backwards: %d ns is before %d ns on line %d",
			ts, s.prevNs, s.prevLine))
	}
	if !s.havePrev {
		s.originNs = ts
	}
	s.havePrev, s.prevNs, s.prevLine = true, ts, s.src.line
	req := Request{ID: s.id, Timestamp: ts - s.originNs, HasTimestamp: true, InputTokens: in, OutputTokens: out,
		HashIDs: ids, HashBlockTokens: 1, SessionID: -1, Line: s.src.line}
	s.id++
	return req, nil
}

// parseNsLiteral parses a JSON integer number of ns ≥ 0 that fits in int64.
func parseNsLiteral(raw rawRef) (int64, string) {
	if msg := checkNumberLiteral(raw); msg != "" {
		return 0, msg
	}
	lit := string(raw)
	n, err := strconv.ParseInt(lit, 10, 64)
	if err != nil {
		if _, ferr := strconv.ParseFloat(lit, 64); ferr == nil && !isRangeError(err) {
			return 0, "must be an integer number of ns, got " + quoteShort(lit)
		}
		return 0, "out of range: " + quoteShort(lit)
	}
	if n < 0 {
		return 0, "must be ≥ 0, got " + quoteShort(lit)
	}
	return n, ""
}
