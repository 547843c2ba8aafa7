package workload

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/aisimulate/aisimulate/core/config"
)

// parsePromptCount parses a request's prompt token count: an integer ≥ 1.
func parsePromptCount(s string) (int, string) { return parseCount(s, 1) }

// parseOutputCount parses a request's output token count: an integer ≥
// config.MinOutputTokens (vLLM refuses max_tokens < 1), the message saying why.
func parseOutputCount(s string) (int, string) {
	return outputHint(parseCount(s, config.MinOutputTokens))
}

// parseOutputLiteral is parseOutputCount of a JSON literal.
func parseOutputLiteral(raw rawRef) (int, string) {
	return outputHint(parseCountLiteral(raw, config.MinOutputTokens))
}

func outputHint(n int, msg string) (int, string) {
	if strings.HasPrefix(msg, "must be ≥") {
		msg += " (vLLM refuses max_tokens < 1: a request generates at least one token)"
	}
	return n, msg
}

// parseCount parses a token count written as a decimal number (a JSON number
// literal or a CSV field) and checks it is an integer ≥ minValue.
//
// Pure digit literals are parsed exactly. A literal with a fraction or an
// exponent ("12.0", "1.2e3") is accepted when its value is a whole number that
// fits in an int; "1.5" is rejected as not an integer. Only the characters
// 0-9 + - . e E are accepted, so "NaN", "Inf" and hex floats are not numbers.
// On failure it returns a message for DataError.Msg, never a silent zero.
func parseCount(s string, minValue int) (int, string) {
	if s == "" {
		return 0, "missing (empty value)"
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '+', c == '-', c == '.', c == 'e', c == 'E':
		default:
			return 0, fmt.Sprintf("not a number: %s", quoteShort(s))
		}
	}
	n, err := strconv.ParseInt(s, 10, strconv.IntSize)
	if err != nil {
		if isRangeError(err) {
			return 0, fmt.Sprintf("out of range: %s", quoteShort(s))
		}
		v, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil {
			if isRangeError(ferr) {
				return 0, fmt.Sprintf("out of range: %s", quoteShort(s))
			}
			return 0, fmt.Sprintf("not a number: %s", quoteShort(s))
		}
		if v != math.Trunc(v) {
			return 0, fmt.Sprintf("not an integer: %s", quoteShort(s))
		}
		// float64(math.MaxInt) rounds up to 2^63 (or 2^31 on 32-bit), so the
		// bounds are exclusive on the top and inclusive on the bottom.
		if v >= float64(math.MaxInt) || v < float64(math.MinInt) {
			return 0, fmt.Sprintf("out of range: %s", quoteShort(s))
		}
		n = int64(v)
	}
	if n < int64(minValue) {
		return 0, fmt.Sprintf("must be ≥ %d, got %s", minValue, quoteShort(s))
	}
	return int(n), ""
}

// isRangeError reports whether a strconv parse error is a range error (a
// literal too large for the type).
func isRangeError(err error) bool {
	var ne *strconv.NumError
	return errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange)
}

// quoteShort returns s for a message: as is when it is short printable ASCII,
// otherwise Go-quoted and cut to 40 bytes, so a huge or binary bad value
// cannot flood or garble an error message.
func quoteShort(s string) string {
	const limit = 40
	plain := len(s) <= limit
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] < 0x7f
	}
	if plain {
		return s
	}
	if len(s) > limit {
		return strconv.Quote(s[:limit]) + "…"
	}
	return strconv.Quote(s)
}
