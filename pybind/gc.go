package pybind

import (
	"os"
	"runtime/debug"
)

// The Go runtime inside the extension belongs to aisimulate alone. A replay
// allocates steadily while its live heap stays small, so the default GOGC=100
// collects often in a fresh process; 200 measured ~8 % faster on the Mooncake
// replay (docs/benchmarks.md) for a proportionally larger peak heap. A GOGC set
// in the environment wins.
func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
}
