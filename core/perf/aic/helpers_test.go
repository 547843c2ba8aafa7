package aic

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/stretchr/testify/require"
)

// sharedDB is ../shared/data/aic/systems relative to the repository root
// (four levels above this folder). Tests that read it skip when it is
// absent: the data lives beside the repository, never in it.
func sharedDB(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared", "data", "aic", "systems")
	if _, err := os.Stat(filepath.Join(root, "data")); err != nil {
		t.Skipf("shared perf tables not found at %s", root)
	}
	return root
}

func sharedModel(t testing.TB, name string) *model.Arch {
	t.Helper()
	dir := filepath.Join(sharedDB(t), "..", "model_configs")
	a, err := model.Load(name, dir)
	require.NoError(t, err)
	return a
}

func builtinSystem(t testing.TB, name string) *hardware.System {
	t.Helper()
	s, ok := hardware.Builtin(name)
	require.True(t, ok)
	return s
}
