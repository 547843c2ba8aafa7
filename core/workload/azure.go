package workload

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// Azure LLM inference trace column names (Azure/AzurePublicDataset, data/
// AzureLLMInferenceTrace_{code,conv}.csv). Matched case-insensitively after
// trimming spaces.
const (
	AzureColTimestamp = "TIMESTAMP"
	AzureColInput     = "ContextTokens"
	AzureColOutput    = "GeneratedTokens"
)

// OpenAzure opens an Azure LLM inference trace CSV for streaming.
//
// Format: a header row naming the columns, then one request per row. Columns
// are found by header name (AzureColTimestamp, AzureColInput, AzureColOutput;
// other columns are ignored, order is free):
//
//	TIMESTAMP        "2023-11-16 18:15:46.6805900" (the 2023 release) or
//	                 "2024-05-12 00:00:00.041683+00:00" (2024): date, time of
//	                 day, an optional fraction of up to 9 digits (7 in 2023,
//	                 up to 6 in 2024) and an optional UTC offset (±hh:mm or
//	                 Z); a 'T' may replace the space. Times without an offset
//	                 are UTC; an offset is applied (the 2024 files give +00:00)
//	ContextTokens    prompt tokens, an integer ≥ 1
//	GeneratedTokens  output tokens, an integer ≥ 1 (vLLM refuses max_tokens
//	                 < 1); empty or absent is a DataError, never a silent zero
//
// Request.Timestamp is the row's time minus the first row's time (the time
// origin, TimeOrigin), exact to the ns (the 7 fractional digits are 100 ns
// units); rows must not go backwards.
// Requests have HashIDs nil (the trace carries no prefix information),
// SessionID -1, Turn 0 and Line the 1-based CSV line. "\r\n" line endings,
// blank lines and a UTF-8 byte-order mark are accepted. A record longer than
// MaxLineBytes is a DataError naming the line it starts on.
//
// Errors: the os.Open error (wrapped); a *DataError when the header is missing
// or lacks a column (line 1), and from Next for malformed CSV, a row with
// more or fewer fields than the header, a bad value or a timestamp going
// backwards. The caller closes the returned Closer (the file).
func OpenAzure(path string) (Source, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("workload: open Azure trace: %w", err)
	}
	src, err := NewAzureSource(f, path)
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return src, f, nil
}

// NewAzureSource streams an Azure trace CSV (see OpenAzure) from r; name is
// used as DataError.File. It reads and checks the header now, the rows lazily,
// and never closes r.
func NewAzureSource(r io.Reader, name string) (Source, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(16) // the format hint's evidence; a short or failing read leaves it empty
	capped := &csvRecordCap{r: br}
	cr := csv.NewReader(capped)
	cr.FieldsPerRecord = -1 // a row of another width gets a DataError naming its line (parse)
	cr.ReuseRecord = true
	s := &azureSource{name: name, cr: cr, capped: capped}
	header, err := cr.Read()
	if err == io.EOF {
		return nil, &DataError{File: name, Msg: "empty file: no header row"}
	}
	if err != nil {
		err = s.csvError(err)
		var de *DataError
		if errors.As(err, &de) {
			de.Msg += azureFormatHint(head)
		}
		return nil, err
	}
	line, _ := cr.FieldPos(0)
	cols := [3]string{AzureColTimestamp, AzureColInput, AzureColOutput}
	idx := [3]int{-1, -1, -1}
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		h = strings.TrimSpace(h)
		for c, want := range cols {
			if strings.EqualFold(h, want) {
				if idx[c] >= 0 {
					return nil, &DataError{File: name, Line: line, Field: want, Msg: "column appears twice in the header"}
				}
				idx[c] = i
			}
		}
	}
	for c, want := range cols {
		if idx[c] < 0 {
			msg := "column missing from the header" + azureFormatHint(head)
			return nil, &DataError{File: name, Line: line, Field: want, Msg: msg}
		}
	}
	s.colTs, s.colIn, s.colOut = idx[0], idx[1], idx[2]
	s.width, s.headerLine = len(header), line
	return s, nil
}

type azureSource struct {
	name                 string
	cr                   *csv.Reader
	capped               *csvRecordCap
	colTs, colIn, colOut int
	width, headerLine    int // the header's fields and line: a row must have as many
	id                   int64
	err                  error

	haveFirst bool
	first     time.Time // first row's time, the origin of Request.Timestamp
	firstText string    // as written
	prevNs    int64
	prevLine  int
}

// TimeOrigin implements TimeOriginer: the first row's time in ms since the
// Unix epoch (UTC, exact to the ns) and as written.
func (s *azureSource) TimeOrigin() (ms string, text string, ok bool) {
	if !s.haveFirst {
		return "", "", false
	}
	ns := s.first.UnixNano()
	if ns < 0 { // before 1970: no exact split needed for such a trace
		return strconv.FormatFloat(float64(ns)/1e6, 'f', -1, 64), s.firstText, true
	}
	return msTime{ms: ns / nsPerMs, ns: ns % nsPerMs}.String(), s.firstText, true
}

