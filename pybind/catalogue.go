package pybind

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
)

// catalogueRequest names the folders to list, in lookup order.
type catalogueRequest struct {
	ModelConfigDirs []string `json:"model_config_dirs"`
	SystemDirs      []string `json:"system_dirs"`
}

// Catalogue lists the models and GPU systems a replay can name: the built-ins,
// then the config.json files of each model config folder and the YAML files
// of each systems folder, in the order given (a name found twice is listed
// where it is found first, which is where a replay finds it), each folder's
// entries sorted by name. It returns {"catalogue": {"models":
// [model.Listing…], "systems": [hardware.Listing…], "errors": ["folder:
// reason"…]}} (an unreadable folder is an entry of errors), or an error
// envelope for a malformed request.
func Catalogue(request string) string {
	return guard(func() string {
		var req catalogueRequest
		if err := json.Unmarshal([]byte(request), &req); err != nil {
			return errorEnvelope(&config.Error{Msg: "catalogue request: " + err.Error()})
		}
		var errs []string
		models := collect(req.ModelConfigDirs, model.BuiltinListings(), model.NameOfConfigFile, model.ListFile,
			func(l model.Listing) string { return l.Name }, &errs)
		systems := collect(req.SystemDirs, hardware.BuiltinListings(), hardware.NameOfFile, hardware.ListFile,
			func(l hardware.Listing) string { return l.Name }, &errs)
		b, err := json.Marshal(map[string]any{"catalogue": map[string]any{
			"models": models, "systems": systems, "errors": append([]string{}, errs...)}})
		if err != nil {
			return errorEnvelope(err)
		}
		return string(b)
	})
}

// collect appends to builtins the entries of each folder in dirs: every file
// that nameOf accepts, described by list, sorted by name within its folder; a
// name already listed is skipped. Unreadable folders are appended to errs.
func collect[L any](dirs []string, builtins []L, nameOf func(file string) (string, bool),
	list func(path, name string) L, name func(L) string, errs *[]string) []L {
	out := append([]L{}, builtins...)
	seen := map[string]bool{}
	for _, l := range out {
		seen[name(l)] = true
	}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			*errs = append(*errs, dir+": "+err.Error())
			continue
		}
		var found []L
		for _, e := range entries {
			n, ok := nameOf(e.Name())
			if !ok || e.IsDir() || seen[n] {
				continue
			}
			seen[n] = true
			found = append(found, list(filepath.Join(dir, e.Name()), n))
		}
		sort.Slice(found, func(i, j int) bool { return name(found[i]) < name(found[j]) })
		out = append(out, found...)
	}
	return out
}
