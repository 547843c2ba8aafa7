package workload

import (
	"strconv"
	"strings"
)

// Request is one request of a workload, in source order.
//
// A Source fills every field on each successful Next; the HashIDs slice is
// freshly allocated per request (never shared with an earlier request), so a
// caller may keep it.
type Request struct {
	// ID is the 0-based index of the request in source order (blank lines and
	// headers are not counted).
	ID int64
	// Timestamp is the request's time in ns from the trace's time origin, its
	// first timestamp (trace sources, when HasTimestamp); 0 for generators.
	// Non-decreasing along the rows of a source that have one.
	Timestamp int64
	// HasTimestamp: the row gave a timestamp (always, for Azure; optional for
	// Mooncake rows); false for generators.
	HasTimestamp bool
	// InputTokens is the prompt length in tokens, ≥ 1.
	InputTokens int
	// OutputTokens is the number of tokens to generate, ≥ 0 (0 = prefill only).
	OutputTokens int
	// HashIDs are the prompt's prefix-block ids as given by the source: entry k
	// covers prompt tokens [k·HashBlockTokens, (k+1)·HashBlockTokens); equal
	// ids mean equal block content. nil = no prefix reuse possible.
	HashIDs []int64
	// HashBlockTokens is the number of tokens each HashIDs entry covers (a
	// Mooncake trace's isl_block_size, 512 by default); 0 when HashIDs is nil.
	HashBlockTokens int
	// SessionID is the session the request belongs to, or -1 when it is not
	// part of a session.
	SessionID int64
	// Turn is the 0-based turn within its session (0 outside sessions).
	Turn int
	// DelayNs is the authored wait between the previous turn's release by the
	// client and this turn's send (a trace row's "delay"), valid when HasDelay;
	// otherwise the load's inter_turn_delay_ms applies.
	DelayNs  int64
	HasDelay bool
	// LastTurn is true when the source knows this is its session's last turn
	// (generators); false when it cannot know (traces).
	LastTurn bool
	// ContentKey, when non-zero, says the prompt is a prefix of one token
	// stream identified by the key (a session's conversation: each turn's prompt
	// is the previous prompt, its output and new input). Prefix hashes then
	// cover the prompt and the output, so a later turn can reuse both.
	ContentKey uint64
	// Line is the 1-based source line the request came from (0 for
	// generators), for error messages.
	Line int
}

// TimeOriginer is implemented by trace sources, whose Request.Timestamp
// counts from the trace's first timestamp (its time origin).
type TimeOriginer interface {
	// TimeOrigin returns the first timestamp: in ms (Mooncake: as written;
	// Azure: since the Unix epoch, UTC) and as written in the file; ok is
	// false until a row with a timestamp has been read.
	TimeOrigin() (ms, text string, ok bool)
}

// SessionNamer is implemented by sources whose sessions are named by strings
// (numbered 0, 1, … in Request.SessionID in order of first appearance).
type SessionNamer interface {
	// SessionNames returns the names by number so far (nil when the source
	// numbers its sessions itself).
	SessionNames() []string
}

// Source yields requests in order. Next fills r and returns nil, or returns
// io.EOF after the last request (and on every later call). Any other error
// (a *DataError for bad data, a wrapped I/O error otherwise) is sticky: every
// later call returns it again. On error r is left unchanged.
//
// Streaming: a Source must not hold the whole trace in memory; memory use is
// bounded by the longest line, not by the number of requests.
type Source interface {
	Next(r *Request) error
}

// DataError names the file, line and field of bad workload data.
//
// Error() formats it as "file:line: field: msg"; the line is omitted when it
// is 0 (a file-level problem such as an empty file) and the field when it is
// empty (a problem with the row as a whole, such as invalid JSON).
type DataError struct {
	File  string // path as given to the reader (or the name given to New*Source)
	Line  int    // 1-based physical line, 0 when the error concerns the whole file
	Field string // source field name as spelled in the file ("output_length", "GeneratedTokens"); may be empty
	Msg   string // what is wrong, with the offending value where there is one
}

// Error implements error: "file:line: field: msg".
func (e *DataError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}
