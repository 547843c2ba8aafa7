package workload

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
)

// rowFormat is what a JSONL reader takes from each row: the keys it reads,
// in order (a row struct's json tags, rowKeys), and which of them (ids, −1
// for none) holds an array of integer ids, parsed as the row is walked.
type rowFormat struct {
	keys []string
	ids  int
}

// newRowFormat is the format of a row struct of rawRef fields whose field
// tagged idsKey ("" for none) holds integer ids.
func newRowFormat(row any, idsKey string) rowFormat {
	f := rowFormat{keys: rowKeys(row), ids: -1}
	if len(f.keys) > maxRowKeys {
		panic("workload: a row format with more than maxRowKeys keys")
	}
	for i, k := range f.keys {
		if k == idsKey {
			f.ids = i
		}
	}
	return f
}

// maxRowKeys bounds a format's keys (jsonRow holds their values in an array).
const maxRowKeys = 8

// jsonRow is one row as read (readRow): the raw value of each of the
// format's keys (vals[i] for keys[i], nil when absent), and the ids key's
// value parsed: ids (nil when missing, null or []), or idsMsg saying why it
// is not an array of integers (the reader reports it in its own order).
type jsonRow struct {
	vals   [maxRowKeys]rawRef
	ids    []int64
	idsMsg string
}

// rowDup: the two spellings of a key a row gives twice (both name one of
// the format's keys: encoding/json matches keys ignoring case).
type rowDup struct{ first, second string }

// scanRow walks one line, a JSON object, keeping the raw value of each of
// f's keys in row (which must come in zero) and the ids key's array parsed
// in the same pass (intArray); values of other keys are walked and dropped. It checks every value against
// JSON's grammar (RFC 8259) as encoding/json's scanner does.
//
// Fast (s.valid false), it reports false for anything it does not settle:
// invalid JSON, a line that is not an object, a key with an escape or a byte
// outside printable ASCII, a key that equals one of f's only when case is
// ignored, one of f's keys given twice, nesting deeper than maxScanDepth.
// readRow then walks the line again knowing it valid (s.valid true, after
// encoding/json has worded any syntax error): keys are unquoted, a key
// equal to one of f's ignoring case (strings.EqualFold) counts as it, as in
// encoding/json's matching of keys to fields, and the first key naming a
// field twice ends the walk, returned in dup. So what either walk settles is
// what json.Unmarshal into the row's struct would give (FuzzScanRow).
func (s *rowScanner) scanRow(f *rowFormat, row *jsonRow) (dup *rowDup, ok bool) {
	var spelled [maxRowKeys]string // valid: each field's key as written
	s.space()
	if s.peek() != '{' {
		return nil, s.valid // valid and not an object: null, all fields absent
	}
	for more := !s.empty('}'); more; {
		s.space()
		j, key, ok := s.key(f.keys)
		if !ok {
			return nil, false
		}
		s.space()
		if s.peek() != ':' {
			return nil, false
		}
		s.i++
		s.space()
		start := s.i
		if j >= 0 && j == f.ids && s.peek() == '[' {
			if row.ids, row.idsMsg = s.intArray(); row.idsMsg != "" {
				row.ids, s.i = nil, start // walked again as any value: its JSON is checked
			}
		}
		if s.i == start && !s.value(1) {
			return nil, false
		}
		if j >= 0 {
			if row.vals[j] != nil {
				if !s.valid {
					return nil, false
				}
				return &rowDup{spelled[j], key}, true
			}
			row.vals[j], spelled[j] = s.b[start:s.i], key
		}
		if more, ok = s.sep('}'); !ok {
			return nil, false
		}
	}
	s.space()
	return nil, s.i == len(s.b)
}

