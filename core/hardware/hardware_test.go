package hardware

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/aisimulate/aisimulate/core/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedSystems is the AIConfigurator systems directory, read in place.
const sharedSystems = "../../../shared/data/aic/systems"

func TestBuiltinsMatchYAML(t *testing.T) {
	require.Equal(t, []string{"a100_sxm", "b200_sxm", "b300_sxm", "gb200", "h100_sxm", "h200_sxm", "l40s", "rtx_pro_6000_server"},
		BuiltinNames())
	for _, name := range BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(sharedSystems, name+".yaml")
			if _, err := os.Stat(path); err != nil {
				t.Skipf("shared system file %s absent", path)
			}
			want, err := ReadYAML(path)
			require.NoError(t, err)
			got, ok := Builtin(name)
			require.True(t, ok)
			// The measured all-reduce is not in the files
			// (tests/test_fit_allreduce.py checks it against its tables).
			require.NotEmpty(t, got.AllReduce, "every built-in system has a measured all-reduce")
			got.AllReduce = nil
			assert.Equal(t, want, got)
		})
	}
}

func TestBuiltinValues(t *testing.T) {
	// Spot values from docs/design.md ("System specs").
	h100, ok := Builtin("h100_sxm")
	require.True(t, ok)
	assert.Equal(t, 3.35e12, h100.MemBW)
	assert.Equal(t, int64(80)<<30, h100.MemCapacity)
	assert.Equal(t, 989e12, h100.BF16Flops)
	assert.Equal(t, 4.5e11, h100.IntraNodeBW)
	h200, _ := Builtin("h200_sxm")
	assert.Equal(t, int64(141)<<30, h200.MemCapacity)
	// A copy: mutating it does not change the next lookup.
	h100.NCCLMem[2] = 1
	again, _ := Builtin("h100_sxm")
	assert.Equal(t, int64(358612992), again.NCCLMem[2])
}

func TestFlops(t *testing.T) {
	h100, _ := Builtin("h100_sxm")
	a100, _ := Builtin("a100_sxm")
	assert.Equal(t, 989e12, h100.Flops(model.BF16))
	assert.Equal(t, 1978e12, h100.Flops(model.FP8))
	assert.Equal(t, 1978e12, h100.Flops(model.FP8Block))
	// A100 has no fp8 tensor cores: fp8 weights run with bf16 math.
	assert.Equal(t, 312e12, a100.Flops(model.FP8))
	assert.Equal(t, 312e12, a100.Flops(model.BF16))
	// NVFP4 on Blackwell's fp4 tensor cores (gpu.fp4_tc_flops); on Hopper,
	// which has none, weight-only with bf16 math.
	b200, _ := Builtin("b200_sxm")
	assert.Equal(t, 9000e12, b200.Flops(model.NVFP4))
	assert.Equal(t, 4500e12, b200.Flops(model.FP8))
	assert.Equal(t, 989e12, h100.Flops(model.NVFP4))
}

func TestNCCLMemFor(t *testing.T) {
	s := &System{NCCLMem: map[int]int64{1: 0, 2: 10, 4: 20, 8: 30}}
	assert.Equal(t, int64(0), s.NCCLMemFor(1))
	assert.Equal(t, int64(10), s.NCCLMemFor(2))
	assert.Equal(t, int64(10), s.NCCLMemFor(3)) // largest listed degree ≤ 3 is 2
	assert.Equal(t, int64(20), s.NCCLMemFor(6)) // … ≤ 6 is 4
	assert.Equal(t, int64(0), (&System{}).NCCLMemFor(2))
}

