package client

import (
	"fmt"
	"io"

	"github.com/aisimulate/aisimulate/core/workload"
)

// Feed reads a workload in source order and hands out requests in the order a
// client needs them. A request "starts" something when it has no session or
// is the first turn of a session not seen before; later turns of a session are
// held until the client asks for them (they are never sent before the previous
// turn is released).
//
// Rows are read ahead only as far as needed: NextStart skips over (and holds)
// later turns of open sessions, and NextTurn reads forward until it finds the
// session's next turn. A generator marks each session's last turn, so nothing is
// read ahead for it; for a trace, the end of a session is only known at the end
// of the file, so a session's last NextTurn reads (and holds) the rest of it.
type Feed struct {
	src    workload.Source
	starts []workload.Request
	head   int
	turns  map[int64][]workload.Request // held later turns by session
	count  map[int64]int                // turns read so far by session
	done   bool
	rows   int // rows read from the source
	// heldTurns counts the rows in turns.
	heldTurns int
	// MaxHeld, when > 0, bounds Held: reading further ahead is a
	// *HeldLimitError (the replay sets it from its memory budget).
	MaxHeld int
	// row is the row being read: the source writes through an interface,
	// so a local would be allocated on the heap for every row.
	row workload.Request
}

// HeldLimitError says the feed would hold more than MaxHeld rows to reach
// the next request it was asked for: later turns of open sessions, read past
// to find a session's start (a generator emits each session's turns before
// the next session's).
type HeldLimitError struct{ Held int }

func (e *HeldLimitError) Error() string {
	return fmt.Sprintf("the workload would be read %d rows ahead (later turns of open sessions) to reach the next session", e.Held)
}

// Rows is the number of rows read from the source so far.
func (f *Feed) Rows() int { return f.rows }

// NewFeed wraps src.
func NewFeed(src workload.Source) *Feed {
	return &Feed{src: src, turns: map[int64][]workload.Request{}, count: map[int64]int{}}
}

// pull reads one row and files it as a start or a held turn. It returns false
// at the end of the source.
func (f *Feed) pull() (bool, error) {
	if f.done {
		return false, nil
	}
	f.row = workload.Request{}
	r := &f.row
	if err := f.src.Next(r); err != nil {
		f.done = true
		if err == io.EOF {
			return false, nil
		}
		return false, err
	}
	f.rows++
	if f.MaxHeld > 0 && f.Held() >= f.MaxHeld {
		f.done = true
		return false, &HeldLimitError{Held: f.Held()}
	}
	if r.SessionID < 0 {
		f.starts = append(f.starts, *r)
		return true, nil
	}
	n, seen := f.count[r.SessionID]
	r.Turn = n
	f.count[r.SessionID] = n + 1
	if !seen {
		f.starts = append(f.starts, *r)
	} else {
		f.turns[r.SessionID] = append(f.turns[r.SessionID], *r)
		f.heldTurns++
	}
	return true, nil
}

// NextStart fills r with the next request that starts something. ok is false
// when the workload has no more.
func (f *Feed) NextStart(r *workload.Request) (ok bool, err error) {
	for f.head == len(f.starts) {
		if ok, err := f.pull(); !ok {
			return false, err
		}
	}
	*r = f.starts[f.head]
	f.starts[f.head] = workload.Request{}
	f.head++
	if f.head == len(f.starts) { // reuse the buffer once drained
		f.starts, f.head = f.starts[:0], 0
	}
	return true, nil
}

// NextTurn fills r with the turn that follows prev in prev's session. ok is
// false when the session has ended (prev.LastTurn, or no further row).
func (f *Feed) NextTurn(prev *workload.Request, r *workload.Request) (ok bool, err error) {
	s := prev.SessionID
	if s < 0 {
		return false, nil
	}
	if !prev.LastTurn {
		for len(f.turns[s]) == 0 {
			if ok, err := f.pull(); !ok {
				if err != nil {
					return false, err
				}
				break
			}
		}
		if q := f.turns[s]; len(q) > 0 {
			*r = q[0]
			f.heldTurns--
			if len(q) == 1 {
				delete(f.turns, s)
			} else {
				f.turns[s] = q[1:]
			}
			return true, nil
		}
	}
	f.heldTurns -= len(f.turns[s])
	delete(f.turns, s)
	delete(f.count, s)
	return false, nil
}

// Open reports whether a row of session id has been read and the session has
// not ended (NextTurn has not returned its end).
func (f *Feed) Open(id int64) bool {
	_, ok := f.count[id]
	return ok
}

// Held is the number of rows read ahead and held (later turns of open
// sessions, starts not yet sent): memory the feed keeps.
func (f *Feed) Held() int { return len(f.starts) - f.head + f.heldTurns }
