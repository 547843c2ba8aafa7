package workload

import "bytes"

// csvHint and jsonHint follow a reader's first error when the file has the
// other trace format: the likelier mistake is the source type, not the data.
const (
	csvHint  = " (the file looks like CSV: an Azure trace is traffic.source.type azure)"
	jsonHint = " (the file looks like JSON lines: a Mooncake or LLMServingSim trace is traffic.source.type mooncake or llmservingsim)"
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
