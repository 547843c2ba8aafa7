package aic

import "fmt"

// allReduceCurve is the measured CUDA-graph custom all-reduce of one TP
// degree: latency (s) over message size (bf16 elements), ascending. The
// NCCL all-gather and reduce-scatter curves (nccl.go) are the same type with
// phases 1.
type allReduceCurve struct {
	gpus       int64
	sizes, sec []float64
	// bw is the NVLink bandwidth per GPU (B/s) of the roofline.
	bw float64
	// phases of a ring collective: 2 for an all-reduce (reduce-scatter then
	// all-gather), 1 for an all-gather or a reduce-scatter
	phases float64
	// note says when another GPU count stood in.
	note string
}

// newAllReduceCurve picks the rows of tp GPUs; when tp was not measured the
// nearest measured count stands in (noted). The curve is then capped as a
// GEMM site is (padEnvelope): a message can always be sent as a larger
// measured one (pad it), so no size costs more than any larger size of the
// same op. The tables hold bumps that break this: b200_sxm's 8-GPU curve
// (vLLM 0.19.0 and 0.24.0) measures ~26 µs at 131,072 and 262,144 elements
// between 9.4 µs at 65,536 and 16.7–17.2 µs at 524,288, which linear
// interpolation would spread over every pass of 16–64 tokens (hidden 8192);
// docs/accuracy.md lists the tables the cap changes. Error: the table has no
// rows.
func newAllReduceCurve(rows []allReduceRow, tp int64, bw float64) (*allReduceCurve, error) {
	best := int64(0)
	for i := range rows {
		g := rows[i].NumGPUs
		if best == 0 || abs64(g-tp) < abs64(best-tp) || (abs64(g-tp) == abs64(best-tp) && g > best) {
			best = g
		}
	}
	if best == 0 {
		return nil, fmt.Errorf("no CUDA-graph all-reduce rows")
	}
	c := &allReduceCurve{gpus: best, bw: bw, phases: 2}
	if best != tp {
		c.note = fmt.Sprintf("all-reduce of %d GPUs not measured; %d GPUs used", tp, best)
	}
	var sizes []float64
	for i := range rows {
		if rows[i].NumGPUs == best {
			sizes = append(sizes, float64(rows[i].MessageSize))
		}
	}
	c.sizes = sortedUnique(sizes)
	c.sec = make([]float64, len(c.sizes))
	for i := range rows {
		if rows[i].NumGPUs == best {
			c.sec[indexOf(c.sizes, float64(rows[i].MessageSize))] = rows[i].Latency * 1e-3
		}
	}
	padEnvelope(c.sec)
	return c, nil
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// roofline of a ring collective of e bf16 elements on t GPUs, seconds:
// phases·(t−1)/t · 2·e / B, B the NVLink bandwidth per GPU (B/s); an
// all-reduce moves 2·(t−1)/t of the message, an all-gather or a
// reduce-scatter (t−1)/t.
func (c *allReduceCurve) roofline(e float64) float64 {
	t := float64(c.gpus)
	return c.phases * (t - 1) / t * 2 * e / c.bw
}

// Seconds is the all-reduce time of e elements: linear between measured
// sizes; below the smallest size its latency (a latency floor); above the
// largest, its efficiency times the roofline.
func (c *allReduceCurve) Seconds(e float64) float64 {
	if e <= 0 {
		return 0
	}
	t, above := sizeAt(c.sizes, c.sec, e)
	if above {
		return keepEfficiency(t, c.roofline(c.sizes[len(c.sizes)-1]), c.roofline(e))
	}
	return max(t, c.roofline(e))
}
