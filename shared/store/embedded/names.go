package embedded

import (
	"sync"
	"sync/atomic"
)

// maxNames bounds how many attribute names [attrName] keeps.
const maxNames = 1024

var (
	// names maps the attribute names seen so far to themselves: a table's
	// items share a handful of names, so decoding an item need not allocate
	// each of them again. The map is replaced, never changed, so that
	// readers need no lock.
	names   atomic.Pointer[map[string]string]
	namesMu sync.Mutex
)

// attrName returns b as a string, shared with earlier calls for the same name.
func attrName(b []byte) string {
	if m := names.Load(); m != nil {
		if s, ok := (*m)[string(b)]; ok {
			return s
		}
	}
	s := string(b)
	namesMu.Lock()
	defer namesMu.Unlock()
	var next map[string]string
	if m := names.Load(); m == nil {
		next = map[string]string{s: s}
	} else if len(*m) < maxNames {
		next = make(map[string]string, len(*m)+1)
		for k, v := range *m {
			next[k] = v
		}
		next[s] = s
	} else {
		return s
	}
	names.Store(&next)
	return s
}
