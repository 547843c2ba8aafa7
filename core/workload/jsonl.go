package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
)

// rowKeys returns the json keys of a row struct's fields, in field order.
func rowKeys(row any) []string {
	t := reflect.TypeOf(row)
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i] = t.Field(i).Tag.Get("json")
	}
	return keys
}

// jsonlLines reads the non-blank lines of a JSON-lines file, the part the
// JSONL trace readers (Mooncake, LLMServingSim) share: a 64 KiB buffer, lines
// bounded by MaxLineBytes, "\n" and "\r\n" endings, a UTF-8 byte-order mark
// before the first row skipped, blank lines skipped but counted.
type jsonlLines struct {
	name string
	br   *bufio.Reader
	buf  []byte  // scratch for lines longer than the bufio buffer
	line int     // physical lines consumed so far (the 1-based line of the last one returned)
	rows int     // non-blank lines returned so far
	ids  []int64 // readRow's scratch for a row's ids
	kind string  // BinaryKind of the file's first bytes: "" for a text file
}

func newJSONLLines(r io.Reader, name string) jsonlLines {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(8) // the format hint's evidence; a short or failing read leaves it empty
	return jsonlLines{name: name, br: br, kind: BinaryKind(head)}
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
			derr := lineTooLong(l.name, l.line+1)
			if l.rows == 0 && l.kind != "" { // a compressed file need not hold a newline in 16 MiB
				derr.Msg += binaryHint(l.kind)
			}
			return nil, derr
		}
		if err != nil {
			return nil, fmt.Errorf("workload: read %s after line %d: %w", l.name, l.line, err)
		}
		if l.line == 0 { // a UTF-8 byte-order mark before the first row, as Azure allows
			line = bytes.TrimPrefix(line, []byte(utf8BOM))
		}
		l.line++
		if line = bytes.TrimSpace(line); len(line) > 0 {
			l.rows++
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
		if err == bufio.ErrBufferFull || len(l.buf) > 0 { // a line longer than the buffer
			if len(l.buf)+len(chunk) > maxLineBytes {
				return nil, errLineTooLong
			}
			l.buf = append(l.buf, chunk...)
			if err == bufio.ErrBufferFull {
				continue
			}
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

// readRow reads one line into row (which must come in zero) for format f,
// or returns the DataError of a line that is not a JSON object or that gives
// one of f's keys twice. The common row is settled by one fast walk
// (scanRow); any other line is checked by encoding/json, whose error text is
// the contract, and, when valid, walked again.
func (l *jsonlLines) readRow(line []byte, f *rowFormat, row *jsonRow) *DataError {
	fast := rowScanner{b: line, ids: l.ids}
	_, ok := fast.scanRow(f, row)
	l.ids = fast.ids
	if !ok {
		*row = jsonRow{}
		if derr := l.decodeRow(line, f, row); derr != nil {
			return derr
		}
	}
	if f.ids >= 0 {
		if raw := row.vals[f.ids]; present(raw) && raw[0] != '[' {
			row.idsMsg = notInts + ", got " + quoteShort(string(raw))
		}
		row.ids = slices.Clone(row.ids) // out of the scratch buffer
	}
	return nil
}

// decodeRow is readRow for a line the fast walk did not settle.
func (l *jsonlLines) decodeRow(line []byte, f *rowFormat, row *jsonRow) *DataError {
	if err := json.Unmarshal(line, &struct{}{}); err != nil {
		var te *json.UnmarshalTypeError
		first := l.rows == 1 && bytes.HasPrefix(bytes.TrimLeft(line, " \t\r"), []byte("["))
		if errors.As(err, &te) {
			if first {
				return l.fail("", "row is not a JSON object"+arrayHint)
			}
			return l.fail("", "row is not a JSON object")
		}
		msg := "invalid JSON: " + err.Error()
		switch {
		case l.rows == 1 && l.kind != "":
			msg += binaryHint(l.kind)
		case l.rows == 1 && looksLikeCSV(line):
			msg += csvHint
		case first:
			msg += arrayHint
		}
		return l.fail("", msg)
	}
	valid := rowScanner{b: line, valid: true, ids: l.ids}
	dup, _ := valid.scanRow(f, row)
	l.ids = valid.ids
	if dup != nil {
		msg := fmt.Sprintf("given twice in the row (%q and %q): JSON leaves which one counts undefined; keep one", dup.first, dup.second)
		return l.fail(dup.first, msg)
	}
	return nil
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
