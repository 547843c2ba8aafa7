package workload

import (
	"errors"
	"fmt"
	"io"
)

// MaxLineBytes bounds one line of a trace file, 16 MiB (a Mooncake row of
// about 1.5M hash ids), in every reader: a file without line breaks, or a CSV
// record whose quote never closes, is a DataError naming the line instead of
// a read that grows without bound. For CSV the bound applies to a record
// (which may span several physical lines inside quotes).
const MaxLineBytes = 16 << 20

// maxLineBytes is MaxLineBytes (kept for the readers' own bookkeeping).
const maxLineBytes = MaxLineBytes

var errLineTooLong = errors.New("line too long")

// lineTooLong is the DataError of a line or record over MaxLineBytes that
// starts on line (1-based).
func lineTooLong(file string, line int) *DataError {
	return &DataError{File: file, Line: line, Msg: fmt.Sprintf("line longer than %d bytes (16 MiB)", MaxLineBytes)}
}

// utf8BOM is the byte-order mark some tools write at the start of a UTF-8 file.
const utf8BOM = "\ufeff"

// csvRecordCap passes a CSV stream through and fails with errLineTooLong once
// one record (the bytes between two line breaks outside quotes; RFC 4180: a
// quote toggles the quoted state, and "" inside quotes toggles it twice) passes
// MaxLineBytes. encoding/csv has no such bound: it buffers a whole record.
type csvRecordCap struct {
	r        io.Reader
	run      int  // bytes of the current record so far
	inQuote  bool // inside a quoted field
	lines    int  // line breaks seen
	recStart int  // 0-based line on which the current record started
	err      error
}

func (c *csvRecordCap) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	for i := 0; i < n; i++ {
		switch p[i] {
		case '"':
			c.inQuote = !c.inQuote
		case '\n':
			c.lines++
			if !c.inQuote {
				c.run, c.recStart = 0, c.lines
				continue
			}
		}
		if c.run++; c.run > MaxLineBytes {
			c.err = errLineTooLong
			return 0, c.err
		}
	}
	return n, err
}

// line is the 1-based line on which the record over the bound started.
func (c *csvRecordCap) line() int { return c.recStart + 1 }
