package vllm

// deque is a FIFO of requests that also takes pushes at the front (a preempted
// request goes back to the head of the waiting queue). Ring buffer: O(1) both ends.
type deque struct {
	buf  []*Request
	head int
	n    int
}

func (d *deque) Len() int { return d.n }

func (d *deque) grow() {
	nb := make([]*Request, max(16, 2*len(d.buf)))
	for i := 0; i < d.n; i++ {
		nb[i] = d.buf[(d.head+i)%len(d.buf)]
	}
	d.buf, d.head = nb, 0
}

func (d *deque) PushBack(r *Request) {
	if d.n == len(d.buf) {
		d.grow()
	}
	d.buf[(d.head+d.n)%len(d.buf)] = r
	d.n++
}

func (d *deque) PushFront(r *Request) {
	if d.n == len(d.buf) {
		d.grow()
	}
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = r
	d.n++
}

func (d *deque) Front() *Request { return d.buf[d.head] }

func (d *deque) PopFront() *Request {
	r := d.buf[d.head]
	d.buf[d.head] = nil
	d.head = (d.head + 1) % len(d.buf)
	d.n--
	return r
}

// remove deletes r (O(n): only an aborted request leaves from the middle).
func (d *deque) remove(r *Request) {
	for i := 0; i < d.n; i++ {
		if d.buf[(d.head+i)%len(d.buf)] != r {
			continue
		}
		for j := i; j < d.n-1; j++ {
			d.buf[(d.head+j)%len(d.buf)] = d.buf[(d.head+j+1)%len(d.buf)]
		}
		d.buf[(d.head+d.n-1)%len(d.buf)] = nil
		d.n--
		return
	}
	panic("engine: request not in the queue")
}
