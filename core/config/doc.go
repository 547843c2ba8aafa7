// Package config is the replay spec: its Go types, its defaults, strict decoding
// and validation.
//
// Read first:
//   - spec.go: Spec and one struct per section (engine, traffic, execution); the
//     JSON/YAML keys are a contract with the Python package and the docs.
//   - defaults.go: every default of every optional field, with its reason, and
//     the magnitude limits; nothing else in the project restates a default.
//   - decode.go: Decode / DecodeYAML / DecodeFile: strict decoding (an unknown
//     field, a wrong type, an empty string or a non-finite number is an *Error
//     naming its dotted path), defaults filled only where the input was silent.
//   - validate.go: ranges, enumerations, combinations, and magnitudes that keep
//     every time inside the int64-ns clock.
//
// Errors are *Error{Field, Msg}; Python's ConfigError carries the same Field.
package config
