package aic

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestZZDebugGEMM(t *testing.T) {
	db := sharedDB(t)
	sys := builtinSystem(t, "h200_sxm")
	sysDir, err := systemDir(db, "h200_sxm")
	require.NoError(t, err)
	src, err := locate(sysDir, "h200_sxm", "vllm", "0.12.0", TableGEMM)
	require.NoError(t, err)
	rows, err := loadGEMM(src.Path)
	require.NoError(t, err)
	gb, _ := newGEMMGrid(rows, "bfloat16", sys.BF16Flops, sys.MemBW, 2)
	g8, _ := newGEMMGrid(rows, "fp8", sys.Flops("fp8"), sys.MemBW, 1)
	fmt.Println("ns", g8.ns, "ks", g8.ks)
	for _, s := range [][2]float64{{6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}} {
		_, ok := g8.sites[s]
		fmt.Println("site", s, "fp8 measured", ok)
		for _, m := range []float64{1, 16, 64, 128, 1024, 2048, 8192} {
			fmt.Printf("  m=%5.0f bf16 %.4f ms (roof %.4f)  fp8 %.4f ms (roof %.4f)\n", m, gb.Seconds(m, s[0], s[1])*1e3, gb.roofline(m, s[0], s[1])*1e3, g8.Seconds(m, s[0], s[1])*1e3, g8.roofline(m, s[0], s[1])*1e3)
		}
	}
}
