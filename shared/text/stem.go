package text

// Stem reduces a lowercase English word to its stem with the original Porter
// algorithm (M.F. Porter, "An algorithm for suffix stripping", 1980), following
// Porter's own reference implementation, which Lucene's PorterStemFilter and
// Anserini's default "porter" analyzer use. That implementation departs from the
// paper in two rules, kept here for the same stems: "bli" -> "ble" (not "abli"
// -> "able") and "logi" -> "log".
//
// Words of one or two letters and words holding anything but ASCII are
// returned unchanged. As in Lucene, ASCII other than a-z (digits, "." or "'"
// inside a token) counts as a consonant: "1990s" stems to "1990".
func Stem(word string) string {
	if len(word) <= 2 {
		return word
	}
	for i := 0; i < len(word); i++ {
		if word[i] >= 0x80 {
			return word
		}
	}
	var buf [32]byte // most words stem without a heap allocation
	s := stemmer{b: append(buf[:0], word...), k: len(word) - 1}
	s.step1ab()
	if s.k > 0 {
		s.step1c()
		s.step2()
		s.step3()
		s.step4()
		s.step5()
	}
	stem := s.b[:s.k+1]
	if len(stem) <= len(word) && string(stem) == word[:len(stem)] {
		return word[:len(stem)] // most stems only drop a suffix: no copy
	}
	return string(stem)
}

// stemmer holds the word being stemmed: b[0..k] is the current word, and j
// marks the end of the stem before a suffix [stemmer.ends] matched.
type stemmer struct {
	b    []byte
	k, j int
}

// cons reports whether b[i] is a consonant.
func (s *stemmer) cons(i int) bool {
	switch s.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		if i == 0 {
			return true
		}
		return !s.cons(i - 1)
	}
	return true
}

// m counts the consonant-vowel sequences in b[0..j]: for <c>(vc)^m<v>, m.
func (s *stemmer) m() int {
	n, i := 0, 0
	for {
		if i > s.j {
			return n
		}
		if !s.cons(i) {
			break
		}
		i++
	}
	i++
	for {
		for {
			if i > s.j {
				return n
			}
			if s.cons(i) {
				break
			}
			i++
		}
		i++
		n++
		for {
			if i > s.j {
				return n
			}
			if !s.cons(i) {
				break
			}
			i++
		}
		i++
	}
}

// vowelInStem reports whether b[0..j] contains a vowel.
func (s *stemmer) vowelInStem() bool {
	for i := 0; i <= s.j; i++ {
		if !s.cons(i) {
			return true
		}
	}
	return false
}

// doublec reports whether b[j-1..j] is a double consonant.
func (s *stemmer) doublec(j int) bool {
	if j < 1 || s.b[j] != s.b[j-1] {
		return false
	}
	return s.cons(j)
}

