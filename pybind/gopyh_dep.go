//go:build tools

// This file keeps gopy's runtime helper package a direct requirement in
// go.mod; the package main that gopy generates imports it.
package pybind

import _ "github.com/go-python/gopy/gopyh"
