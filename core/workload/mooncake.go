package workload

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
)

// MooncakeBlockTokens is the number of prompt tokens covered by one Mooncake
// hash id (kvcache-ai/Mooncake, FAST25-release/traces: "hash_ids" are ids of
// 512-token prompt blocks).
const MooncakeBlockTokens = 512

// OpenMooncake opens a Mooncake JSONL trace for streaming.
//
// Format: one JSON object per line with
//
//	timestamp      ms from the start of the trace, an integer or a float, ≥ 0,
//	               non-decreasing along the file
//	input_length   prompt tokens, an integer ≥ 1
//	output_length  output tokens, an integer ≥ 0 — required: a row without it is
//	               a DataError naming the file and line, never a silent zero
//	hash_ids       optional array of integer ids of MooncakeBlockTokens-token
//	               prompt blocks; missing, null or [] gives HashIDs nil
//
// Other keys are ignored. Blank lines (also "\r\n" endings) are skipped but
// counted for Request.Line; a UTF-8 byte-order mark at the start of the file
// is skipped. Timestamps are kept as given (not rebased to the
// first row) and converted to ns: integer ms exactly, fractional ms rounded to
// the nearest ns (exact for timestamps below 2^53 ns ≈ 104 days). Requests
// have SessionID -1 and Turn 0.
//
// Errors: OpenMooncake returns the os.Open error (wrapped); Next returns a
// *DataError for bad data (invalid JSON, a missing, null, non-numeric,
// non-integer, negative or out-of-range field, input_length < 1, a timestamp
// going backwards, a line over MaxLineBytes). The caller closes the returned Closer
// (the file).
func OpenMooncake(path string) (Source, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("workload: open Mooncake trace: %w", err)
	}
	return NewMooncakeSource(f, path), f, nil
}

// NewMooncakeSource streams Mooncake JSONL (see OpenMooncake) from r; name is
// used as DataError.File. It reads r lazily through a 64 KiB buffer and never
// closes it.
func NewMooncakeSource(r io.Reader, name string) Source {
	m := &mooncakeSource{}
	m.src = jsonlSource{jsonlLines: newJSONLLines(r, name), parse: m.parse}
	return &m.src
}

// mooncakeSource parses the rows of src.
type mooncakeSource struct {
	src jsonlSource
	id  int64 // ID of the next request

	havePrev bool
	prevNs   int64 // previous request's timestamp, ns
	prevLine int
}

// mooncakeRow holds the raw literals so that each field is checked on its own
// and its error names it.
type mooncakeRow struct {
	Timestamp    rawRef `json:"timestamp"`
	InputLength  rawRef `json:"input_length"`
	OutputLength rawRef `json:"output_length"`
	HashIDs      rawRef `json:"hash_ids"`
	SessionID    rawRef `json:"session_id"`
	Delay        rawRef `json:"delay"`
}

// rawRef is json.RawMessage without the copy: it points into the line being
// decoded, which encoding/json does not modify and which stays valid until
// parse returns (the row never outlives it). Saves one allocation per field.
type rawRef []byte

// UnmarshalJSON implements json.Unmarshaler.
func (r *rawRef) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

func (s *mooncakeSource) parse(line []byte) (Request, *DataError) {
	var row mooncakeRow
	if derr := s.src.decodeRow(line, &row); derr != nil {
		return Request{}, derr
	}
	ts, msg := parseMsLiteral(row.Timestamp)
	if msg != "" {
		return Request{}, s.src.fail("timestamp", msg)
	}
	in, msg := parseCountLiteral(row.InputLength, 1)
	if msg != "" {
		return Request{}, s.src.fail("input_length", msg)
	}
	out, msg := parseCountLiteral(row.OutputLength, 0)
	if msg != "" {
		return Request{}, s.src.fail("output_length", msg)
	}
	ids, msg := parseHashIDs(row.HashIDs)
	if msg != "" {
		return Request{}, s.src.fail("hash_ids", msg)
	}
	if s.havePrev && ts < s.prevNs {
		return Request{}, s.src.fail("timestamp", fmt.Sprintf("goes backwards: %s ms is before %s ms on line %d",
			formatMs(ts), formatMs(s.prevNs), s.prevLine))
	}
	session, delay, hasDelay := int64(-1), int64(0), false
	if len(row.SessionID) > 0 && string(row.SessionID) != "null" {
		n, msg := parseCountLiteral(row.SessionID, 0)
		if msg != "" {
			return Request{}, s.src.fail("session_id", msg)
		}
		session = int64(n)
	}
	if len(row.Delay) > 0 && string(row.Delay) != "null" {
		if delay, msg = parseMsLiteral(row.Delay); msg != "" {
			return Request{}, s.src.fail("delay", msg)
		}
		hasDelay = true
		if session < 0 {
			return Request{}, s.src.fail("delay", "a delay needs a session_id (it is the wait after the previous turn)")
		}
	}
	s.havePrev, s.prevNs, s.prevLine = true, ts, s.src.line
	req := Request{
		ID:           s.id,
		Timestamp:    ts,
		InputTokens:  in,
		OutputTokens: out,
		SessionID:    session,
		DelayNs:      delay,
		HasDelay:     hasDelay,
		Line:         s.src.line,
	}
	if ids != nil {
		req.HashIDs, req.HashBlockTokens = ids, MooncakeBlockTokens
	}
	s.id++
	return req, nil
}

