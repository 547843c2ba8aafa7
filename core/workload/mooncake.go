package workload

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/aisimulate/aisimulate/core/config"
)

// MooncakeBlockTokens is the number of prompt tokens covered by one hash id
// of the Mooncake traces (kvcache-ai/Mooncake, FAST25-release/traces:
// "hash_ids" are ids of 512-token prompt blocks): the default of
// traffic.source.isl_block_size.
const MooncakeBlockTokens = config.DefaultISLBlockSize

// OpenMooncake opens a Mooncake JSONL trace for streaming.
//
// Format: one JSON object per line with
//
//	timestamp      ms, an integer or a float, ≥ 0, non-decreasing along the
//	               rows that have one; optional (AIPerf's mooncake_trace makes
//	               it optional too): a load that does not send by timestamp
//	               (rate, concurrency) needs none, and a later turn of a
//	               session is sent after the previous turn, so it may carry
//	               only a delay; the replay's trace mode asks for it on every
//	               row that starts something, and sends a later turn that has
//	               one at that time (or when the previous turn is done, if
//	               later)
//	input_length   prompt tokens, an integer ≥ 1
//	output_length  output tokens, an integer ≥ 1 (vLLM refuses max_tokens < 1)
//	               — required: a row without it is a DataError naming the
//	               file and line, never a silent zero
//	hash_ids       optional array of integer ids of blockTokens-token prompt
//	               blocks (MooncakeBlockTokens for OpenMooncake), at most
//	               ⌈input_length / blockTokens⌉; missing, null or [] gives
//	               HashIDs nil
//	session_id     optional: an integer ≥ 0, or a non-empty string (AIPerf
//	               writes strings); rows of one session are its turns in file
//	               order. One file uses one kind. Strings are numbered 0, 1, …
//	               in order of first appearance (Request.SessionID; SessionNames
//	               lists them).
//	delay          optional ms (≥ 0) between the previous turn's end and this
//	               turn's send; needs a session_id, and a later turn: on a
//	               session's first row only 0 is accepted (AIPerf sends a
//	               first turn at once, docs/traces.md)
//
// Other keys are ignored. Blank lines (also "\r\n" endings) are skipped but
// counted for Request.Line; a UTF-8 byte-order mark at the start of the file
// is skipped. Time origin: Request.Timestamp is the row's timestamp minus the
// first timestamp of the file (TimeOrigin), exact to the ns (integer and
// fixed-point literals are read exactly, so epoch milliseconds such as
// 1715299200000.25 rebase exactly), so a trace whose first row is at 60,000
// ms replays as the same rows at 0, as AIPerf's fixed schedule does. Requests
// have Turn 0.
//
// Errors: OpenMooncake returns the os.Open error (wrapped); Next returns a
// *DataError for bad data (invalid JSON, a missing, null, non-numeric,
// non-integer, negative or out-of-range field, input_length or output_length < 1, a timestamp
// going backwards or more than 292 years after the first, a line over
// MaxLineBytes, session ids of both kinds, a field given twice in a row). The caller closes the returned
// Closer (the file).
func OpenMooncake(path string) (Source, io.Closer, error) {
	return OpenMooncakeBlocks(path, MooncakeBlockTokens)
}

// OpenMooncakeBlocks is OpenMooncake with hash ids of blockTokens prompt
// tokens each (traffic.source.isl_block_size, AIPerf's --isl-block-size: 512
// for the Mooncake traces, 16 for Alibaba's Bailian traces). A blockTokens <
// 1 is an error (the file is not opened).
func OpenMooncakeBlocks(path string, blockTokens int) (Source, io.Closer, error) {
	if err := checkBlockTokens(blockTokens); err != nil {
		return nil, nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("workload: open Mooncake trace: %w", err)
	}
	return NewMooncakeSourceBlocks(f, path, blockTokens), f, nil
}

// NewMooncakeSource streams Mooncake JSONL (see OpenMooncake) from r; name is
// used as DataError.File. It reads r lazily through a 64 KiB buffer and never
// closes it. The Source is also a TimeOriginer and a SessionNamer.
func NewMooncakeSource(r io.Reader, name string) Source {
	return NewMooncakeSourceBlocks(r, name, MooncakeBlockTokens)
}

