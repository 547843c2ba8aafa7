package aic

import (
	"fmt"
	"math"
	"sync"
)

// gemmCurve is one measured (n, k) site: latency (s) over m, m ascending.
type gemmCurve struct {
	m, sec []float64
}

// gemmGrid holds the measured sites of one GEMM dtype of one table and the
// peak rates of its roofline.
type gemmGrid struct {
	dtype string
	// ns and ks are the distinct site axes (ascending); log2 copies for the
	// efficiency blend off-site.
	ns, ks       []float64
	logNs, logKs []float64
	sites        map[[2]float64]*gemmCurve
	// flops is the dtype's peak tensor-core FLOP/s, memBW the HBM B/s,
	// elemBytes the bytes per element of the dtype.
	flops, memBW, elemBytes float64
}

// gridKey names one grid newGEMMGrid built: the rows (a table as loadRows
// caches it, by its first row: the entry keeps the rows, so the address is
// not reused while the key lives), the dtype and the roofline's rates.
type gridKey struct {
	first                   *gemmRow
	n                       int
	dtype                   string
	flops, memBW, elemBytes float64
}

type gridEntry struct {
	once sync.Once
	rows []gemmRow
	g    *gemmGrid
	err  error
}

// gridCache holds every GEMM grid built in this process: a grid is
// immutable once built and depends on its table and dtype alone, while
// every aic model of the table rebuilds it (a search of hundreds of
// deployments built the same grids hundreds of times: a sixth of its time).
var gridCache sync.Map // gridKey → *gridEntry

// newGEMMGrid builds the sites of dtype from the rows (ms → s), once per
// process for the same rows and rates (gridCache). Error: the dtype has no
// rows.
func newGEMMGrid(rows []gemmRow, dtype string, flops, memBW, elemBytes float64) (*gemmGrid, error) {
	if len(rows) == 0 {
		return buildGEMMGrid(rows, dtype, flops, memBW, elemBytes)
	}
	e, _ := gridCache.LoadOrStore(gridKey{&rows[0], len(rows), dtype, flops, memBW, elemBytes}, &gridEntry{rows: rows})
	en := e.(*gridEntry)
	en.once.Do(func() { en.g, en.err = buildGEMMGrid(rows, dtype, flops, memBW, elemBytes) })
	return en.g, en.err
}

// buildGEMMGrid is newGEMMGrid without the cache.
func buildGEMMGrid(rows []gemmRow, dtype string, flops, memBW, elemBytes float64) (*gemmGrid, error) {
	g := &gemmGrid{dtype: dtype, sites: map[[2]float64]*gemmCurve{}, flops: flops, memBW: memBW, elemBytes: elemBytes}
	type pt struct{ m, s float64 }
	pts := map[[2]float64][]pt{}
	var ns, ks []float64
	for i := range rows {
		r := &rows[i]
		if r.Dtype != dtype {
			continue
		}
		key := [2]float64{float64(r.N), float64(r.K)}
		if _, ok := pts[key]; !ok {
			ns, ks = append(ns, key[0]), append(ks, key[1])
		}
		pts[key] = append(pts[key], pt{float64(r.M), r.Latency * 1e-3})
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("no %s rows", dtype)
	}
	for key, ps := range pts {
		ms := make([]float64, len(ps))
		for i, p := range ps {
			ms[i] = p.m
		}
		ms = sortedUnique(ms)
		c := &gemmCurve{m: ms, sec: make([]float64, len(ms))}
		for _, p := range ps {
			c.sec[indexOf(ms, p.m)] = p.s
		}
		padEnvelope(c.sec)
		g.sites[key] = c
	}
	g.ns, g.ks = sortedUnique(ns), sortedUnique(ks)
	for _, n := range g.ns {
		g.logNs = append(g.logNs, math.Log2(n))
	}
	for _, k := range g.ks {
		g.logKs = append(g.logKs, math.Log2(k))
	}
	return g, nil
}

