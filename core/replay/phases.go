package replay

// Phases order the events that share a timestamp (docs/design.md, "Time and determinism"). Lower runs first.
const (
	// phasePassEnd comes first: tokens, completions and freed KV of a pass that
	// ends at t are visible to everything else that happens at t.
	phasePassEnd uint8 = iota
	// phaseTransfer: a KV transfer that ends at t (P/D) can feed a pass starting at t.
	phaseTransfer
	// phaseClientReceive: outputs reach the client after the engine produced them.
	phaseClientReceive
	// phaseClientAction: the client acts on a finished response (releasing a
	// closed-loop slot) after it has received it.
	phaseClientAction
	// phaseArrival: requests sent or arriving at t join the waiting queues before
	// the passes that start at t are formed.
	phaseArrival
	phaseCount // the number of phases
)

// Pass starts are not events: after every event at t has run, each idle worker
// with work forms a pass, in worker order. They are therefore the last phase.