// NewMooncakeSourceBlocks is NewMooncakeSource with hash ids of blockTokens
// prompt tokens each; with blockTokens < 1 every Next returns the error
// OpenMooncakeBlocks would (nothing is read).
func NewMooncakeSourceBlocks(r io.Reader, name string, blockTokens int) Source {
	m := &mooncakeSource{blockTokens: blockTokens}
	m.src = jsonlSource{jsonlLines: newJSONLLines(r, name), parse: m.parse, err: checkBlockTokens(blockTokens)}
	return m
}

// checkBlockTokens: a hash id covers at least one token.
func checkBlockTokens(blockTokens int) error {
	if blockTokens < 1 {
		return fmt.Errorf("workload: a Mooncake hash id must cover ≥ 1 token (traffic.source.isl_block_size), got %d", blockTokens)
	}
	return nil
}

// mooncakeSource parses the rows of src.
type mooncakeSource struct {
	src         jsonlSource
	id          int64 // ID of the next request
	blockTokens int   // prompt tokens a hash id covers

	havePrev bool
	prev     msTime // the last timestamp read, as written
	prevLine int
	origin   msTime // the first timestamp of the file (valid when havePrev)
	originAt int    // its line

	// session ids: numbers, or strings numbered in order of first appearance
	idKind    byte // 0 none yet, 'n' numbers, 's' strings
	idKindAt  int  // line of the first session_id
	names     map[string]int64
	nameOrder []string
	started   map[int64]struct{} // sessions whose first turn has been read
}

// Next implements Source.
func (s *mooncakeSource) Next(r *Request) error { return s.src.Next(r) }

// TimeOrigin implements TimeOriginer: the first timestamp of the trace, in ms
// as written; ok is false until a row with a timestamp has been read.
func (s *mooncakeSource) TimeOrigin() (ms string, text string, ok bool) {
	if !s.havePrev {
		return "", "", false
	}
	o := s.origin.String()
	return o, o, true
}

// SessionNames implements SessionNamer: the string session ids in the order
// they were numbered (nil when the trace numbers its sessions itself).
func (s *mooncakeSource) SessionNames() []string { return s.nameOrder }

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

// mooncakeFormat: the keys of mooncakeRow, for readRow.
var mooncakeFormat = newRowFormat(mooncakeRow{}, "hash_ids")

// rawRef is a row's raw JSON value without a copy: it points into the line
// being read, which stays valid until parse returns (the row never outlives
// it).
type rawRef []byte