// cvc reports whether b[i-2..i] is consonant-vowel-consonant and the last is
// not w, x or y: the condition for restoring an e (cav(e), lov(e), hop(e)).
func (s *stemmer) cvc(i int) bool {
	if i < 2 || !s.cons(i) || s.cons(i-1) || !s.cons(i-2) {
		return false
	}
	switch s.b[i] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

// ends reports whether b[0..k] ends with suffix, and if so sets j before it.
func (s *stemmer) ends(suffix string) bool {
	n := len(suffix)
	if n > s.k+1 || string(s.b[s.k-n+1:s.k+1]) != suffix {
		return false
	}
	s.j = s.k - n
	return true
}

// setTo replaces b[j+1..k] with str. It writes in place when b has room,
// so that b can live on Stem's stack.
func (s *stemmer) setTo(str string) {
	n := s.j + 1 + len(str)
	if n > cap(s.b) {
		s.b = append(make([]byte, 0, n), s.b[:s.j+1]...)
	}
	s.b = s.b[:n]
	copy(s.b[s.j+1:], str)
	s.k = n - 1
}

// r replaces the matched suffix with str when the stem's measure is positive.
func (s *stemmer) r(str string) {
	if s.m() > 0 {
		s.setTo(str)
	}
}

// step1ab removes plurals and -ed or -ing.
func (s *stemmer) step1ab() {
	if s.b[s.k] == 's' {
		switch {
		case s.ends("sses"):
			s.k -= 2
		case s.ends("ies"):
			s.setTo("i")
		case s.b[s.k-1] != 's':
			s.k--
		}
	}
	if s.ends("eed") {
		if s.m() > 0 {
			s.k--
		}
	} else if (s.ends("ed") || s.ends("ing")) && s.vowelInStem() {
		s.k = s.j
		switch {
		case s.ends("at"):
			s.setTo("ate")
		case s.ends("bl"):
			s.setTo("ble")
		case s.ends("iz"):
			s.setTo("ize")
		case s.doublec(s.k):
			s.k--
			switch s.b[s.k] {
			case 'l', 's', 'z':
				s.k++
			}
		default:
			s.j = s.k
			if s.m() == 1 && s.cvc(s.k) {
				s.setTo("e")
			}
		}
	}
}

// step1c turns a terminal y into i when there is another vowel in the stem.
func (s *stemmer) step1c() {
	if s.ends("y") && s.vowelInStem() {
		s.b[s.k] = 'i'
	}
}

// replaceFirst applies the first rule whose suffix matches (and only it),
// replacing the suffix when the stem's measure is positive.
func (s *stemmer) replaceFirst(rules [][2]string) {
	for _, rule := range rules {
		if s.ends(rule[0]) {
			s.r(rule[1])
			return
		}
	}
}

var step2Rules = map[byte][][2]string{
	'a': {{"ational", "ate"}, {"tional", "tion"}},
	'c': {{"enci", "ence"}, {"anci", "ance"}},
	'e': {{"izer", "ize"}},
	'l': {{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"}},
	'o': {{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}},
	's': {{"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"}},
	't': {{"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"}},
	'g': {{"logi", "log"}},
}

// step2 maps double suffixes to single ones (-ization -> -ize, ...).
func (s *stemmer) step2() {
	if s.k < 1 {
		return
	}
	s.replaceFirst(step2Rules[s.b[s.k-1]])
}

var step3Rules = map[byte][][2]string{
	'e': {{"icate", "ic"}, {"ative", ""}, {"alize", "al"}},
	'i': {{"iciti", "ic"}},
	'l': {{"ical", "ic"}, {"ful", ""}},
	's': {{"ness", ""}},
}

// step3 deals with -ic-, -full, -ness etc.
func (s *stemmer) step3() {
	s.replaceFirst(step3Rules[s.b[s.k]])
}

var step4Suffixes = map[byte][]string{
	'a': {"al"},
	'c': {"ance", "ence"},
	'e': {"er"},
	'i': {"ic"},
	'l': {"able", "ible"},
	'n': {"ant", "ement", "ment", "ent"},
	'o': {"ion", "ou"},
	's': {"ism"},
	't': {"ate", "iti"},
	'u': {"ous"},
	'v': {"ive"},
	'z': {"ize"},
}

// step4 removes -ant, -ence etc. in context <c>vcvc<v>.
func (s *stemmer) step4() {
	if s.k < 1 {
		return
	}
	for _, suf := range step4Suffixes[s.b[s.k-1]] {
		if !s.ends(suf) {
			continue
		}
		if suf == "ion" && (s.j < 0 || s.b[s.j] != 's' && s.b[s.j] != 't') {
			continue
		}
		if s.m() > 1 {
			s.k = s.j
		}
		return
	}
}

// step5 removes a final -e when the measure allows, and turns -ll into -l.
func (s *stemmer) step5() {
	s.j = s.k
	if s.b[s.k] == 'e' {
		a := s.m()
		if a > 1 || a == 1 && !s.cvc(s.k-1) {
			s.k--
		}
	}
	if s.b[s.k] == 'l' && s.doublec(s.k) && s.m() > 1 {
		s.k--
	}
}
