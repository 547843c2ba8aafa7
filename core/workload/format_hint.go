package workload

import "bytes"

// csvHint and jsonHint follow a reader's first error when the file has the
// other trace format: the likelier mistake is the source type, not the data.
const (
	csvHint = " (the file looks like CSV: an Azure trace is traffic.source.type azure)"
	// arrayHint follows the first row's error when it opens a JSON array: a
	// file of one array of rows (or one pretty-printed document) for a
	// format that takes one object per line.
	arrayHint = " (the file starts with a JSON array: a trace is JSON lines, one object per line)"
	jsonHint  = " (the file looks like JSON lines: a Mooncake or LLMServingSim trace is traffic.source.type mooncake or llmservingsim)"
)

// looksLikeCSV reports whether a JSON-lines reader's first row is a CSV
// line: no JSON value starts it and a comma separates fields.
func looksLikeCSV(line []byte) bool {
	if len(line) == 0 {
		return false
	}
	switch line[0] {
	case '{', '[', '"':
		return false
	}
	return bytes.IndexByte(line, ',') >= 0
}

// looksLikeJSON reports whether a CSV reader's first bytes (a byte-order
// mark and leading space skipped) open a JSON object or array.
func looksLikeJSON(head []byte) bool {
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte(utf8BOM)), " \t\r\n")
	return len(head) > 0 && (head[0] == '{' || head[0] == '[')
}

// BinaryKind names the binary format whose magic number opens head, the
// first bytes of a file given as a text trace (a trace compressed or
// converted to a columnar file), or "". The magic numbers: gzip's ID1 ID2
// 0x1f 0x8b (RFC 1952, 2.3.1), zstd's frame magic 0xFD2FB528 little-endian
// (RFC 8878, 3.1.1), bzip2's "BZh" and a block-size digit, xz's FD 37 7A 58
// 5A 00 (the .xz file format, 2.1.1.1), a ZIP local file header's "PK\x03\x04"
// (APPNOTE.TXT, 4.3.7) and Parquet's "PAR1" (the Parquet file format).
// The one table of them: the Python package asks it through
// pybind.BinaryKind (python/aisimulate/io/aiperf.py's AIPerf export hint).
func BinaryKind(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "gzip-compressed"
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "zstd-compressed"
	case len(head) >= 4 && bytes.HasPrefix(head, []byte("BZh")) && head[3] >= '1' && head[3] <= '9':
		return "bzip2-compressed"
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return "xz-compressed"
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return "a ZIP archive"
	case bytes.HasPrefix(head, []byte("PAR1")):
		return "Parquet"
	}
	return ""
}

// binaryHint follows a reader's first error when the file is of BinaryKind
// kind: the readers take text, which the file is not.
func binaryHint(kind string) string {
	return " (the file is " + kind + ": a trace is read as text, JSON lines or CSV; decompress or convert it first)"
}
