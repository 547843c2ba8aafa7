package hardware

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSystemBounds: a value outside its field's physical bounds is refused
// with the file, the field, the value in the field's unit and the bound; a
// value that looks written in another unit (GB/s for B/s, GiB for bytes,
// TFLOP/s for FLOP/s, µs for s) also says what it would be in the field's
// unit. The hints' digits are hand-worked: 3350 GB/s = 3350·10^9 B/s; 80 GiB
// = 80·2^30 = 85899345920 bytes; 97887 MiB = 97887·2^20 = 102641958912;
// 400 Gbit/s = 400·10^9/8 = 5·10^10 B/s; 342 MiB = 358612992 (the files'
// misc.nccl_mem[2]).
func TestSystemBounds(t *testing.T) {
	cases := []struct{ from, to, msg string }{
		// HBM bandwidth: the newuser14 case (GB/s written for B/s), TB/s, no
		// hint for a value no unit explains, and the upper bound.
		{"mem_bw: 2000000000000", "mem_bw: 3350",
			"gpu.mem_bw: 3350 B/s is below 1 GB/s — the field is in bytes per second; 3350 GB/s is 3350000000000 (3.35e12)"},
		{"mem_bw: 2000000000000", "mem_bw: 3.35",
			"gpu.mem_bw: 3.35 B/s is below 1 GB/s — the field is in bytes per second; 3.35 TB/s is 3350000000000 (3.35e12)"},
		{"mem_bw: 2000000000000", "mem_bw: 1e-300",
			"gpu.mem_bw: 1e-300 B/s is below 1 GB/s — the field is in bytes per second\n"},
		{"mem_bw: 2000000000000", "mem_bw: 5e20",
			"gpu.mem_bw: 5e+20 B/s is above 1000 TB/s — the field is in bytes per second (its bound is about a hundred times today's GPUs)\n"},
		// FLOP rates, the optional ones too.
		{"bfloat16_tc_flops: 50000000000000", "bfloat16_tc_flops: 989",
			"gpu.bfloat16_tc_flops: 989 FLOP/s is below 1 TFLOP/s — the field is in FLOP per second (dense); 989 TFLOP/s is 989000000000000 (9.89e14)"},
		{"bfloat16_tc_flops: 50000000000000", "bfloat16_tc_flops: 50000000000000\n  fp8_tc_flops: 1978",
			"gpu.fp8_tc_flops: 1978 FLOP/s is below 1 TFLOP/s — the field is in FLOP per second (dense); 1978 TFLOP/s is 1978000000000000 (1.978e15)"},
		{"bfloat16_tc_flops: 50000000000000", "bfloat16_tc_flops: 50000000000000\n  fp4_tc_flops: 9",
			"gpu.fp4_tc_flops: 9 FLOP/s is below 1 TFLOP/s — the field is in FLOP per second (dense); 9 PFLOP/s is 9000000000000000 (9e15)"},
		{"bfloat16_tc_flops: 50000000000000", "bfloat16_tc_flops: 2e18",
			"gpu.bfloat16_tc_flops: 2e+18 FLOP/s is above 1 EFLOP/s"},
		// Memory: the newuser14 case (GiB written for bytes) names the
		// capacity, not misc.other_mem; nvidia-smi's MiB; the upper bound.
		{"mem_capacity: 17179869184", "mem_capacity: 80",
			"gpu.mem_capacity: 80 bytes is below 1 GiB — the field is in bytes; 80 GiB is 85899345920, 80 GB is 80000000000\n"},
		{"mem_capacity: 17179869184", "mem_capacity: 97887",
			"gpu.mem_capacity: 97887 bytes is below 1 GiB — the field is in bytes; 97887 MiB is 102641958912\n"},
		{"mem_capacity: 17179869184", "mem_capacity: 4611686018427387904",
			"gpu.mem_capacity: 4611686018427387904 bytes is above 16 TiB — the field is in bytes\n"},
		{"mem_capacity: 17179869184", "mem_capacity: 17179869184\n  mem_empirical_constant_latency: 3",
			"gpu.mem_empirical_constant_latency: 3 s is above 1 ms — the field is in seconds; 3 µs is 0.000003 (3e-6)"},
		{"mem_capacity: 17179869184", "mem_capacity: 17179869184\n  mem_bw_empirical_scaling_factor: 80",
			"gpu.mem_bw_empirical_scaling_factor: 80, want in (0, 1] (a fraction of gpu.mem_bw); 80 % is 0.8"},
		// Links: NVLink in GB/s; a NIC in GB/s or Gbit/s.
		{"intra_node_bw: 30000000000", "intra_node_bw: 450",
			"node.intra_node_bw: 450 B/s is below 1 GB/s — the field is in bytes per second per GPU, one direction; 450 GB/s is 450000000000 (4.5e11)\n"},
		{"intra_node_bw: 30000000000", "intra_node_bw: 30000000000\n  inter_node_bw: 400",
			"node.inter_node_bw: 400 B/s is below 1 GB/s — the field is in bytes per second per GPU, one direction; 400 GB/s is 400000000000 (4e11), 400 Gbit/s is 50000000000 (5e10)"},
		{"num_gpus_per_node: 4", "num_gpus_per_node: 4611686018427387904",
			"node.num_gpus_per_node: 4611686018427387904, want in [1, 1024]"},
		// Reserves: a few bytes look like GiB; more than the capacity.
		{"other_mem: 1073741824", "other_mem: 3",
			"misc.other_mem: 3 bytes is below 1 MiB (or 0) — the field is in bytes; 3 GiB is 3221225472, 3 GB is 3000000000, 3 MiB is 3145728"},
		{"other_mem: 1073741824", "other_mem: 34359738368",
			"misc.other_mem: 34359738368 bytes is more than gpu.mem_capacity (17179869184 bytes)"},
		{"other_mem: 1073741824", "other_mem: 1073741824\n  nccl_mem: {1: 0, 2: 342}",
			"misc.nccl_mem[2]: 342 bytes is below 1 MiB (or 0) — the field is in bytes; 342 MiB is 358612992\n"},
	}
	for _, c := range cases {
		t.Run(c.to, func(t *testing.T) {
			require.Contains(t, minimalYAML, c.from)
			path := writeFile(t, "mysys.yaml", strings.Replace(minimalYAML, c.from, c.to, 1))
			_, err := ReadYAML(path)
			require.Error(t, err)
			// the whole message after the file; "\n" marks that nothing follows
			want, whole := strings.CutSuffix(c.msg, "\n")
			assert.Contains(t, err.Error(), "hardware: "+path+": "+want)
			if whole {
				assert.Equal(t, "hardware: "+path+": "+want, err.Error())
			}
		})
	}
	// every built-in system is inside the bounds
	for _, name := range BuiltinNames() {
		s, _ := Builtin(name)
		assert.NoError(t, s.Validate(name))
	}
}

