package model

import (
	"bytes"
	"fmt"
	"reflect"
)

// nonFinite is a NaN, Infinity or -Infinity token of a config.json: Python's
// json module writes float('nan') and float('inf') so, and transformers
// (which vLLM loads a checkpoint's config.json through) reads them back;
// JSON has no such numbers. Off and End bound the token in the file; Field
// is the last key before it (an array's, for an element).
type nonFinite struct {
	Off, End int
	Field    string
}

var nonFiniteWords = [][]byte{[]byte("-Infinity"), []byte("Infinity"), []byte("NaN")}

// findNonFinite lists data's non-finite tokens outside strings, in order.
func findNonFinite(data []byte) []nonFinite {
	var out []nonFinite
	inStr, esc, strStart, lastStr, lastKey := false, false, 0, "", ""
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr, lastStr = false, string(data[strStart:i])
			}
			continue
		}
		switch c {
		case '"':
			inStr, strStart = true, i+1
		case ':':
			lastKey = lastStr
		case '-', 'I', 'N':
			for _, w := range nonFiniteWords {
				if bytes.HasPrefix(data[i:], w) {
					out = append(out, nonFinite{i, i + len(w), lastKey})
					i += len(w) - 1
					break
				}
			}
		}
	}
	return out
}

// withNumbers is data with token k of toks written as vary and every other
// as fixed (finite numbers).
func withNumbers(data []byte, toks []nonFinite, k int, fixed, vary string) []byte {
	var b bytes.Buffer
	at := 0
	for j, t := range toks {
		b.Write(data[at:t.Off])
		if j == k {
			b.WriteString(vary)
		} else {
			b.WriteString(fixed)
		}
		at = t.End
	}
	b.Write(data[at:])
	return b.Bytes()
}

// parseNonFinite parses a config.json that holds non-finite numbers, as
// vLLM serves it: a field no reader of this package reads may hold one
// (Nemotron-H's time_step_limit: [0.0, Infinity], a Mamba-2 kernel clamp
// this model does not price). Each token is tried as two finite numbers
// (−1 and 1e300, the others held at −1); a field whose value changes the
// model, or makes it invalid, is an error naming its line and field, as
// Parse reports any bad JSON; an error the model has whatever the token
// holds (an architecture refused) is that error.
func parseNonFinite(data []byte, name string, toks []nonFinite) (*Arch, error) {
	var arch *Arch
	for k, t := range toks {
		lo, errLo := parseJSON(withNumbers(data, toks, k, "-1", "-1"), name)
		hi, errHi := parseJSON(withNumbers(data, toks, k, "-1", "1e300"), name)
		if errLo != nil && errHi != nil && errLo.Error() == errHi.Error() {
			return nil, errLo // the model's own error, whatever the token holds
		}
		if errLo != nil || errHi != nil || !reflect.DeepEqual(lo, hi) {
			line := 1 + bytes.Count(data[:t.Off], []byte("\n"))
			return nil, fmt.Errorf("model %s: config.json: line %d, field %s: %s is not a JSON number "+
				"(JSON has no NaN or Infinity; give a finite number)", name, line, t.Field, data[t.Off:t.End])
		}
		arch = lo
	}
	return arch, nil
}