func TestAllReduceFor(t *testing.T) {
	s := &System{AllReduce: map[int]AllReduceLink{2: {LatencyS: 1e-6, BusBW: 10e9}, 4: {LatencyS: 2e-6, BusBW: 5e9}}}
	l, ok := s.AllReduceFor(2)
	assert.True(t, ok)
	assert.Equal(t, AllReduceLink{LatencyS: 1e-6, BusBW: 10e9}, l)
	l, ok = s.AllReduceFor(8) // not measured: the largest count below, 4
	assert.True(t, ok)
	assert.Equal(t, AllReduceLink{LatencyS: 2e-6, BusBW: 5e9}, l)
	l, ok = s.AllReduceFor(3) // … below 3 is 2
	assert.True(t, ok)
	assert.Equal(t, 10e9, l.BusBW)
	_, ok = s.AllReduceFor(1) // nothing measured at or below 1
	assert.False(t, ok)
	_, ok = (&System{}).AllReduceFor(2) // a YAML system has none
	assert.False(t, ok)
	// The PCIe pair of the RTX PRO 6000 server reaches 15.0 of its 64 GB/s.
	rtx, _ := Builtin("rtx_pro_6000_server")
	l, ok = rtx.AllReduceFor(2)
	assert.True(t, ok)
	assert.Equal(t, AllReduceLink{LatencyS: 18.6e-6, BusBW: 15.0e9}, l)
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

// minimalYAML is a small but physically plausible GPU (2 TB/s of HBM, 16
// GiB, 50 TFLOP/s, 30 GB/s between its GPUs, 1 GiB reserved): inside
// Validate's bounds, which refuse values written in another unit.
const minimalYAML = `
gpu:
  mem_bw: 2000000000000
  mem_capacity: 17179869184
  bfloat16_tc_flops: 50000000000000
node:
  num_gpus_per_node: 4
  intra_node_bw: 30000000000
misc:
  other_mem: 1073741824
`

func TestReadYAMLDefaults(t *testing.T) {
	s, err := ReadYAML(writeFile(t, "tiny_gpu.yaml", minimalYAML))
	require.NoError(t, err)
	assert.Equal(t, &System{Name: "tiny_gpu", MemBW: 2e12, MemCapacity: 16 << 30, BF16Flops: 5e13,
		MemBWScaling: 1, GPUsPerNode: 4, IntraNodeBW: 3e10, OtherMem: 1 << 30, NCCLMem: map[int]int64{}}, s)
}

func TestReadYAMLErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"missing mem_bw", `
gpu: {mem_capacity: 17179869184, bfloat16_tc_flops: 5e13}
node: {num_gpus_per_node: 1, intra_node_bw: 3e10}
misc: {other_mem: 0}`, "gpu.mem_bw is missing"},
		{"zero flops", `
gpu: {mem_bw: 2e12, mem_capacity: 17179869184, bfloat16_tc_flops: 0}
node: {num_gpus_per_node: 1, intra_node_bw: 3e10}
misc: {other_mem: 0}`, "gpu.bfloat16_tc_flops = 0"},
		{"missing capacity", `
gpu: {mem_bw: 2e12, bfloat16_tc_flops: 5e13}
node: {num_gpus_per_node: 1, intra_node_bw: 3e10}
misc: {other_mem: 0}`, "gpu.mem_capacity is missing"},
		{"missing other_mem", `
gpu: {mem_bw: 2e12, mem_capacity: 17179869184, bfloat16_tc_flops: 5e13}
node: {num_gpus_per_node: 1, intra_node_bw: 3e10}`, "misc.other_mem is missing"},
		{"bad scaling", `
gpu: {mem_bw: 2e12, mem_capacity: 17179869184, bfloat16_tc_flops: 5e13, mem_bw_empirical_scaling_factor: 2}
node: {num_gpus_per_node: 1, intra_node_bw: 3e10}
misc: {other_mem: 0}`, "gpu.mem_bw_empirical_scaling_factor: 2, want in (0, 1]"},
		{"misspelt capacity", `
gpu: {mem_bw: 2e12, mem_capcity: 85899345920, bfloat16_tc_flops: 5e13}
node: {num_gpus_per_node: 1, intra_node_bw: 3e10}
misc: {other_mem: 0}`, "field gpu.mem_capacity is missing (the file has gpu.mem_capcity: misspelt?)"},
		{"misspelt NVLink, a known field near it is no suspect", `
gpu: {mem_bw: 2e12, mem_capacity: 85899345920, bfloat16_tc_flops: 5e13}
node: {num_gpus_per_node: 1, intra_nodebw: 3e10, inter_node_bw: 5e10}
misc: {other_mem: 0}`, "field node.intra_node_bw is missing (the file has node.intra_nodebw: misspelt?)"},
		{"not yaml", "gpu: [", "bad.yaml"},
		{"wrong type", "gpu: {mem_bw: fast}", "bad.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, "bad.yaml", tc.body)
			_, err := ReadYAML(p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), p)
		})
	}
	_, err := ReadYAML(filepath.Join(t.TempDir(), "absent.yaml"))
	assert.ErrorContains(t, err, "absent.yaml")
}

func TestLookup(t *testing.T) {
	s, err := Lookup("h200_sxm")
	require.NoError(t, err)
	assert.Equal(t, 4.8e12, s.MemBW)

	p := writeFile(t, "custom.yaml", minimalYAML)
	s, err = Lookup(p)
	require.NoError(t, err)
	assert.Equal(t, "custom", s.Name)

	_, err = Lookup("tpu_v9")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"tpu_v9"`)
	assert.Contains(t, err.Error(), "a100_sxm, b200_sxm, b300_sxm, gb200, h100_sxm, h200_sxm, l40s, rtx_pro_6000_server")
}

// TestCollectiveBW: within a node a ring runs at NVLink; 16 H200 GPUs are
// two nodes of 8 and their ring's slowest links are the NICs (50 GB/s per
// GPU, node.inter_node_bw); GB200's 4-GPU nodes sit in one NVLink rack
// (900 GB/s both ways); a YAML system without inter_node_bw keeps NVLink.
func TestCollectiveBW(t *testing.T) {
	h200, _ := Builtin("h200_sxm")
	assert.Equal(t, 1, h200.Nodes(8))
	assert.Equal(t, 2, h200.Nodes(16))
	assert.Equal(t, 3, h200.Nodes(17))
	assert.Equal(t, 450e9, h200.CollectiveBW(8))
	assert.Equal(t, 50e9, h200.CollectiveBW(16))
	gb200, _ := Builtin("gb200")
	assert.Equal(t, 4, gb200.Nodes(16))
	assert.Equal(t, 900e9, gb200.CollectiveBW(16))
	s, err := ReadYAML(writeFile(t, "tiny_gpu.yaml", minimalYAML))
	require.NoError(t, err)
	assert.Equal(t, 3e10, s.CollectiveBW(16))
}
