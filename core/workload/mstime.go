package workload

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// msTime is a non-negative time in ms read exactly from a decimal literal:
// whole ms and the ns of the fraction (0 ≤ ns < 10⁶, the fraction rounded to
// the nearest ns, halves up). Keeping the whole ms apart lets a trace written
// in epoch milliseconds (1715299200000.25, about 1.7·10¹⁸ ns) be rebased to
// its first row exactly, which float64 ns could not do (its step there is
// 256 ns).
type msTime struct {
	ms int64
	ns int64
}

const nsPerMs = 1_000_000

// smallDigits parses raw when it is 1 to 18 decimal digits (no sign, point
// or exponent): such a literal fits in int64 and strconv.ParseInt would give
// the same value.
func smallDigits(raw rawRef) (int64, bool) {
	if len(raw) == 0 || len(raw) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseMsTime parses a JSON number literal of ms (integer, fixed-point or
// with an exponent), ≥ 0. On failure it returns a message for DataError.Msg.
func parseMsTime(raw rawRef) (msTime, string) {
	if msg := checkNumberLiteral(raw); msg != "" {
		return msTime{}, msg
	}
	if n, ok := smallDigits(raw); ok { // the common case, without a string
		return msTime{ms: n}, ""
	}
	lit := string(raw)
	if lit[0] == '-' {
		if r, ok := new(big.Rat).SetString(lit); ok && r.Sign() == 0 {
			return msTime{}, "" // -0
		}
		return msTime{}, "must be ≥ 0, got " + quoteShort(lit)
	}
	if n, err := strconv.ParseInt(lit, 10, 64); err == nil { // the common case
		return msTime{ms: n}, ""
	}
	outOfRange := "out of range: " + quoteShort(lit)
	if !strings.ContainsAny(lit, "eE") {
		whole, frac, _ := strings.Cut(lit, ".")
		ms, err := strconv.ParseInt(whole, 10, 64)
		if err != nil {
			return msTime{}, outOfRange
		}
		ns := int64(0)
		for i := 0; i < 6; i++ {
			ns *= 10
			if i < len(frac) {
				ns += int64(frac[i] - '0')
			}
		}
		if len(frac) > 6 && frac[6] >= '5' { // round the 7th digit, halves up
			if ns++; ns == nsPerMs {
				if ms == math.MaxInt64 {
					return msTime{}, outOfRange
				}
				ms, ns = ms+1, 0
			}
		}
		return msTime{ms: ms, ns: ns}, ""
	}
	// An exponent: exact through a rational (rare in traces).
	r, ok := new(big.Rat).SetString(lit)
	if !ok {
		return msTime{}, outOfRange
	}
	nsTotal := new(big.Rat).Mul(r, big.NewRat(nsPerMs, 1))
	q, m := new(big.Int).QuoRem(nsTotal.Num(), nsTotal.Denom(), new(big.Int))
	if new(big.Int).Lsh(m, 1).Cmp(nsTotal.Denom()) >= 0 { // halves up
		q.Add(q, big.NewInt(1))
	}
	msPart, nsPart := new(big.Int).QuoRem(q, big.NewInt(nsPerMs), new(big.Int))
	if !msPart.IsInt64() {
		return msTime{}, outOfRange
	}
	return msTime{ms: msPart.Int64(), ns: nsPart.Int64()}, ""
}

// less reports whether t is before u.
func (t msTime) less(u msTime) bool { return t.ms < u.ms || t.ms == u.ms && t.ns < u.ns }

// since returns t − origin in ns (t ≥ origin); ok is false when it does not
// fit in int64 (over 292 years).
func (t msTime) since(origin msTime) (int64, bool) {
	d := t.ms - origin.ms // no overflow: both are ≥ 0
	if d > (math.MaxInt64-nsPerMs)/nsPerMs {
		return 0, false
	}
	return d*nsPerMs + t.ns - origin.ns, true
}

// String writes t as an exact decimal number of ms ("1.5", "60000").
func (t msTime) String() string {
	s := strconv.FormatInt(t.ms, 10)
	if t.ns == 0 {
		return s
	}
	f := strconv.FormatInt(nsPerMs+t.ns, 10)[1:] // zero-padded to 6 digits
	return s + "." + strings.TrimRight(f, "0")
}
