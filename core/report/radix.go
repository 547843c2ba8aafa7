package report

import (
	"math"
	"math/bits"
	"slices"
	"unsafe"
)

// radixMin is the length from which sortSamples and sortRuns radix-sort:
// below it pdqsort is as fast and needs no buffer.
const radixMin = 1 << 12

// radixBits is the digit of each pass: 11 bits, 6 passes (the counts, 16 KB,
// stay in the L1 cache). 3,000,000 exponential latencies
// (BenchmarkSortSamples3M): 36–39 ms against 271–276 ms for slices.Sort
// (go test -bench, one shared machine, 2026-12-01).
const (
	radixBits = 11
	radixMask = 1<<radixBits - 1
)

// radixKeyed are the elements radixSort sorts: each begins with its key, a
// uint64 (or an int64 ≥ 0) that orders it as an unsigned integer — a
// sample's bits, a gap run's value (TestRadixKeyIsFirstWord checks the
// layout). Reading the key as the element's first word, rather than through
// a method or a function value, keeps the loops free of calls (a method on
// the type parameter, called through the instantiation's dictionary, made
// the sort twice as slow).
type radixKeyed interface {
	sampleBits | gapRun | packedRun
}

// sampleBits is a float64 ≥ +0 and not NaN seen as its bits, which order as
// its value.
type sampleBits uint64

// radixSort sorts xs by key, ascending and stable: an LSD radix sort on
// 11-bit digits (up to 6 passes: none above the keys' highest set bit, and a
// pass skipped when every element shares its digit), O(n) instead of
// pdqsort's O(n log n). buf, of any length, is grown to len(xs) as needed and
// returned for the next sort.
func radixSort[T radixKeyed](xs, buf []T) []T { return radixSortFrom(xs, buf, 0) }

// radixSortFrom is radixSort by the key's bits from bit from up (from a
// multiple of radixBits or not): the order of keys equal in those bits is
// kept.
func radixSortFrom[T radixKeyed](xs, buf []T, from uint) []T {
	n := len(xs)
	if cap(buf) < n {
		buf = make([]T, n)
	}
	key := func(x *T) uint64 { return *(*uint64)(unsafe.Pointer(x)) }
	src, dst := xs, buf[:n]
	var count [1 << radixBits]int
	// the digits above the highest bit any key sets are 0 for all: no pass
	// (it would count them only to find one digit for all)
	var set uint64
	for i := range src {
		set |= key(&src[i])
	}
	for shift := from; shift < uint(bits.Len64(set)); shift += radixBits {
		clear(count[:])
		for i := range src {
			count[key(&src[i])>>shift&radixMask]++
		}
		if count[key(&src[0])>>shift&radixMask] == n { // one digit for all: nothing moves
			continue
		}
		pos := 0
		for d, c := range count {
			count[d] = pos
			pos += c
		}
		for i := range src {
			d := key(&src[i]) >> shift & radixMask
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &xs[0] {
		copy(xs, src)
	}
	return buf
}

// sortSamples sorts xs ascending, as slices.Sort would, using buf (grown as
// needed and returned) for radixSort when every value is ≥ +0 and not NaN
// (latencies, throughputs): the bits of such floats order as their values,
// so the radix sort gives slices.Sort's result exactly (sorting the
// summary's samples was a tenth of a 10-million-request Poisson replay).
// Anything else goes to slices.Sort.
func sortSamples(xs []float64, buf []uint64) []uint64 {
	n := len(xs)
	if n < radixMin {
		slices.Sort(xs)
		return buf
	}
	keys := unsafe.Slice((*sampleBits)(unsafe.Pointer(&xs[0])), n) // the same memory, as bits
	for _, k := range keys {
		if k>>63 != 0 || uint64(k) > math.Float64bits(math.Inf(1)) { // negative, −0 or NaN
			slices.Sort(xs)
			return buf
		}
	}
	sorted := radixSort(keys, unsafe.Slice((*sampleBits)(unsafe.SliceData(buf)), cap(buf)))
	return unsafe.Slice((*uint64)(unsafe.SliceData(sorted)), cap(sorted))
}
