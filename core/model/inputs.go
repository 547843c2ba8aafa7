package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// CheckpointConfigName is the file a Hugging Face checkpoint folder keeps its
// model configuration in: `vllm serve /path/to/folder` reads
// /path/to/folder/config.json (transformers' CONFIG_NAME).
const CheckpointConfigName = "config.json"

// checkpointConfig is the config.json of nameOrPath when it is a folder
// (a checkpoint folder given as engine.model, as `vllm serve` takes one):
// its path and true, or an error for a folder without one; "" and false when
// nameOrPath is not a folder.
func checkpointConfig(nameOrPath string) (string, bool, error) {
	fi, err := os.Stat(nameOrPath)
	if err != nil || !fi.IsDir() {
		return "", false, nil
	}
	p := filepath.Join(nameOrPath, CheckpointConfigName)
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return "", true, fmt.Errorf("model %s: a folder without %s: give a Hugging Face checkpoint folder (it holds %s) or the config file itself",
			nameOrPath, CheckpointConfigName, CheckpointConfigName)
	}
	return p, true, nil
}

// torchDtypes are the values of config.json's torch_dtype (transformers
// before 4.56) or dtype (from 4.56) that name a torch floating-point type:
// transformers reads the string as getattr(torch, name), so any other value
// fails to load. vLLM's dtype "auto" serves float16 as float16 and every
// other type as bfloat16 (vllm/config/model.py, _get_and_verify_dtype; float32
// checkpoints are cast down), the 2-byte weights the model is priced with.
var torchDtypes = map[string]bool{
	"float16": true, "half": true, "bfloat16": true, "float32": true, "float": true,
	"float64": true, "double": true, "float8_e4m3fn": true, "float8_e5m2": true,
}

// checkTorchDtype refuses a torch_dtype (or dtype) that is not a torch
// floating-point type; an absent or null one is the checkpoint's default.
func checkTorchDtype(c *hfConfig) error {
	for _, f := range []struct {
		name  string
		value *string
	}{{"torch_dtype", c.TorchDtype}, {"dtype", c.Dtype}} {
		if f.value != nil && !torchDtypes[*f.value] {
			names := make([]string, 0, len(torchDtypes))
			for n := range torchDtypes {
				names = append(names, n)
			}
			sort.Strings(names)
			return fmt.Errorf("config.json field %s: %q is not a torch floating-point type (%s)",
				f.name, *f.value, strings.Join(names, ", "))
		}
	}
	return nil
}

// keyBefore finds the last "key": before a syntax error, the field whose
// value it is in.
var keyBefore = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*:\s*-?$`)

// syntaxError rewords a JSON syntax error of data for a person: the line,
// the field whose value holds it, and for NaN or Infinity (which Python's
// json writes and JSON has not) what is wrong. Other errors are returned as
// they are.
func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) || se.Offset < 1 || se.Offset > int64(len(data)) {
		return err
	}
	at := int(se.Offset) - 1 // the offending byte
	line := 1 + bytes.Count(data[:at], []byte("\n"))
	where := fmt.Sprintf("line %d", line)
	if m := keyBefore.FindSubmatch(data[:at]); m != nil {
		where += fmt.Sprintf(", field %s", m[1])
	}
	rest := data[at:]
	for _, word := range []string{"NaN", "Infinity"} {
		if bytes.HasPrefix(rest, []byte(word)) {
			return fmt.Errorf("%s: %s is not a JSON number (JSON has no NaN or Infinity; give a finite number)", where, word)
		}
	}
	return fmt.Errorf("%s: %w", where, err)
}
