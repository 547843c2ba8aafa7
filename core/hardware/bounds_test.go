package hardware

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Values beyond physical bounds are refused with the field named: a
// bandwidth of 1e-300 B/s gave an infinite pass time (and a panic), a
// capacity of 2^62 bytes an astronomical KV cache.
func TestSystemBounds(t *testing.T) {
	cases := []struct{ from, to, msg string }{
		{"mem_bw: 1000", "mem_bw: 1e-300", "field gpu.mem_bw = 1e-300, out of range [1, 1e+15]"},
		{"bfloat16_tc_flops: 5.0e+12", "bfloat16_tc_flops: 1e-300", "field gpu.bfloat16_tc_flops = 1e-300, out of range [1, 1e+18]"},
		{"intra_node_bw: 300", "intra_node_bw: 1e-300", "field node.intra_node_bw = 1e-300, out of range [1, 1e+15]"},
		{"mem_capacity: 2048", "mem_capacity: 4611686018427387904", "field gpu.mem_capacity = 4.611686018427388e+18, out of range [1, 1.7592186044416e+13]"},
		{"num_gpus_per_node: 4", "num_gpus_per_node: 4611686018427387904", "field node.num_gpus_per_node = 4.611686018427388e+18, out of range [1, 1024]"},
		{"other_mem: 7", "other_mem: 4096", "field misc.other_mem = 4096, out of range [0, 2048]"},
	}
	for _, c := range cases {
		t.Run(c.to, func(t *testing.T) {
			text := strings.Replace(minimalYAML, c.from, c.to, 1)
			_, err := ReadYAML(writeFile(t, "bad.yaml", text))
			assert.ErrorContains(t, err, c.msg)
		})
	}
	// every built-in system is inside the bounds
	for _, name := range BuiltinNames() {
		s, _ := Builtin(name)
		assert.NoError(t, s.Validate(name))
	}
}