// padEnvelope lowers each time to the smallest time measured at any larger
// size on the same ascending axis: sec[i] = min(sec[i], sec[i+1], …). A
// problem can always be padded to a larger measured one (m rows of a GEMM
// are computed by the m' > m kernel), so a larger size's time bounds every
// smaller size's. The tables hold isolated glitches that break this bound —
// h100_sxm vLLM 0.14.0 bf16 has 28 of 8,360 interior points at 0.17–0.40 of
// the roofline between m-neighbours at ~0.8 (n 6144, k 5120 at m 4096:
// 4× slower than m 8192 per row, and slower in total); linear interpolation
// and the running maximum of tabulate would spread such a point over every
// pass size from the previous m to well past the next. Rows that respect the
// bound are unchanged. It does not allocate.
func padEnvelope(sec []float64) {
	for i := len(sec) - 2; i >= 0; i-- {
		sec[i] = math.Min(sec[i], sec[i+1])
	}
}

// roofline is the GEMM bound of docs/design.md ("Roofline bounds"), seconds:
//
//	T = max(2·m·n·k / P, b·(m·n + m·k + n·k) / W)
//
// m tokens, n output and k input features, P peak FLOP/s of the dtype,
// W HBM bandwidth (B/s), b bytes per element of the dtype.
func (g *gemmGrid) roofline(m, n, k float64) float64 {
	return max(2*m*n*k/g.flops, g.elemBytes*(m*n+m*k+n*k)/g.memBW)
}

// siteSeconds is the time of m tokens at a measured site: linear in m
// between measured points, and the edge's efficiency times the roofline
// outside them.
func (g *gemmGrid) siteSeconds(c *gemmCurve, m, n, k float64) float64 {
	i0, i1, w, clamped := bracket(c.m, m)
	t := lerp(c.sec[i0], c.sec[i1], w)
	if clamped {
		return keepEfficiency(t, g.roofline(c.m[i0], n, k), g.roofline(m, n, k))
	}
	return t
}

// siteEfficiency is siteSeconds over the site's roofline at m.
func (g *gemmGrid) siteEfficiency(c *gemmCurve, m, n, k float64) float64 {
	return g.siteSeconds(c, m, n, k) / g.roofline(m, n, k)
}

// Seconds prices one GEMM of m tokens against an n×k weight:
//   - at a measured (n, k) site: linear in m between the measured rows (a
//     query on a row returns that row's time exactly), the edge efficiency
//     outside them;
//   - elsewhere: the efficiency (measured / roofline) of the up to four
//     sites around (log2 n, log2 k), blended bilinearly in log2 space
//     (clamped to the measured axes; missing corners dropped, the nearest
//     site when none is left), applied to the query's roofline.
//
// Never below the roofline. m ≤ 0 costs 0.
func (g *gemmGrid) Seconds(m, n, k float64) float64 {
	if m <= 0 {
		return 0
	}
	if c, ok := g.sites[[2]float64{n, k}]; ok {
		return max(g.roofline(m, n, k), g.siteSeconds(c, m, n, k))
	}
	ln, lk := math.Log2(n), math.Log2(k)
	n0, n1, wn, _ := bracket(g.logNs, ln)
	k0, k1, wk, _ := bracket(g.logKs, lk)
	var eff, wsum float64
	for _, c := range [4]struct {
		ni, ki int
		w      float64
	}{{n0, k0, (1 - wn) * (1 - wk)}, {n1, k0, wn * (1 - wk)}, {n0, k1, (1 - wn) * wk}, {n1, k1, wn * wk}} {
		if c.w == 0 {
			continue
		}
		sn, sk := g.ns[c.ni], g.ks[c.ki]
		site, ok := g.sites[[2]float64{sn, sk}]
		if !ok {
			continue
		}
		eff += c.w * g.siteEfficiency(site, m, sn, sk)
		wsum += c.w
	}
	if wsum == 0 {
		sn, sk, site := g.nearestSite(ln, lk)
		eff, wsum = g.siteEfficiency(site, m, sn, sk), 1
	}
	roof := g.roofline(m, n, k)
	return max(roof, eff/wsum*roof)
}

// MaxLowPrecisionRatio is the largest plausible ratio of a measured fp8 (or
// fp8_block) GEMM time to the same table's bf16 GEMM time on compute-bound
// shapes (see lowPrecisionRatio). Hopper and Blackwell fp8 tensor cores have
// twice the bf16 peak (gpu.fp8_tc_flops = 2 × bfloat16_tc_flops), and tuned
// fp8 kernels measure 0.5–0.8 × the bf16 time there (vLLM tables 0.18.0 to
// 0.24.0 on h100_sxm and h200_sxm: 0.52–0.77). A table at or above 0.9 did
// not time a tuned fp8 kernel: vLLM 0.14.0's fp8 rows measure 0.98 (h200_sxm)
// and 1.21 (h100_sxm), its fp8_block rows 1.30 and 1.38, at m = 8192 —
// slower than bf16 on the same GPU.
const MaxLowPrecisionRatio = 0.9