func (s *azureSource) csvError(err error) error {
	if errors.Is(err, errLineTooLong) {
		return lineTooLong(s.name, s.capped.line())
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &DataError{File: s.name, Line: pe.Line, Msg: "malformed CSV: " + pe.Err.Error()}
	}
	return fmt.Errorf("workload: read %s: %w", s.name, err)
}

// Next implements Source.
func (s *azureSource) Next(r *Request) error {
	if s.err != nil {
		return s.err
	}
	rec, err := s.cr.Read()
	if err == io.EOF {
		s.err = io.EOF
		return s.err
	}
	if err != nil {
		s.err = s.csvError(err)
		return s.err
	}
	line, _ := s.cr.FieldPos(0)
	req, derr := s.parse(rec, line)
	if derr != nil {
		s.err = derr
		return s.err
	}
	*r = req
	return nil
}

func (s *azureSource) parse(rec []string, line int) (Request, *DataError) {
	fail := func(field, msg string) (Request, *DataError) {
		return Request{}, &DataError{File: s.name, Line: line, Field: field, Msg: msg}
	}
	field := func(i int) (string, bool) {
		if i >= len(rec) {
			return "", false
		}
		return strings.TrimSpace(rec[i]), true
	}
	width := func() (Request, *DataError) { // a stray comma would shift or drop a value unseen
		return fail("", fmt.Sprintf("row has %d fields, but the header (line %d) has %d", len(rec), s.headerLine, s.width))
	}
	if len(rec) > s.width {
		return width()
	}
	tsText, ok := field(s.colTs)
	if !ok {
		return fail(AzureColTimestamp, fmt.Sprintf("missing (row has %d fields)", len(rec)))
	}
	t, msg := parseAzureTime(tsText)
	if msg != "" {
		return fail(AzureColTimestamp, msg)
	}
	counts := [2]int{}
	for k, c := range [2]struct {
		col   int
		name  string
		parse func(string) (int, string)
	}{{s.colIn, AzureColInput, parsePromptCount}, {s.colOut, AzureColOutput, parseOutputCount}} {
		text, ok := field(c.col)
		if !ok {
			return fail(c.name, fmt.Sprintf("missing (row has %d fields)", len(rec)))
		}
		n, msg := c.parse(text)
		if msg != "" {
			return fail(c.name, msg)
		}
		counts[k] = n
	}
	if len(rec) < s.width { // short of a column this reader does not use
		return width()
	}
	if !s.haveFirst {
		s.haveFirst, s.first, s.firstText = true, t, tsText
	}
	d := t.Sub(s.first)
	if d == math.MaxInt64 || d == math.MinInt64 { // time.Time.Sub saturates
		return fail(AzureColTimestamp, "more than 292 years from the first row")
	}
	ns := int64(d)
	if ns < s.prevNs {
		return fail(AzureColTimestamp, fmt.Sprintf("goes backwards: %s is before the row on line %d", tsText, s.prevLine))
	}
	s.prevNs, s.prevLine = ns, line
	req := Request{
		ID:           s.id,
		Timestamp:    ns,
		HasTimestamp: true,
		InputTokens:  counts[0],
		OutputTokens: counts[1],
		SessionID:    -1,
		Line:         line,
	}
	s.id++
	return req, nil
}

// parseAzureTime parses "YYYY-MM-DD hh:mm:ss[.fraction][±hh:mm|Z]" (space or
// 'T'), exact to the ns; without an offset the time is UTC.
func parseAzureTime(text string) (time.Time, string) {
	if text == "" {
		return time.Time{}, "missing (empty value)"
	}
	layout := "2006-01-02 15:04:05"
	if len(text) > 10 && text[10] == 'T' {
		layout = "2006-01-02T15:04:05"
	}
	// time.Parse accepts a fractional second after the seconds field even
	// though the layout does not show one, and keeps all of its digits (≤ 9).
	t, err := time.Parse(layout, text)
	if err != nil {
		t, err = time.Parse(layout+"Z07:00", text)
	}
	if err != nil {
		return time.Time{}, fmt.Sprintf("cannot parse %s: want YYYY-MM-DD hh:mm:ss[.fraction][+hh:mm]", quoteShort(text))
	}
	return t.UTC(), ""
}

// azureFormatHint follows an error on a file that is no CSV, by its first
// bytes head: a binary file's kind (binaryHint), else a JSON-lines file's
// (jsonHint), else nothing.
func azureFormatHint(head []byte) string {
	if kind := BinaryKind(head); kind != "" {
		return binaryHint(kind)
	}
	if looksLikeJSON(head) {
		return jsonHint
	}
	return ""
}
