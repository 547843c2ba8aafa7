// Package version holds the project's one version string: the file VERSION
// beside this one. The Go core embeds it (the report's
// metadata.aisimulate_version, pybind.Version) and pyproject.toml reads it for
// the Python package's version (aisimulate.__version__).
package version

import (
	_ "embed"
	"strings"
)

//go:embed VERSION
var file string

// String is the version, MAJOR.MINOR.PATCH ("0.1.0").
func String() string { return strings.TrimSpace(file) }