// key reads an object's key and finds it in keys: j is its index (−1 for
// none of them). Fast, ok is false for a key scanRow leaves to the valid
// walk (an escape or a byte outside printable ASCII, a match only ignoring
// case); valid, the key is unquoted, matched ignoring case too, and
// returned for a duplicate's message.
func (s *rowScanner) key(keys []string) (j int, key string, ok bool) {
	if !s.valid {
		b, ok := s.plainKey()
		if !ok {
			return 0, "", false
		}
		j, ok := matchKey(b, keys)
		return j, "", ok
	}
	start := s.i
	if !s.str() {
		return 0, "", false
	}
	if key, ok = unquote(s.b[start:s.i]); !ok {
		return 0, "", false // not reached: the line is valid JSON
	}
	for j, k := range keys {
		if key == k {
			return j, key, true
		}
	}
	for j, k := range keys {
		if strings.EqualFold(key, k) {
			return j, key, true
		}
	}
	return -1, key, true
}

// unquote is a JSON string literal's value (escapes decoded, invalid UTF-8
// replaced, as encoding/json reads a key).
func unquote(lit []byte) (string, bool) {
	var v string
	err := json.Unmarshal(lit, &v)
	return v, err == nil
}

// maxScanDepth bounds the fast walk's recursion into nested values; deeper
// rows (no trace writes them) go to the valid walk, which encoding/json has
// checked (its own bound is 10000).
const maxScanDepth = 64

// matchKey returns the index of key in keys, −1 when it is none of them, and
// ok false when it equals one of them only ignoring ASCII case.
func matchKey(key []byte, keys []string) (int, bool) {
	for j, k := range keys {
		if len(k) != len(key) {
			continue
		}
		if string(key) == k {
			return j, true
		}
		if asciiEqualFold(key, k) {
			return 0, false
		}
	}
	return -1, true
}

func asciiEqualFold(a []byte, b string) bool {
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// rowScanner walks one line. peek returns 0 past the end: a NUL byte is
// invalid everywhere in JSON text (inside strings as a control character), so
// it can stand for the end.
type rowScanner struct {
	b []byte
	i int
	// valid: b is known to be valid JSON (readRow's second walk, see
	// scanRow); nesting is then not bounded.
	valid bool
	// ids: intArray's ids, a scratch buffer reused from row to row.
	ids []int64
}

func (s *rowScanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// space skips JSON whitespace (RFC 8259 §2: space, tab, LF, CR).
func (s *rowScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// plainKey reads a string of printable ASCII without escapes (false for any
// other key, valid or not).
func (s *rowScanner) plainKey() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	start := s.i + 1
	for i := start; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			return s.b[start:i], true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, false
		}
	}
	return nil, false
}

