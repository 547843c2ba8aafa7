package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// variant is one alternative of a discriminated block: the value of the
// block's key that selects it, and a zero value of its struct type.
type variant struct {
	name string
	zero any
}

// union describes a discriminated block (variants.go).
type union struct {
	key      string // the discriminating field: "source", "type", "mode", "kind"
	def      string // the variant when the key is absent; "" means the key is required
	variants []variant
}

// unionBlock is a spec block that holds one variant of a union: *Perf,
// *Source, *Load and *Length. Its own fields (Load's client fields) sit beside
// the variant's; its variant field is tagged json:"-".
type unionBlock interface {
	unionOf() (*union, any)
	setVariant(v any)
}

// names lists the allowed values of the key, in documentation order.
func (u *union) names() []string {
	out := make([]string, len(u.variants))
	for i, v := range u.variants {
		out[i] = v.name
	}
	return out
}

// nameOf is the key's value for variant value v, or "" (nil or not a variant).
func (u *union) nameOf(v any) string {
	if v == nil {
		return ""
	}
	t := reflect.TypeOf(v)
	for _, x := range u.variants {
		if reflect.TypeOf(x.zero) == t {
			return x.name
		}
	}
	return ""
}

func (u *union) typeOf(name string) (reflect.Type, bool) {
	for _, x := range u.variants {
		if x.name == name {
			return reflect.TypeOf(x.zero), true
		}
	}
	return nil, false
}

// required is the error for a block without its key.
func (u *union) required(path string) error {
	return errorf(join(path, u.key), "is required (one of %s)", strings.Join(u.names(), ", "))
}

// marshalUnion writes {"<key>": name, <the variant's fields>, <common's fields>}.
func marshalUnion(u *union, v any, common any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	if name := u.nameOf(v); name != "" {
		b.WriteString(`"` + u.key + `":`)
		q, _ := json.Marshal(name)
		b.Write(q)
	} else if v != nil {
		return nil, fmt.Errorf("config: %T is not a variant of %s", v, u.key)
	}
	for _, part := range []any{v, common} {
		if part == nil {
			continue
		}
		inner, err := json.Marshal(part)
		if err != nil {
			return nil, err
		}
		inner = bytes.TrimSuffix(bytes.TrimPrefix(inner, []byte("{")), []byte("}"))
		if len(inner) == 0 {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.Write(inner)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// fieldsOf maps each JSON key of struct type t to its field index (fields
// tagged "-" are left out), and lists the keys in order.
func fieldsOf(t reflect.Type) (map[string]int, []string) {
	idx := map[string]int{}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		name := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]
		if name == "-" || name == "" {
			continue
		}
		idx[name] = i
		names = append(names, name)
	}
	return idx, names
}

// decodeUnion decodes mapping m at path into block b (whose struct value is
// v): the key picks the variant; every other key is a field of that variant or
// of the block itself. A field of another variant is refused with the variants
// it belongs to; a required field (tag spec:"required") that is absent is
// refused with the variant that requires it.
func decodeUnion(m map[string]any, b unionBlock, v reflect.Value, path string, seen map[string]bool) error {
	u, _ := b.unionOf()
	name := u.def
	if raw, ok := m[u.key]; ok && raw != nil { // a null key is the key left out: the default variant, or required
		seen[join(path, u.key)] = true
		s, isString := raw.(string)
		switch {
		case !isString:
			return errorf(join(path, u.key), "expected a string, got %s", describe(raw))
		case s == "":
			return errorf(join(path, u.key), "must not be empty (leave the field out for its default)")
		}
		name = s
	}
	if name == "" {
		if k := u.strayKey(m, v.Type()); k != "" { // a misspelt key is the likelier mistake: name it
			return errorf(join(path, clip(k)), "unknown field, and %s is missing (one of %s)", u.key, strings.Join(u.names(), ", "))
		}
		return u.required(path)
	}
	vt, ok := u.typeOf(name)
	if !ok {
		return errorf(join(path, u.key), "%s is not supported (one of %s)", quote(name), strings.Join(u.names(), ", "))
	}
	out := reflect.New(vt).Elem()
	own, ownNames := fieldsOf(vt)
	common, commonNames := fieldsOf(v.Type())
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != u.key {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys) // deterministic: the first bad key in sorted order is reported
	for _, k := range keys {
		p := join(path, k)
		if i, ok := own[k]; ok {
			if nullEnum(vt, k, m[k]) {
				continue
			}
			if err := decodeValue(m[k], out.Field(i), p, seen); err != nil {
				return err
			}
			continue
		}
		if i, ok := common[k]; ok {
			if nullEnum(v.Type(), k, m[k]) {
				continue
			}
			if err := decodeValue(m[k], v.Field(i), p, seen); err != nil {
				return err
			}
			continue
		}
		if owners := u.owners(k); len(owners) > 0 {
			if u.nullLeftOut(k, m[k]) { // context_mode: null on a synthetic source: left out
				continue
			}
			return errorf(p, "belongs to %s %s, not %s", u.key, orList(owners), name)
		}
		known := append(append([]string{u.key}, ownNames...), commonNames...)
		return unknownField(v.Type(), path, k, known)
	}
	for i := 0; i < vt.NumField(); i++ {
		f := vt.Field(i)
		key := strings.Split(f.Tag.Get("json"), ",")[0]
		if f.Tag.Get("spec") == "required" && !seen[join(path, key)] {
			return errorf(join(path, key), "is required for %s %s", u.key, name)
		}
	}
	b.setVariant(out.Interface())
	return nil
}

// nullLeftOut reports whether raw, the value of key, is a null that a variant
// having that field takes as the field left out (nullField), so that it is
// left out on every variant, not refused as another variant's field.
func (u *union) nullLeftOut(key string, raw any) bool {
	if raw != nil {
		return false
	}
	for _, x := range u.variants {
		t := reflect.TypeOf(x.zero)
		if idx, _ := fieldsOf(t); hasKey(idx, key) && nullField(t, t.Field(idx[key])) {
			return true
		}
	}
	return false
}

// owners lists the variants that have field key, in table order.
func (u *union) owners(key string) []string {
	var out []string
	for _, x := range u.variants {
		if fields, _ := fieldsOf(reflect.TypeOf(x.zero)); hasKey(fields, key) {
			out = append(out, x.name)
		}
	}
	return out
}

func hasKey(m map[string]int, k string) bool { _, ok := m[k]; return ok }

// orList writes "a", "a or b", "a, b or c".
func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// strayKey is the first key of m, in sorted order, that neither the block
// (struct type common) nor any variant has, or "".
func (u *union) strayKey(m map[string]any, common reflect.Type) string {
	own, _ := fieldsOf(common)
	keys := make([]string, 0, len(m))
	for k := range m {
		if _, ok := own[k]; !ok && k != u.key && len(u.owners(k)) == 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	sort.Strings(keys)
	return keys[0]
}
