// Package core_test holds checks that span the core's packages.
package core_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// allowed lists, for each core package, the core packages it may import
// (docs/design.md, "Architecture": replay → engine → perf; client and workload do not know the
// engine; report knows nothing above it). A new import that breaks the layering
// fails here; a deliberate one is added here, in review.
//
// The engine is a family (docs/design.md, "The engine family"): core/engine is
// the interface the replay drives and what every engine shares, each engine is
// a package under core/engine/ that reads only core/engine and below, and
// core/engines, the table by engine.backend, is the one package that imports
// them (TestOnlyEnginesKnowsTheEngines), so the replay, the client and the
// report cannot know which engine runs.
var allowed = map[string][]string{
	"clock":         {},
	"hashtab":       {},
	"version":       {},
	"config":        {},
	"model":         {},
	"hardware":      {"model"},
	"perf":          {"clock", "model", "hardware"},
	"perf/aic":      {"model", "hardware", "perf"},
	"perf/parity":   {"config", "model", "hardware", "perf", "perf/aic"},
	"engine":        {"config", "model", "hardware", "perf"},
	"engine/vllm":   {"engine", "hashtab", "perf"},
	"engine/trtllm": {"config", "engine", "perf"},
	"engine/sglang": {"config", "model", "engine", "perf"},
	"engines":       {"config", "engine", "engine/vllm", "engine/trtllm", "engine/sglang"},
	"workload":      {"config"},
	"client":        {"clock", "workload"},
	"report":        {},
	"replay":        {"clock", "hashtab", "version", "config", "model", "hardware", "perf", "perf/aic", "engine", "engines", "workload", "client", "report"},
	// capacity planning: candidates built as specs, replayed (search reads
	// the replay's pricing and runs, never an engine)
	"search": {"config", "model", "hardware", "perf", "replay", "report"},
}

func TestLayering(t *testing.T) {
	const module = "github.com/aisimulate/aisimulate/core/"
	scanned := 0
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if pkg == "." {
			return nil
		}
		ok, known := allowed[pkg]
		if !known {
			t.Errorf("%s: package %s is not in the layering table", path, pkg)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		scanned++
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if !strings.HasPrefix(p, module) {
				continue
			}
			dep := strings.TrimPrefix(p, module)
			i := sort.SearchStrings(sorted(ok), dep)
			if i == len(ok) || sorted(ok)[i] != dep {
				t.Errorf("%s: %s imports core/%s, outside its layer (may import %v)", path, pkg, dep, ok)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 20 {
		t.Fatalf("scanned only %d files: the walk is broken", scanned)
	}
}

func sorted(xs []string) []string {
	out := append([]string(nil), xs...)
	sort.Strings(out)
	return out
}

// TestOnlyEnginesKnowsTheEngines: an engine package (core/engine/<name>) is
// imported by core/engines alone, in the table of allowed imports, so that no
// other layer can depend on which engine runs (TestLayering refuses an engine
// package missing from the table).
func TestOnlyEnginesKnowsTheEngines(t *testing.T) {
	impls := 0
	for pkg, deps := range allowed {
		if strings.HasPrefix(pkg, "engine/") {
			impls++
			assert.Contains(t, allowed["engines"], pkg, "core/engines has no row for %s", pkg)
		}
		for _, d := range deps {
			if strings.HasPrefix(d, "engine/") && pkg != "engines" {
				t.Errorf("%s may import the engine %s: only core/engines may", pkg, d)
			}
		}
	}
	if impls == 0 {
		t.Fatal("no engine package in the layering table")
	}
}
