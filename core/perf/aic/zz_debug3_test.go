package aic

import (
	"fmt"
	"testing"
	"github.com/aisimulate/aisimulate/core/model"

	"github.com/stretchr/testify/require"
)

func TestZZDebugGEMMVersions(t *testing.T) {
	db := sharedDB(t)
	for _, sn := range []string{"h200_sxm", "h100_sxm"} {
	sys := builtinSystem(t, sn)
	sysDir, err := systemDir(db, sn)
	require.NoError(t, err)
	for _, v := range []string{"0.14.0", "0.18.0", "0.19.0", "0.22.0", "0.24.0"} {
		src, err := locate(sysDir, sn, "vllm", v, TableGEMM)
		require.NoError(t, err)
		rows, err := loadGEMM(src.Path)
		require.NoError(t, err)
		for _, d := range []string{"bfloat16", "fp8", "fp8_block"} {
			g, err := newGEMMGrid(rows, d, sys.Flops(model.Dtype(d)), sys.MemBW, map[string]float64{"bfloat16": 2, "fp8": 1, "fp8_block": 1}[d])
			if err != nil { fmt.Println(sn, v, d, err); continue }
			fmt.Printf("%s %s (%s) %-9s", sn, v, src.ReadFrom, d)
			for _, m := range []float64{1, 128, 1024, 8192} {
				s := g.Seconds(m, 6144, 4096)
				fmt.Printf("  m=%4.0f %.4fms eff %.2f", m, s*1e3, g.roofline(m, 6144, 4096)/s)
			}
			fmt.Println()
		}
	}
	}
}
