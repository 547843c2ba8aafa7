package trtllm

import (
	"math"
	"sort"
)

// CUDA graphs (tensorrt_llm/_torch/pyexecutor/cuda_graph_runner.py): an
// iteration of generation requests only runs as a captured graph when its
// batch size is one of the captured sizes, or, with enable_padding, when it is
// at most the largest: it then runs at the smallest captured size that holds
// it, dummy requests filling the rest. An iteration with a context, or larger
// than the largest captured size, runs eagerly.

// CUDAGraphBatchSizes are the batch sizes TensorRT-LLM captures for
// cuda_graph_config.max_batch_size maxBS without explicit batch_sizes
// (CudaGraphConfig._generate_cuda_graph_batch_sizes, tensorrt_llm/llmapi/
// llm_args.py): with padding 1, 2, 4 and the multiples of 8 up to 128,
// without it 1–31, 32, 64 and 128; then the powers of two from 256 below
// 2^⌈log2 maxBS⌉; those up to maxBS, and maxBS itself.
func CUDAGraphBatchSizes(maxBS int, padding bool) []int {
	if maxBS < 1 {
		return nil
	}
	var sizes []int
	if padding {
		sizes = []int{1, 2, 4}
		for i := 1; i <= 16; i++ {
			sizes = append(sizes, 8*i)
		}
	} else {
		for i := 1; i < 32; i++ {
			sizes = append(sizes, i)
		}
		sizes = append(sizes, 32, 64, 128)
	}
	if maxBS > 1 {
		for e := 8; e < int(math.Ceil(math.Log2(float64(maxBS)))); e++ {
			sizes = append(sizes, 1<<e)
		}
	}
	out := sizes[:0]
	for _, s := range sizes {
		if s <= maxBS {
			out = append(out, s)
		}
	}
	sort.Ints(out)
	if out[len(out)-1] != maxBS {
		out = append(out, maxBS)
	}
	return out
}

// graphPadding is the dummy requests a generation-only iteration of n
// requests runs with: the smallest captured size ≥ n less n when padding is
// on; 0 when it runs at its own size or eagerly.
func (w *Worker) graphPadding(n int) int {
	sizes := w.opt.CUDAGraphBatchSizes
	if !w.opt.CUDAGraphPadding || n == 0 || len(sizes) == 0 || n > sizes[len(sizes)-1] {
		return 0
	}
	i := sort.SearchInts(sizes, n)
	return sizes[i] - n
}
