package workload

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// core/workload sits below engine and replay: of the aisimulate packages it
// imports only core/config, the leaf that holds the spec's length
// distributions and datasets (one type and one rule for the spec and the
// generator). The test fails if it scanned no files.
func TestStatic_NoProjectImports(t *testing.T) {
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	fset := token.NewFileSet()
	scanned := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		require.NoError(t, err)
		scanned++
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			assert.False(t, strings.HasPrefix(path, "github.com/aisimulate/aisimulate") &&
				path != "github.com/aisimulate/aisimulate/core/config", "%s imports %s", name, path)
		}
	}
	require.Positive(t, scanned, "no Go files scanned")
}
