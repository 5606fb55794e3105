package connector

import "sync"

// maxMemo bounds the entries of a [memo].
const maxMemo = 1024

// memo keeps what a warm instance decoded or opened, by a key that names
// exactly what it came from, so that the next call need not do it again.
// It holds at most [maxMemo] entries: when full, it starts again empty
// (every entry can be made again from the table). Safe for concurrent use.
type memo[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

func (m *memo[V]) get(k string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[k]
	return v, ok
}

func (m *memo[V]) put(k string, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= maxMemo {
		m.m = make(map[string]V)
	}
	m.m[k] = v
}
