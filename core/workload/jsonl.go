package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// errDuplicateKey: a row gives one of its fields twice (rawRef.UnmarshalJSON).
var errDuplicateKey = errors.New("duplicate key")

// rowKeys returns the json keys of a row struct's fields, in field order.
func rowKeys(row any) []string {
	t := reflect.TypeOf(row)
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i] = t.Field(i).Tag.Get("json")
	}
	return keys
}

// duplicateKey finds, in a row that decodeRow found giving a field twice, the
// two keys that name it as spelled (encoding/json matches a key to a field's
// tag ignoring case, so "timestamp" and "Timestamp" are the same field). Only
// on that error path: it decodes the row again, key by key.
func duplicateKey(line []byte, row any) (first, second string) {
	tags := rowKeys(reflect.ValueOf(row).Elem().Interface())
	dec := json.NewDecoder(bytes.NewReader(line))
	seen := map[string]string{} // field tag → the key that named it first
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", ""
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", ""
		}
		key, _ := tok.(string)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return "", ""
		}
		for _, tag := range tags {
			if !strings.EqualFold(key, tag) {
				continue
			}
			if prev, ok := seen[tag]; ok {
				return prev, key
			}
			seen[tag] = key
		}
	}
	return "", ""
}

// jsonlLines reads the non-blank lines of a JSON-lines file, the part the
// JSONL trace readers (Mooncake, LLMServingSim) share: a 64 KiB buffer, lines
// bounded by MaxLineBytes, "\n" and "\r\n" endings, a UTF-8 byte-order mark
// before the first row skipped, blank lines skipped but counted.
type jsonlLines struct {
	name string
	br   *bufio.Reader
	buf  []byte // scratch for lines longer than the bufio buffer
	line int    // physical lines consumed so far (the 1-based line of the last one returned)
}

func newJSONLLines(r io.Reader, name string) jsonlLines {
	return jsonlLines{name: name, br: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next non-blank line, trimmed, valid until the next call;
// io.EOF at the end; a *DataError for a line over MaxLineBytes; a wrapped read
// error otherwise.
func (l *jsonlLines) next() ([]byte, error) {
	for {
		line, err := l.readLine()
		if err == io.EOF {
			return nil, io.EOF
		}
		if err == errLineTooLong {
			return nil, lineTooLong(l.name, l.line+1)
		}
		if err != nil {
			return nil, fmt.Errorf("workload: read %s after line %d: %w", l.name, l.line, err)
		}
		if l.line == 0 { // a UTF-8 byte-order mark before the first row, as Azure allows
			line = bytes.TrimPrefix(line, []byte(utf8BOM))
		}
		l.line++
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return line, nil
		}
	}
}

// readLine returns the next physical line without its '\n' (a last line
// without a newline included), io.EOF when nothing is left, or errLineTooLong.
// The returned slice is valid until the next call.
func (l *jsonlLines) readLine() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if len(l.buf)+len(chunk) > maxLineBytes {
				return nil, errLineTooLong
			}
			l.buf = append(l.buf, chunk...)
			continue
		}
		if len(l.buf) > 0 {
			if len(l.buf)+len(chunk) > maxLineBytes {
				return nil, errLineTooLong
			}
			l.buf = append(l.buf, chunk...)
			chunk = l.buf
		}
		if err == io.EOF && len(chunk) > 0 {
			return chunk, nil // last line without '\n'; the next call gets io.EOF
		}
		if err != nil {
			return nil, err
		}
		return chunk[:len(chunk)-1], nil
	}
}

// fail is a DataError on the line last returned by next.
func (l *jsonlLines) fail(field, msg string) *DataError {
	return &DataError{File: l.name, Line: l.line, Field: field, Msg: msg}
}

// decodeRow unmarshals one line into row (a struct of rawRef fields), or
// returns the DataError of a line that is not a JSON object or that gives a
// field of row twice.
func (l *jsonlLines) decodeRow(line []byte, row any) *DataError {
	if err := json.Unmarshal(line, row); err != nil {
		if errors.Is(err, errDuplicateKey) {
			first, second := duplicateKey(line, row)
			msg := fmt.Sprintf("given twice in the row (%q and %q): JSON leaves which one counts undefined; keep one", first, second)
			return l.fail(first, msg)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return l.fail("", "row is not a JSON object")
		}
		return l.fail("", "invalid JSON: "+err.Error())
	}
	return nil
}

// decodeRowSlow is decodeRow for a line scanRow did not settle (its row
// escapes to the heap through encoding/json; the fast path's does not).
func decodeRowSlow[T any](l *jsonlLines, line []byte) (T, *DataError) {
	var row T
	derr := l.decodeRow(line, &row)
	return row, derr
}

// jsonlSource is a Source over a JSONL trace whose rows parse reads: errors
// are sticky, io.EOF ends it.
type jsonlSource struct {
	jsonlLines
	parse func(line []byte) (Request, *DataError)
	err   error // sticky error or io.EOF
}

// Next implements Source.
func (s *jsonlSource) Next(r *Request) error {
	if s.err != nil {
		return s.err
	}
	line, err := s.next()
	if err != nil {
		s.err = err
		return err
	}
	req, derr := s.parse(line)
	if derr != nil {
		s.err = derr
		return s.err
	}
	*r = req
	return nil
}