// scaled is s with every rate, size and latency times f.
func scaled(s *System, f float64) *System {
	c := *s
	c.MemBW *= f
	c.BF16Flops *= f
	c.FP8Flops *= f
	c.FP4Flops *= f
	c.IntraNodeBW *= f
	c.InterNodeBW *= f
	c.MemConstLatency *= f
	c.MemCapacity = int64(float64(c.MemCapacity) * f)
	c.OtherMem = int64(float64(c.OtherMem) * f)
	c.NCCLMem = map[int]int64{}
	for tp, m := range s.NCCLMem {
		c.NCCLMem[tp] = int64(float64(m) * f)
	}
	return &c
}

// TestEveryShippedSystemIsInsideTheBounds: every AIConfigurator system file
// in ../shared/data/aic/systems reads, and stays inside the bounds with
// every value ten times smaller or larger (the bounds' margin).
func TestEveryShippedSystemIsInsideTheBounds(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(sharedSystems, "*.yaml"))
	if len(files) == 0 {
		if _, err := os.Stat(sharedSystems); err != nil {
			t.Skipf("shared systems folder %s absent", sharedSystems)
		}
		t.Fatalf("no system files in %s", sharedSystems)
	}
	var names []string
	for _, path := range files {
		s, err := ReadYAML(path)
		require.NoError(t, err)
		names = append(names, s.Name)
		for _, f := range []float64{0.1, 10} {
			assert.NoError(t, scaled(s, f).Validate(path), "%s ×%g", path, f)
		}
	}
	for _, want := range []string{"a100_sxm", "h100_sxm", "h200_sxm", "b200_sxm", "b300_sxm", "gb200", "l40s", "rtx_pro_6000_server"} {
		assert.Contains(t, names, want)
	}
}