// checkNumberLiteral reports why a raw JSON value is not a number literal,
// or "" when it is one.
func checkNumberLiteral(raw rawRef) string {
	switch {
	case len(raw) == 0:
		return "missing"
	case string(raw) == "null":
		return "missing (null)"
	case raw[0] == '"':
		return "must be a number, got string " + quoteShort(string(raw))
	case raw[0] != '-' && (raw[0] < '0' || raw[0] > '9'):
		return "must be a number, got " + quoteShort(string(raw))
	}
	return ""
}

// parseCountLiteral parses a JSON token count ≥ minValue (see parseCount).
func parseCountLiteral(raw rawRef, minValue int) (int, string) {
	if msg := checkNumberLiteral(raw); msg != "" {
		return 0, msg
	}
	return parseCount(string(raw), minValue)
}

// parseMsLiteral parses a JSON timestamp in ms (integer or float, ≥ 0) into
// ns: ns = ms × 10^6, exact for integer literals, math.Round for fractional
// ones. Values whose ns do not fit in int64 are out of range.
func parseMsLiteral(raw rawRef) (int64, string) {
	if msg := checkNumberLiteral(raw); msg != "" {
		return 0, msg
	}
	lit := string(raw)
	const nsPerMs = 1_000_000
	if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
		if n < 0 {
			return 0, "must be ≥ 0, got " + quoteShort(lit)
		}
		if n > math.MaxInt64/nsPerMs {
			return 0, "out of range: " + quoteShort(lit)
		}
		return n * nsPerMs, ""
	}
	v, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		// JSON already validated the literal, so only range errors remain.
		return 0, "out of range: " + quoteShort(lit)
	}
	if v < 0 {
		return 0, "must be ≥ 0, got " + quoteShort(lit)
	}
	ns := math.Round(v * nsPerMs)
	if ns >= math.MaxInt64 { // float64(MaxInt64) is 2^63, one past the top
		return 0, "out of range: " + quoteShort(lit)
	}
	return int64(ns), ""
}

// parseHashIDs parses an optional JSON array of int64 ids. Missing, null and
// [] give nil. raw is valid JSON (the row was validated by json.Unmarshal), so
// a small scanner suffices: it accepts integer literals separated by commas
// and rejects anything else (fractions, exponents, strings, nesting), which
// is much cheaper than a reflective decode of every id.
func parseHashIDs(raw rawRef) ([]int64, string) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, ""
	}
	const notInts = "must be an array of integers"
	if raw[0] != '[' {
		return nil, notInts + ", got " + quoteShort(string(raw))
	}
	ids := make([]int64, 0, bytes.Count(raw, []byte{','})+1)
	i := 1
	skip := func() {
		for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
			i++
		}
	}
	skip()
	if i < len(raw) && raw[i] == ']' {
		return nil, ""
	}
	for {
		skip()
		neg := i < len(raw) && raw[i] == '-'
		if neg {
			i++
		}
		// Accumulate the magnitude in uint64; int64 allows up to 2^63 − 1,
		// or 2^63 when negative.
		var mag uint64
		digits := 0
		for ; i < len(raw) && raw[i] >= '0' && raw[i] <= '9'; i++ {
			d := uint64(raw[i] - '0')
			if mag > (math.MaxUint64-d)/10 {
				return nil, notInts + " (id out of range)"
			}
			mag = mag*10 + d
			digits++
		}
		switch {
		case digits == 0:
			return nil, notInts
		case !neg && mag > math.MaxInt64, neg && mag > 1<<63:
			return nil, notInts + " (id out of range)"
		}
		v := int64(mag)
		if neg {
			v = -v // for mag = 2^63, int64(mag) is MinInt64 and −MinInt64 wraps to itself
		}
		ids = append(ids, v)
		skip()
		if i >= len(raw) {
			return nil, notInts
		}
		switch raw[i] {
		case ',':
			i++
		case ']':
			return ids, ""
		default: // '.', 'e', 'E' of a non-integer number
			return nil, notInts
		}
	}
}

// formatMs writes ns as an exact decimal number of ms ("1.5" for 1500000).
func formatMs(ns int64) string {
	s := strconv.FormatInt(ns/1_000_000, 10)
	frac := ns % 1_000_000
	if frac == 0 {
		return s
	}
	f := strconv.FormatInt(1_000_000+frac, 10)[1:] // zero-padded to 6 digits
	for f[len(f)-1] == '0' {
		f = f[:len(f)-1]
	}
	return s + "." + f
}
