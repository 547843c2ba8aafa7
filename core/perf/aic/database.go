package aic

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Table names, as the parquet files are named.
const (
	TableGEMM                = "gemm_perf"
	TableContextAttention    = "context_attention_perf"
	TableGenerationAttention = "generation_attention_perf"
	TableAllReduce           = "custom_allreduce_perf"
)

// tableFamily is the op-family folder of each table.
var tableFamily = map[string]string{
	TableGEMM:                "gemm",
	TableContextAttention:    "attention",
	TableGenerationAttention: "attention",
	TableAllReduce:           "comm",
	TableMoE:                 "moe",
	TableNCCL:                "comm",
}

// Source says which file priced one table: the version asked for, the
// version whose folder was chosen (nearest), the version whose file was read
// (after reuse.yaml), and why if they differ.
type Source struct {
	Table     string `json:"table"`
	Requested string `json:"requested_version"`
	Version   string `json:"version"`
	ReadFrom  string `json:"read_from_version"`
	Path      string `json:"path"`
	Note      string `json:"note,omitempty"`
}

// systemDir finds the folder of one system's tables under the database
// root. The root may be the AIConfigurator systems folder (holding
// data/<system>) or its parent (holding systems/data/<system>).
func systemDir(root, system string) (string, error) {
	for _, dir := range []string{
		filepath.Join(root, "data", system),
		filepath.Join(root, "systems", "data", system),
	} {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir, nil
		}
	}
	return "", fmt.Errorf("aic: database %s has no tables for system %s (looked for data/%s and systems/data/%s)",
		root, system, system, system)
}

// reuseFile is a version folder's reuse.yaml: tables that are read from
// another version's folder.
type reuseFile struct {
	Reuse []struct {
		Table       string `yaml:"table"`
		FromVersion string `yaml:"from_version"`
		Reason      string `yaml:"reason"`
	} `yaml:"reuse"`
}

// readReuse returns table → from_version of dir/reuse.yaml (empty when the
// file does not exist). Errors name the file.
func readReuse(dir string) (map[string]string, error) {
	p := filepath.Join(dir, "reuse.yaml")
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("aic: %w", err)
	}
	var r reuseFile
	if err := yaml.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("aic: %s: %w", p, err)
	}
	out := map[string]string{}
	for _, e := range r.Reuse {
		if e.Table == "" || e.FromVersion == "" {
			return nil, fmt.Errorf("aic: %s: a reuse entry needs table and from_version", p)
		}
		out[e.Table] = e.FromVersion
	}
	return out, nil
}

// resolveFile maps (version folder, table) to a parquet path, following
// reuse.yaml redirects (a redirect wins over a file in the same folder: the
// local file may be a partial collection). Chains are followed up to 4 hops.
// ok is false when neither a file nor a redirect exists.
func resolveFile(familyDir, ver, table string) (path, readFrom string, ok bool, err error) {
	cur := ver
	for hop := 0; hop < 4; hop++ {
		dir := filepath.Join(familyDir, cur)
		redirect, err := readReuse(dir)
		if err != nil {
			return "", "", false, err
		}
		if to, has := redirect[table]; has && to != cur {
			cur = to
			continue
		}
		p := filepath.Join(dir, table+".parquet")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, cur, true, nil
		}
		return "", "", false, nil
	}
	return "", "", false, fmt.Errorf("aic: %s: reuse.yaml redirects for %s loop beyond 4 hops from %s", familyDir, table, ver)
}

// locate picks the file of one table for a system, backend and version: the
// requested version when its folder provides the table (directly or through
// reuse.yaml), else the nearest version that does, skipping knownBad
// entries; want "" asks for the newest (and the Source requests none).
// Errors: no version of the table at all, or a bad version string.
func locate(sysDir, system, backend, want, table string) (Source, error) {
	return locateExcept(sysDir, system, backend, want, table, nil)
}

// locateExcept is locate that also skips the versions (read-from folder
// names) in exclude, each with its reason: tables found implausible once
// loaded (see plausibleLowPrecision). The reasons join the note.
func locateExcept(sysDir, system, backend, want, table string, exclude map[string]string) (Source, error) {
	src := Source{Table: table, Requested: want}
	newest := want == ""
	if newest {
		want = newestVersion
	}
	w, err := parseVersion(want)
	if err != nil {
		return src, err
	}
	familyDir := filepath.Join(sysDir, tableFamily[table], backend)
	entries, err := os.ReadDir(familyDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return src, missingFamily(sysDir, system, backend, tableFamily[table])
		}
		return src, fmt.Errorf("aic: no %s tables for %s/%s: %w", tableFamily[table], system, backend, err)
	}
	type cand struct {
		v              version
		path, readFrom string
	}
	var cands []cand
	var versions []version
	var skipped []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		v, err := parseVersion(e.Name())
		if err != nil {
			continue // not a version folder
		}
		p, from, ok, err := resolveFile(familyDir, e.Name(), table)
		if err != nil {
			return src, err
		}
		if !ok {
			continue
		}
		if why, bad := knownBad[system+"/"+table+"/"+from]; bad {
			skipped = append(skipped, fmt.Sprintf("%s skipped: %s", from, why))
			continue
		}
		if why, bad := exclude[from]; bad {
			skipped = append(skipped, fmt.Sprintf("%s skipped: %s", from, why))
			continue
		}
		cands = append(cands, cand{v, p, from})
		versions = append(versions, v)
	}
	best, ok := nearestVersion(w, versions)
	if !ok {
		return src, fmt.Errorf("aic: no %s table for %s/%s in %s", table, system, backend, familyDir)
	}
	for _, c := range cands {
		if c.v.Raw == best.Raw {
			src.Version, src.ReadFrom, src.Path = c.v.Raw, c.readFrom, c.path
		}
	}
	sort.Strings(skipped)
	skipped = dedupe(skipped)
	var note string
	if src.Version != want && !newest {
		note = fmt.Sprintf("version %s has no usable %s; nearest %s used", want, table, src.Version)
	}
	if src.ReadFrom != src.Version {
		note = joinNote(note, fmt.Sprintf("%s redirects %s to %s (reuse.yaml)", src.Version, table, src.ReadFrom))
	}
	for _, s := range skipped {
		note = joinNote(note, s)
	}
	src.Note = note
	return src, nil
}

// dedupe drops repeated entries of a sorted slice (a version redirected to
// by another folder's reuse.yaml is skipped once per folder).
func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// missingFamily is the error of a system whose database has no folder of
// family's tables for backend (sysDir/family/backend): the engines whose
// tables of that family it has, and the ways on (the roofline, which needs no
// tables, or a system that has them: `aisimulate systems`).
func missingFamily(sysDir, system, backend, family string) error {
	var have []string
	if entries, err := os.ReadDir(filepath.Join(sysDir, family)); err == nil {
		for _, e := range entries {
			if e.IsDir() {
				have = append(have, e.Name())
			}
		}
	}
	sort.Strings(have)
	has := "none of any engine"
	if len(have) > 0 {
		has = "only " + strings.Join(have, ", ") + "'s"
	}
	return fmt.Errorf("aic: the kernel tables of %s have no %s tables of engine %s (%s, in %s): "+
		"use engine.perf.source roofline, which needs no tables, or a system whose tables have them",
		system, family, backend, has, filepath.Join(sysDir, family))
}
