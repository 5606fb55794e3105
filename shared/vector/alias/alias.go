// Package alias is the rule a vector store's alias follows: package
// vector/query checks the aliases a search names with it, and package
// settings those a thread's settings name, without linking the stores'
// code.
//
//	if !alias.Valid(name) { ... } // 1-64 of a-z, 0-9, '_', '-', not starting with '_' or '-'
package alias

// Pattern is what a store alias matches, as the tools' schemas publish it.
const Pattern = `^[a-z0-9][a-z0-9_-]{0,63}$`

// Valid reports whether s matches [Pattern], checked byte by byte:
// compiling the pattern, whose {0,63} the regexp package unrolls, took
// about 0.2 ms of the cold start of every bootstrap that checked aliases.
func Valid(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := range len(s) {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case i > 0 && (c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}