// value checks one JSON value starting at s.i and moves past it.
func (s *rowScanner) value(depth int) bool {
	switch c := s.peek(); {
	case c == '"':
		return s.str()
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	case c == '[':
		return (s.valid || depth < maxScanDepth) && s.container(']', depth)
	case c == '{':
		return (s.valid || depth < maxScanDepth) && s.container('}', depth)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

func (s *rowScanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; what follows
// it is the caller's to check (so "01" fails there, as in encoding/json).
func (s *rowScanner) number() bool {
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		return false
	}
	if s.peek() == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits skips [0-9]+, false when there is none.
func (s *rowScanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// str checks a string: no control characters, only JSON's escapes. Other
// bytes pass as they are (encoding/json's scanner does not check UTF-8 either).
func (s *rowScanner) str() bool {
	for i := s.i + 1; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if i+1 >= len(s.b) {
				return false
			}
			switch s.b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+5 >= len(s.b) || !isHex(s.b[i+2]) || !isHex(s.b[i+3]) || !isHex(s.b[i+4]) || !isHex(s.b[i+5]) {
					return false
				}
				i += 5
			default:
				return false
			}
		}
	}
	return false
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// empty moves past the opening byte of an array or object and, when close
// follows at once (an empty one), past that too, reporting true.
func (s *rowScanner) empty(close byte) bool {
	s.i++
	s.space()
	if s.peek() == close {
		s.i++
		return true
	}
	return false
}

// sep reads what follows an item of an array or object closed by close: ','
// (more true) or close itself (more false); ok is false for anything else.
func (s *rowScanner) sep(close byte) (more, ok bool) {
	s.space()
	switch s.peek() {
	case ',':
		s.i++
		return true, true
	case close:
		s.i++
		return false, true
	}
	return false, false
}

// container checks an array (close ']') or an object (close '}') starting at
// s.i: its items are values, each in an object after a string key and ':'.
func (s *rowScanner) container(close byte, depth int) bool {
	if s.empty(close) {
		return true
	}
	for {
		s.space()
		if close == '}' {
			if s.peek() != '"' || !s.str() {
				return false
			}
			s.space()
			if s.peek() != ':' {
				return false
			}
			s.i++
			s.space()
		}
		if !s.value(depth + 1) {
			return false
		}
		if more, ok := s.sep(close); !more {
			return ok
		}
	}
}

// notInts is the message of an ids value that is not an array of integers.
const notInts = "must be an array of integers"

// intArray reads an array of integer literals, each an int64, at s.i into
// s.ids and moves past it; nil for []. msg says why it is not one, at its
// first item that is not an integer literal or is out of range, or where it
// is not valid JSON (the caller then checks it as any value, which tells).
func (s *rowScanner) intArray() (ids []int64, msg string) {
	s.ids = s.ids[:0]
	if s.empty(']') {
		return nil, ""
	}
	for {
		s.space()
		neg := s.peek() == '-'
		if neg {
			s.i++
		}
		// Accumulate the magnitude in uint64; int64 allows up to 2^63 − 1,
		// or 2^63 when negative.
		var mag uint64
		start := s.i
		for ; s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9'; s.i++ {
			d := uint64(s.b[s.i] - '0')
			if mag > (math.MaxUint64-d)/10 {
				return nil, notInts + " (id out of range)"
			}
			mag = mag*10 + d
		}
		switch {
		case s.i == start, s.b[start] == '0' && s.i-start > 1: // no digits; a leading zero is not JSON
			return nil, notInts
		case !neg && mag > math.MaxInt64, neg && mag > 1<<63:
			return nil, notInts + " (id out of range)"
		}
		v := int64(mag)
		if neg {
			v = -v // for mag = 2^63, int64(mag) is MinInt64 and −MinInt64 wraps to itself
		}
		s.ids = append(s.ids, v)
		more, ok := s.sep(']')
		if !ok { // '.', 'e', 'E' of a non-integer number, or not JSON
			return nil, notInts
		}
		if !more {
			return s.ids, ""
		}
	}
}

// missing is the message for a required key absent from line: "missing", and
// when the row holds keys the format does not read (a misspelt input_len for
// input_length), those keys too, so the typo is named rather than ignored. Only
// an error path calls it, so the row is parsed again here.
func (f *rowFormat) missing(line []byte) string {
	var all map[string]json.RawMessage
	if json.Unmarshal(line, &all) != nil {
		return "missing"
	}
	var other []string
	for k := range all {
		if !slices.Contains(f.keys, k) {
			other = append(other, k)
		}
	}
	if len(other) == 0 {
		return "missing"
	}
	slices.Sort(other)
	return "missing; the row has " + strings.Join(quoteAll(other), ", ") +
		", which this format does not read (its keys: " + strings.Join(f.keys, ", ") + ")" + f.otherFormat(all)
}

// rowFormats are the JSON-lines trace formats, each by the keys every row of
// it has (mooncake.go, llmservingsim.go), for the hint of a row that has
// another format's keys.
var rowFormats = []struct {
	keys []string
	name string
}{
	{[]string{"input_length", "output_length"}, "a Mooncake trace's: traffic.source.type mooncake"},
	{[]string{"input_toks", "output_toks", "arrival_time_ns"}, "an LLMServingSim trace's: traffic.source.type llmservingsim"},
}

// otherFormat is " (the row is … trace's: traffic.source.type …)" when row
// has every key of another JSON-lines format than f (an LLMServingSim trace
// given as type mooncake), else "": the likelier mistake is the source type.
func (f *rowFormat) otherFormat(row map[string]json.RawMessage) string {
	for _, o := range rowFormats {
		if slices.Contains(f.keys, o.keys[0]) {
			continue // f itself
		}
		all := true
		for _, k := range o.keys {
			_, ok := row[k]
			all = all && ok
		}
		if all {
			return " (the row is " + o.name + ")"
		}
	}
	return ""
}

// quoteAll is each of keys as a JSON string (%q), for messages.
func quoteAll(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = strconv.Quote(k)
	}
	return out
}
