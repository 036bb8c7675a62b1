package facts

// FirstLast keeps the first and the last halves of a stream of records of
// unknown length, at most Max in all, and counts the ones between: what a
// parser keeps of a source that may hold millions of records (probes, memory
// snapshots). The zero value keeps nothing; set Max first.
type FirstLast[T any] struct {
	Max        int
	head, ring []T
	next       int // where the ring's next record goes, once it is full
	Dropped    int
}

// Add keeps v, or, once both halves are full, puts it in place of the
// oldest of the last half.
func (k *FirstLast[T]) Add(v T) {
	switch {
	case len(k.head) < k.Max/2:
		k.head = append(k.head, v)
	case len(k.ring) < k.Max-k.Max/2:
		k.ring = append(k.ring, v)
	default:
		k.ring[k.next] = v
		k.next = (k.next + 1) % len(k.ring)
		k.Dropped++
	}
}

// All returns the kept records in the order they came.
func (k *FirstLast[T]) All() []T {
	out := make([]T, 0, len(k.head)+len(k.ring))
	out = append(out, k.head...)
	out = append(out, k.ring[k.next:]...)
	return append(out, k.ring[:k.next]...)
}

// Kept says how many of the first and of the last records are kept.
func (k *FirstLast[T]) Kept() (first, last int) { return len(k.head), len(k.ring) }