// lowPrecisionRatio compares a low-precision grid q with the bf16 grid ref of
// the same table on compute-bound shapes: the median, over the (n, k) sites
// both measured with n ≥ 1024 and k ≥ 1024, of
//
//	q(m*, n, k) / ref(m*, n, k),   m* the largest m both measured, ≥ 4096,
//
// (at such m·n·k the GEMM is compute bound on every listed GPU, so the ratio
// is the kernels' speed ratio). ok is false when no site qualifies.
func lowPrecisionRatio(q, ref *gemmGrid) (ratio float64, ok bool) {
	var rs []float64
	for key, c := range q.sites {
		if key[0] < 1024 || key[1] < 1024 {
			continue
		}
		r, has := ref.sites[key]
		if !has {
			continue
		}
		mStar := -1.0
		for _, m := range c.m {
			if m >= 4096 && m > mStar && indexOf(r.m, m) >= 0 {
				mStar = m
			}
		}
		if mStar < 0 {
			continue
		}
		rs = append(rs, c.sec[indexOf(c.m, mStar)]/r.sec[indexOf(r.m, mStar)])
	}
	return median(rs)
}

// MaxLowPrecisionMemoryRatio is the largest plausible ratio of a measured
// low-precision GEMM time to the same table's bf16 time at one token (m = 1,
// see memoryBoundRatio). There a GEMM reads its weights: an fp8 or fp4
// weight is half a bf16 one or less, and a block-scaled fp8 GEMM adds one
// kernel, the per-token-group quantization of its input, so two kernels
// each no slower than the bf16 GEMM bound it at 2×. Measured medians (n, k
// ≥ 1024): fp8 0.57–1.16 and nvfp4 0.68–0.94 on every system; fp8_block
// 1.25–1.94 in h100_sxm 0.14.0/0.19.0, h200_sxm 0.19.0, b200_sxm 0.19.0,
// but 2.4–3.6 in h100/h200 0.18.0, 0.22.0 and 0.24.0 and 11.6–15.5 in
// b200_sxm 0.22.0/0.24.0 — 60–85 µs for a 4096 × 4096 fp8_block GEMM at one
// token on H200, where vLLM 0.18.0 serves MiniMax-M2.5 (62 layers, two such
// GEMMs each) at 8.0 ms per output token in all
// (../shared/data/silicon/vllm_moe_dev.csv, TP 8, concurrency 4), less than
// those tables' two GEMMs alone (7.9 ms). Those rows did not time the kernel
// vLLM serves with.
const MaxLowPrecisionMemoryRatio = 2.0

// memoryBoundRatio compares a low-precision grid q with the bf16 grid ref of
// the same table at one token: the median, over the (n, k) sites both
// measured at m = 1 with n ≥ 1024 and k ≥ 1024, of q(1, n, k) / ref(1, n,
// k). ok is false when no site qualifies.
func memoryBoundRatio(q, ref *gemmGrid) (ratio float64, ok bool) {
	var rs []float64
	for key, c := range q.sites {
		if key[0] < 1024 || key[1] < 1024 || c.m[0] != 1 {
			continue
		}
		r, has := ref.sites[key]
		if !has || r.m[0] != 1 {
			continue
		}
		rs = append(rs, c.sec[0]/r.sec[0])
	}
	return median(rs)
}

// nearestSite is the measured site closest to (log2 n, log2 k) in
// Euclidean log2 distance; ties go to the smaller n, then k (sites are
// visited in axis order, so the result is deterministic).
func (g *gemmGrid) nearestSite(ln, lk float64) (n, k float64, c *gemmCurve) {
	best := math.Inf(1)
	for i, sn := range g.ns {
		for j, sk := range g.ks {
			s, ok := g.sites[[2]float64{sn, sk}]
			if !ok {
				continue
			}
			d := math.Hypot(g.logNs[i]-ln, g.logKs[j]-lk)
			if d < best {
				best, n, k, c = d, sn, sk, s
			}
		}
	}
	return n, k, c
}
