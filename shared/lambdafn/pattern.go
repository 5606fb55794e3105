package lambdafn

import (
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// matcher matches a string, as the bytes of its UTF-8, against a schema's
// pattern.
type matcher interface{ Match(b []byte) bool }

// compilePattern compiles a schema's pattern as jsonschema-go does (Go's
// regexp syntax, unanchored unless the pattern anchors itself), as a
// [classPattern] where it is one: the catalog's ids have patterns such as
// ^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$, which the regexp package compiles
// into a program of hundreds of instructions, at 0.1 to 0.6 ms a pattern on
// the first call of a tool.
func compilePattern(p string) (matcher, error) {
	if c, ok := parseClassPattern(p); ok {
		return c, nil
	}
	return regexp.Compile(p)
}

// classPattern is an anchored sequence of parts that each match one
// character of a class a fixed number of times, but for at most one part,
// which matches a range of times: the length of a string then says how many
// times each part matches, and matching is one pass over its characters.
type classPattern struct {
	parts []classPart
	fixed int // characters the parts match at the least
	vary  int // the part with a range of times, or -1
}

type classPart struct {
	ranges   []rune // inclusive pairs lo, hi, as regexp/syntax gives a class
	min, max int
}

// parseClassPattern parses p as a [classPattern], or reports that it is not
// one.
func parseClassPattern(p string) (*classPattern, bool) {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil || re.Op != syntax.OpConcat || len(re.Sub) < 3 ||
		re.Sub[0].Op != syntax.OpBeginText || re.Sub[len(re.Sub)-1].Op != syntax.OpEndText {
		return nil, false
	}
	c := &classPattern{vary: -1}
	add := func(part classPart) bool {
		if part.min < 0 || part.max < part.min {
			return false // unbounded ({n,}) or malformed
		}
		if part.max != part.min {
			if c.vary >= 0 {
				return false
			}
			c.vary = len(c.parts)
		}
		c.fixed += part.min
		c.parts = append(c.parts, part)
		return true
	}
	for _, s := range re.Sub[1 : len(re.Sub)-1] {
		min, max := 1, 1
		if s.Op == syntax.OpRepeat {
			min, max, s = s.Min, s.Max, s.Sub[0]
		}
		if s.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		switch {
		case s.Op == syntax.OpCharClass:
			if !add(classPart{ranges: s.Rune, min: min, max: max}) {
				return nil, false
			}
		case s.Op == syntax.OpLiteral && (len(s.Rune) == 1 || min == 1 && max == 1):
			for _, r := range s.Rune {
				if !add(classPart{ranges: []rune{r, r}, min: min, max: max}) {
					return nil, false
				}
			}
		default:
			return nil, false
		}
	}
	return c, true
}

// Match reports whether the string b matches the whole pattern.
func (c *classPattern) Match(b []byte) bool {
	extra := utf8.RuneCount(b) - c.fixed
	if extra < 0 || extra > 0 && (c.vary < 0 || extra > c.parts[c.vary].max-c.parts[c.vary].min) {
		return false
	}
	// The parts' times add up to the length of b: each character has a part.
	part, left := -1, 0
	for _, r := range string(b) {
		for left == 0 {
			part++
			left = c.parts[part].min
			if part == c.vary {
				left += extra
			}
		}
		if !inRanges(c.parts[part].ranges, r) {
			return false
		}
		left--
	}
	return true
}

func inRanges(ranges []rune, r rune) bool {
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i] <= r && r <= ranges[i+1] {
			return true
		}
	}
	return false
}