func (s *mooncakeSource) parse(line []byte) (Request, *DataError) {
	var raw jsonRow
	if derr := s.src.readRow(line, &mooncakeFormat, &raw); derr != nil {
		return Request{}, derr
	}
	v := &raw.vals
	row := mooncakeRow{v[0], v[1], v[2], v[3], v[4], v[5]}
	hasTs := present(row.Timestamp)
	var ts msTime
	if hasTs {
		var msg string
		if ts, msg = parseMsTime(row.Timestamp); msg != "" {
			return Request{}, s.src.fail("timestamp", msg)
		}
	}
	in, msg := parseCountLiteral(row.InputLength, 1)
	if msg != "" {
		return Request{}, s.src.fail("input_length", absentMsg(&mooncakeFormat, line, row.InputLength, msg))
	}
	out, msg := parseOutputLiteral(row.OutputLength)
	if msg != "" {
		return Request{}, s.src.fail("output_length", absentMsg(&mooncakeFormat, line, row.OutputLength, msg))
	}
	ids := raw.ids
	if msg := raw.idsMsg; msg != "" {
		return Request{}, s.src.fail("hash_ids", msg)
	}
	bt := s.blockTokens
	blocks := in / bt // ⌈in / bt⌉ without overflow near the int bound
	if in%bt != 0 {
		blocks++
	}
	if len(ids) > blocks {
		// AIPerf builds a row's prompt block by block from its ids and refuses one
		// whose last block would hold no token (PromptGenerator._generate_cached_prompt:
		// "final hash block size must be greater than 0"); the Mooncake traces have
		// exactly ⌈input_length / 512⌉ ids per row.
		return Request{}, s.src.fail("hash_ids", fmt.Sprintf("%d ids for input_length %d: %d-token blocks hold it in %d (⌈%d / %d⌉), so the last %d would hold no token "+
			"(traffic.source.isl_block_size gives the tokens per id)", len(ids), in, bt, blocks, in, bt, len(ids)-blocks))
	}
	var tsNs int64
	if hasTs {
		if !s.havePrev {
			s.havePrev, s.origin, s.prev, s.originAt = true, ts, ts, s.src.line
		}
		if ts.less(s.prev) {
			return Request{}, s.src.fail("timestamp", fmt.Sprintf("goes backwards: %s ms is before %s ms on line %d",
				ts, s.prev, s.prevLine))
		}
		var ok bool
		if tsNs, ok = ts.since(s.origin); !ok {
			return Request{}, s.src.fail("timestamp", fmt.Sprintf("%s ms is more than 292 years after the time origin (the first timestamp, %s ms on line %d)",
				ts, s.origin, s.originAt))
		}
		s.prev, s.prevLine = ts, s.src.line
	}
	session, msg := s.sessionID(row.SessionID)
	if msg != "" {
		return Request{}, s.src.fail("session_id", msg)
	}
	firstTurn := false
	if session >= 0 {
		if s.started == nil {
			s.started = map[int64]struct{}{}
		}
		if _, seen := s.started[session]; !seen {
			firstTurn = true
			s.started[session] = struct{}{}
		}
	}
	var delay int64
	hasDelay := present(row.Delay)
	if hasDelay {
		d, msg := parseMsTime(row.Delay)
		if msg != "" {
			return Request{}, s.src.fail("delay", msg)
		}
		var ok bool
		if delay, ok = d.since(msTime{}); !ok {
			return Request{}, s.src.fail("delay", "out of range: "+quoteShort(string(row.Delay)))
		}
		if session < 0 {
			return Request{}, s.src.fail("delay", "a delay needs a session_id (it is the wait after the previous turn)")
		}
		if firstTurn && delay != 0 {
			return Request{}, s.src.fail("delay", fmt.Sprintf("on the first turn of session %s: AIPerf sends a conversation's first turn "+
				"at once and waits the delay only before a later turn; give the first turn a timestamp (its send time) instead", row.SessionID))
		}
	}
	req := Request{
		ID:           s.id,
		Timestamp:    tsNs,
		HasTimestamp: hasTs,
		InputTokens:  in,
		OutputTokens: out,
		SessionID:    session,
		DelayNs:      delay,
		HasDelay:     hasDelay,
		Line:         s.src.line,
	}
	if ids != nil {
		req.HashIDs, req.HashBlockTokens = ids, s.blockTokens
	}
	s.id++
	return req, nil
}

// absentMsg is msg, or for a required key the row leaves out, format f's
// message naming the keys the row has instead (rowFormat.missing).
func absentMsg(f *rowFormat, line []byte, raw rawRef, msg string) string {
	if len(raw) == 0 {
		return f.missing(line)
	}
	return msg
}

// present reports whether an optional JSON field is given (not missing, not null).
func present(raw rawRef) bool { return len(raw) > 0 && string(raw) != "null" }

// sessionID reads an optional session_id: -1 when absent; an integer ≥ 0 as
// is; a non-empty string numbered in order of first appearance. One file
// uses one kind (a number and a string could otherwise name one session).
func (s *mooncakeSource) sessionID(raw rawRef) (int64, string) {
	if !present(raw) {
		return -1, ""
	}
	kind := byte('n')
	if raw[0] == '"' {
		kind = 's'
	}
	if s.idKind == 0 {
		s.idKind, s.idKindAt = kind, s.src.line
	} else if kind != s.idKind {
		what := map[byte]string{'n': "a number", 's': "a string"}
		return 0, fmt.Sprintf("%s, but line %d gave %s: use one kind of session id in a file",
			what[kind], s.idKindAt, what[s.idKind])
	}
	if kind == 'n' {
		n, msg := parseCountLiteral(raw, 0)
		return int64(n), msg
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		return 0, "invalid string: " + quoteShort(string(raw))
	}
	if name == "" {
		return 0, "empty string"
	}
	if n, ok := s.names[name]; ok {
		return n, ""
	}
	if s.names == nil {
		s.names = map[string]int64{}
	}
	n := int64(len(s.nameOrder))
	s.names[name] = n
	s.nameOrder = append(s.nameOrder, name)
	return n, ""
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
	if n, ok := smallDigits(raw); ok && n <= math.MaxInt && n >= int64(minValue) { // the common case
		return int(n), ""
	}
	if msg := checkNumberLiteral(raw); msg != "" {
		return 0, msg
	}
	return parseCount(string(raw), minValue)
}
