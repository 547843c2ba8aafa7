package replay

import "github.com/aisimulate/aisimulate/core/report"

// Records as columns (WithRecordColumns): a record is final once the client
// has acted on its response (release), and requests finish out of order, so
// the records are kept in pages of pageRows in send order; a page whose
// records are all final is encoded as one columnar chunk (report.
// ColumnBuilder) — kept, or handed to the caller's sink and dropped — and its
// page is reused. What the replay holds is then the columns (145 bytes a
// request instead of a 168-byte Record and then its columns beside it), or,
// when streaming, only the pages of the requests in flight.

// pageRows is the records per page and per chunk: a Parquet row group of the
// Python writer (_tables.CHUNK_ROWS, 65,536), so that a streamed replay hands
// over its records in pieces of about 0.1 s of writing (Ctrl-C is taken
// between them).
const (
	pageShift = 16
	pageRows  = 1 << pageShift
)

// newRecordColumns is a store of pages of 2^shift records (pageShift) that
// hands its chunks to emit (nil: keeps them).
func newRecordColumns(shift uint, expect int, emit func(report.Chunk, *report.ColumnBuilder) error) *recordColumns {
	return &recordColumns{shift: shift, rows: 1 << shift, mask: 1<<shift - 1, expect: expect, emit: emit}
}

// recordColumns is the paged record store of one replay.
type recordColumns struct {
	pages   [][]report.Record // page p: records [p·pageRows, (p+1)·pageRows); nil once encoded
	pending []int32           // per page: its records not yet final
	next    int               // the first page not yet encoded
	spare   []report.Record   // an encoded page's array, for the next page
	n       int               // records sent
	expect  int               // records expected (the estimate's count when exact), or 0
	shift   uint              // log2 of the records per page (pageShift; smaller in tests)
	mask    int               // records per page − 1
	rows    int               // records per page
	b       report.ColumnBuilder
	// emit takes each chunk in record order (streaming); nil keeps them in b.
	emit func(report.Chunk, *report.ColumnBuilder) error
	err  error // the first error emit returned: the replay stops with it
}

// at is record i.
func (c *recordColumns) at(i int) *report.Record { return &c.pages[i>>c.shift][i&c.mask] }

// add appends r and returns its index.
func (c *recordColumns) add(r report.Record) int {
	i := c.n
	if i&c.mask == 0 {
		page := c.spare[:0]
		c.spare = nil
		if page == nil && i == 0 { // sized for the records expected (grown past them)
			page = make([]report.Record, 0, min(c.rows, max(64, c.expect)))
		} else if page == nil {
			page = make([]report.Record, 0, c.rows)
		}
		c.pages = append(c.pages, page)
		c.pending = append(c.pending, int32(c.rows))
	}
	p := i >> c.shift
	c.pages[p] = append(c.pages[p], r)
	c.n++
	return i
}

// final records that record i will not change any more, and encodes the
// pages that are now complete, in order. skip is the number of leading
// records not reported (the warm-up requests, all sent before any other).
func (c *recordColumns) final(i, skip int) {
	p := i >> c.shift
	c.pending[p]--
	for c.next < len(c.pages) && c.pending[c.next] == 0 {
		c.encode(c.next, c.rows, skip)
	}
}

// flush encodes every page not yet encoded (the end of the replay: every
// record is final).
func (c *recordColumns) flush(skip int) error {
	for c.next < len(c.pages) {
		rows := c.rows
		if c.next == len(c.pages)-1 {
			rows = c.n - c.next*c.rows
		}
		c.encode(c.next, rows, skip)
	}
	return c.err
}

// encode encodes page p's first rows records (less those below skip).
func (c *recordColumns) encode(p, rows, skip int) {
	page := c.pages[p][:rows:rows]
	if from := skip - p*c.rows; from > 0 {
		page = page[min(from, rows):]
	}
	if len(page) > 0 && c.err == nil {
		if c.emit == nil {
			c.b.Add(page)
		} else {
			c.err = c.emit(c.b.Encode(page), &c.b)
		}
	}
	if cap(c.pages[p]) >= c.rows {
		c.spare = c.pages[p]
	}
	c.pages[p] = nil
	c.next++
}
