// Package config is the replay spec: its Go types, its defaults, strict decoding
// and validation.
//
// Read first:
//   - spec.go: Spec and one struct per section (engine, traffic, execution); the
//     JSON/YAML keys are a contract with the Python package and the docs.
//   - variants.go: the discriminated blocks, each variant a struct of its own
//     held by a sealed interface: engine.perf (source), traffic.source (type),
//     traffic.load (mode) and token-length distributions (kind); each
//     variant's validation; the variant tables, the one list of each key's
//     values. union.go decodes and encodes them.
//   - values.go: the allowed values of every enumerated field, listed once;
//     Enums hands them to the Python compiler.
//   - defaults.go: every default of every optional field, with its evidence,
//     and the magnitude limits; nothing else in the project restates a default.
//     A decoded spec has every default filled (its JSON says what will run).
//   - decode.go: Decode / DecodeYAML / DecodeFile: strict decoding (an unknown
//     field, a field of another variant, a wrong type, an empty string or a
//     non-finite number is an *Error naming its dotted path), defaults filled
//     only where the input was silent; ResolvePaths, the one rule for the
//     spec's file paths.
//   - validate.go: ranges, enumerations, combinations, and magnitudes that keep
//     every time inside the int64-ns clock.
//   - clone.go: Clone, a deep copy (replay.Run works on one, so the caller's
//     spec never changes).
//
// Errors are *Error{Field, Msg}; Python's ConfigError carries the same Field.
//
// Adding a variant (a perf source, a traffic source, a load mode, a length
// kind): its struct and validate method in variants.go, its row in the table
// there; the decoder, the encoder, Enums and the cross-variant checks follow
// from the table, and core/replay's TestEveryListedValueHasABuilder fails until
// the replay builds it.
package config
