// Package pybind is the facade that gopy wraps into the Python extension
// aisimulate._core. Calls are coarse: JSON text in, JSON text out, one call per
// replay. Every exported function recovers panics, so a Go panic never aborts
// the Python interpreter.
//
// Every result is an envelope, a JSON object with exactly one of:
//
//	{"spec": {...}}        Normalize: the canonical spec, defaults filled
//	{"enums": {...}}       Enums: each enumerated spec field's allowed values
//	{"fields": {...}}      Fields: the per-request record schema
//	{"report": {...}}      Run: metadata, summary and per-request records
//	{"check": {...}}       Check: the metadata of the deployment, nothing run
//	{"catalogue": {...}}   Catalogue: the models and systems a spec can name
//	{"error": {"kind": K, "message": M, "field": F, "file": P, "line": N, "detail": D}}
//
// where K is "config" (F is the dotted spec path; "infeasible": true when the
// deployment cannot start, e.g. the model does not fit), "data" (workload data: P and
// N name the file and line), "interrupted" (the run was stopped: Stop), "io"
// (a file could not be read or written: P names it, "errno" is the OS error),
// "simulation" (any other core error) or "panic" (a bug in the core, recovered
// here; M is one line and D the Go stack). A message is at most 4 KiB.
package pybind

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"runtime/debug"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/replay"
	"github.com/aisimulate/aisimulate/core/report"
	"github.com/aisimulate/aisimulate/core/version"
)

// Version returns the core's version string.
func Version() string { return version.String() }

type errorBody struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	// Detail is the Go stack of a recovered panic (kind "panic"), kept out of
	// the one-line message.
	Detail string `json:"detail,omitempty"`
	// Infeasible: a config error whose deployment cannot start (config.Error.Infeasible).
	Infeasible bool `json:"infeasible,omitempty"`
	Errno      int  `json:"errno,omitempty"` // kind "io": the OS error number
}

// maxMessageBytes bounds an error message: a value quoted in it (a data file
// passed as a config, a megabyte-long name) must not flood the terminal.
const maxMessageBytes = 4096

// clipMessage cuts m to maxMessageBytes (at a UTF-8 boundary), saying how
// much was cut.
func clipMessage(m string) string {
	if len(m) <= maxMessageBytes {
		return m
	}
	cut := maxMessageBytes
	for cut > 0 && !utf8.RuneStart(m[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", m[:cut], len(m)-cut)
}

func errorEnvelope(err error) string {
	body := errorBody{Kind: "simulation", Message: clipMessage(err.Error())}
	var ce *config.Error
	if errors.As(err, &ce) {
		body.Kind, body.Field, body.Infeasible = "config", ce.Field, ce.Infeasible
	}
	if df, ok := asDataError(err); ok {
		body.Kind, body.File, body.Line, body.Field = "data", df.file, df.line, df.field
	}
	var st *replay.Stopped
	if errors.As(err, &st) || errors.Is(err, context.Canceled) {
		body.Kind = "interrupted"
	}
	var pe *fs.PathError
	if body.Kind == "simulation" && errors.As(err, &pe) {
		body.Kind, body.File = "io", pe.Path
		var no syscall.Errno
		if errors.As(err, &no) {
			body.Errno = int(no)
		}
	}
	b, _ := json.Marshal(map[string]errorBody{"error": body})
	return string(b)
}

// guard runs f and turns a panic into an error envelope.
func guard(f func() string) (out string) {
	defer func() {
		if r := recover(); r != nil {
			b, _ := json.Marshal(map[string]errorBody{"error": {
				Kind:    "panic",
				Message: clipMessage(strings.ReplaceAll(fmt.Sprintf("aisimulate core panic: %v", r), "\n", " ")),
				Detail:  string(debug.Stack()),
			}})
			out = string(b)
		}
	}()
	return f()
}

// Normalize validates a JSON spec and returns it with every default filled and
// its relative file paths resolved against dir (config.Spec.ResolvePaths: the
// folder of the config file, or the working directory for a dict).
func Normalize(spec, dir string) string {
	return guard(func() string {
		s, err := config.Decode([]byte(spec))
		if err != nil {
			return errorEnvelope(err)
		}
		s.ResolvePaths(dir)
		// vLLM's per-system defaults, when the system reads; otherwise the
		// replay names engine.system, and the fields stay out of the spec
		if sys, err := hardware.Lookup(s.Engine.System); err == nil {
			if err := s.ResolveSchedulerDefaults(sys.MemCapacity, sys.Name); err != nil {
				return errorEnvelope(err)
			}
		}
		return `{"spec":` + string(s.JSON()) + `}`
	})
}

// Enums returns {"enums": {dotted field: [allowed values]}} (config.Enums):
// the one list of each enumerated field, for the Python compiler's messages.
// The argument is ignored (gopy functions take the envelope's text form).
func Enums(ignored string) string {
	return guard(func() string {
		b, err := json.Marshal(map[string]any{"enums": config.Enums()})
		if err != nil {
			return errorEnvelope(err)
		}
		return string(b)
	})
}

// Schema returns {"schema": <the config's JSON Schema>} (config.Schema). The
// argument is ignored.
func Schema(ignored string) string {
	return guard(func() string {
		return `{"schema":` + string(config.Schema()) + `}`
	})
}

// Fields returns {"fields": {"fields": [{name, kind, dtype, unit, null, doc}]}}:
// the per-request record schema (report.Fields) in record order. The argument
// is ignored.
func Fields(ignored string) string {
	return guard(func() string {
		type field struct {
			Name  string `json:"name"`
			Kind  string `json:"kind"`
			Dtype string `json:"dtype"`
			Unit  string `json:"unit"`
			Null  string `json:"null"`
			Doc   string `json:"doc"`
		}
		var out []field
		for _, f := range report.Fields() {
			out = append(out, field{f.Name, f.Kind(), f.Dtype, f.Unit, f.Null, f.Doc})
		}
		b, err := json.Marshal(map[string]any{"fields": map[string]any{"fields": out}})
		if err != nil {
			return errorEnvelope(err)
		}
		return string(b)
	})
}
