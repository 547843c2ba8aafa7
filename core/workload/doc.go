// Package workload produces the requests a replay sends and the times it sends
// them: trace readers, a synthetic generator, arrival processes, the named
// random streams they draw from, and the re-blocking of trace prefix ids into
// engine block hashes (docs/design.md, "The workload").
//
// # Reading order
//
//  1. request.go — Request (one request, in source order), the Source
//     interface every reader and generator implements (Next fills a Request,
//     io.EOF at the end, streaming), and DataError ("file:line: field: msg").
//  2. mooncake.go, azure.go, llmservingsim.go — the trace readers:
//     OpenMooncake (JSONL with hash_ids of 512 or any number of tokens), OpenAzure (CSV found by
//     header names) and OpenLLMServingSim (JSONL with every prompt's token
//     ids, hashed per token so shared prefixes hit exactly as in vLLM). All
//     stream row by row and reject bad rows with a DataError; a missing output
//     length is an error, never a silent zero. jsonl.go holds the JSONL line
//     reading, number.go the shared integer-count parsing.
//  3. arrival.go — the Arrival interface (next send time in ns) and its
//     processes Constant, Poisson and Gamma, plus TraceArrival, which maps
//     trace timestamps through a speed-up factor.
//  4. synthetic.go — NewSynthetic and the sampling of a token-length
//     distribution (fixed, uniform, normal, lognormal); dataset.go — a load
//     generator's prompt dataset (entries sent again and again: sequential,
//     random or shuffle). The generators take their spec blocks
//     (config.SyntheticSource, config.SessionsSource, config.Length,
//     config.Dataset) and validate them with config's rules: one rule for the
//     spec and the generator.
//  5. streams.go — Streams: one deterministic generator per named subsystem
//     ("isl", "osl", "dataset", "arrival"), derived from the run seed.
//  6. blockhash.go — BlockHashes: a request's source hash ids re-blocked into
//     the chain of hashes of its full engine blocks, for the prefix cache.
//
// # Extension points
//
// Source (Next(*Request) error) and Arrival (Next() (int64, bool)) are the
// only interfaces; a new trace format or arrival law implements one of them
// and asserts it at compile time.
//
// # Contracts
//
//   - W1 Streaming: readers keep O(longest line) memory, never the whole trace
//     (TestMooncake_StreamsMillionRows).
//   - W2 No silent zeros: every malformed or missing value is a *DataError
//     naming file, line and field; readers never panic
//     (TestMooncake_Errors, TestAzure_Errors, FuzzMooncake, FuzzAzure).
//   - W3 Time order: trace Timestamps (of the rows that have one) and Arrival
//     send times never decrease, and a trace's first timestamp is its time
//     origin, 0 (TestMooncake_Errors, TestAzure_Errors, TestMooncake_Parse,
//     TestTraceArrival_MonotonicProperty, the arrival statistics tests and the
//     fuzz targets); docs/traces.md.
//   - W4 Stream independence: draws on one named stream never shift another
//     (TestSynthetic_OSLStreamDoesNotShiftISL).
//   - W5 Block hashes: two requests share engine block j iff their source ids
//     over tokens [0, (j+1)·bs) agree (TestBlockHashes_*, FuzzBlockHashes).
//   - W6 Datasets: a synthetic dataset's requests send its entries in the
//     sampling's order (shuffle: every entry once per pass), each with the
//     lengths its entry was drawn with, and share prompt blocks iff they send
//     the same entry (TestDataset_*).
//
// Units: times are int64 ns, lengths are tokens, rates are requests/s.
//
// Of the aisimulate packages this one imports only core/config, a leaf
// (TestStatic_NoProjectImports); the engine and replay sit above it.
package workload
