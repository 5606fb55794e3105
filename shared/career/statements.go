package career

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// statement is an atom found in a resume.
type statement struct{ section, text string }

// Section names a resume may head a part with, by what the part holds: the
// accomplishments and skills atoms come from, or anything else. A heading is
// a section name when, without the qualifiers below and a final colon, it is
// one of these or two joined by "and" or "&" ("Skills & Tools").
var (
	atomSectionNames = set("experience", "experiences", "employment", "employment history", "work history",
		"career history", "history", "project", "projects", "open source", "portfolio", "skill", "skills",
		"competence", "competencies", "expertise", "qualification", "qualifications", "technology",
		"technologies", "tools", "tech stack", "stack", "leadership", "accomplishment", "accomplishments",
		"achievement", "achievements", "highlight", "highlights", "contributions")
	otherSectionNames = set("education", "summary", "profile", "objective", "about", "about me", "contact",
		"contact details", "contact information", "personal details", "interests", "hobbies", "languages",
		"certification", "certifications", "certificates", "award", "awards", "honors", "honours",
		"publications", "references", "volunteering", "volunteer work", "training", "courses", "activities")
	sectionQualifiers = set("work", "professional", "relevant", "technical", "core", "key", "selected", "other",
		"additional", "career", "industry", "research", "teaching", "personal", "recent")
)

// The kinds of heading, for deciding whether the text under it yields atoms.
const (
	neutral  = iota // a name, a job, a company: its section decides
	holds           // experience, skills, ...
	excludes        // education, summary, ...
)

// sectionKind returns the kind of a heading and whether it is a section name.
func sectionKind(h string) (kind int, named bool) {
	h = strings.Join(strings.Fields(strings.ToLower(strings.TrimSuffix(strings.TrimSpace(h), ":"))), " ")
	kind = excludes
	parts := strings.SplitN(strings.ReplaceAll(h, " & ", " and "), " and ", 2)
	for _, p := range parts {
		f := strings.Fields(p)
		for len(f) > 1 && sectionQualifiers[f[0]] {
			f = f[1:]
		}
		name := strings.Join(f, " ")
		switch {
		case atomSectionNames[name]:
			kind = holds
		case !otherSectionNames[name]:
			if hasAtomWord(h) {
				return holds, false
			}
			return neutral, false
		}
	}
	return kind, true
}

// heading is one entry of the path of headings a line sits under.
type heading struct {
	level    int
	text     string
	markdown bool // a Markdown heading (#, or underlined), not one recognised in plain text
}

// extractor walks a resume's lines, keeping the path of headings.
type extractor struct {
	path    []heading
	section string // the path, as statements name it
	out     []statement
}

// push makes h the innermost heading, closing those at its level or deeper.
func (x *extractor) push(h heading) {
	for len(x.path) > 0 && x.path[len(x.path)-1].level >= h.level {
		x.path = x.path[:len(x.path)-1]
	}
	x.path = append(x.path, h)
	x.section = x.sectionOf()
}

// base is the level of the innermost Markdown heading: headings recognised in
// plain text nest below it.
func (x *extractor) base() int {
	for i := len(x.path) - 1; i >= 0; i-- {
		if x.path[i].markdown {
			return x.path[i].level
		}
	}
	return 0
}

// inside reports whether the current section yields atoms: the innermost
// heading that says what it holds decides.
func (x *extractor) inside() bool {
	for i := len(x.path) - 1; i >= 0; i-- {
		if k, _ := sectionKind(x.path[i].text); k != neutral {
			return k == holds
		}
	}
	return false
}

// sectionOf returns the path of headings as a section name, cut to
// MaxSectionChars: every statement under it repeats it.
func (x *extractor) sectionOf() string {
	names := make([]string, len(x.path))
	for i, h := range x.path {
		names[i] = h.text
	}
	s := strings.Join(names, " > ")
	if utf8.RuneCountInString(s) <= MaxSectionChars {
		return s
	}
	n := 0
	for i := range s {
		if n == MaxSectionChars {
			return s[:i]
		}
		n++
	}
	return s
}

// add adds a statement of the current section, up to one more than a resume
// may yield: the caller refuses a resume that yields more.
func (x *extractor) add(text string) {
	if len(x.out) <= MaxResumeAtoms && x.inside() && hasWord(text) {
		x.out = append(x.out, statement{section: x.section, text: text})
	}
}

// extractAtoms returns one statement per bullet, and per sentence of a
// paragraph, under the sections of a resume that hold experience or skills.
// A statement's section is its heading path, such as "Experience > Staff
// Engineer, Acme".
//
// Headings are Markdown headings (# or underlined with = or -) and, as plain
// text resumes have no markup, lines that look like headings, nested below the
// Markdown heading they follow:
//
//   - a section name on a line of its own ("EXPERIENCE", "Technical Skills:");
//   - under it, an ALL-CAPS line ("ACME PAYMENTS") or a Title Case line ending
//     in a colon ("Open Source Work:");
//   - under those, up to three short lines without sentence punctuation that a
//     list follows ("Staff Engineer, Acme (2021-2025)").
//
// Bullets are "-", "*", "+", "•" and the like, or "1." and "1)"; an indented
// line right after a bullet continues it.
func extractAtoms(md string) []statement {
	lines := strings.Split(md, "\n")
	var x extractor
	var para []string
	flush := func() {
		for _, sent := range sentences(strings.Join(para, " ")) {
			x.add(sent)
		}
		para = nil
	}
	bullet := -1 // index in x.out of the open bullet, for continuation lines
	var cont []string
	closeBullet := func() {
		if bullet >= 0 && len(cont) > 0 {
			x.out[bullet].text += " " + strings.Join(cont, " ")
		}
		bullet, cont = -1, nil
	}
	for i, line := range lines {
		t := cleanInline(line)
		item, isBullet := listItem(line)
		if !isBullet && bullet >= 0 && t != "" && line != strings.TrimLeftFunc(line, unicode.IsSpace) {
			cont = append(cont, t)
			continue
		}
		closeBullet()
		hashes, text, isHeading := markdownHeading(line)
		switch {
		case isHeading:
			flush()
			x.push(heading{level: hashes, text: cleanInline(text), markdown: true})
		case t == "":
			// A paragraph a list follows after a blank line may be its title.
			if !(titleLike(para) && isListItem(nextNonBlank(lines, i))) {
				flush()
			}
		case len(para) == 1 && setextUnderline(line):
			level := 1
			if strings.Contains(line, "-") {
				level = 2
			}
			x.push(heading{level: level, text: para[0], markdown: true})
			para = nil
		case thematicBreak(line) && !isBullet:
			flush()
		case isBullet:
			if titleLike(para) {
				x.push(heading{level: x.base() + 3, text: strings.Join(para, ", ")})
				para = nil
			}
			flush()
			n := len(x.out)
			x.add(cleanInline(item))
			if len(x.out) > n {
				bullet = n
			}
		default:
			if _, named := sectionKind(t); named {
				flush()
				x.push(heading{level: x.base() + 1, text: strings.TrimSuffix(t, ":")})
			} else if allCaps(t) || titleColon(t) {
				flush()
				x.push(heading{level: x.base() + 2, text: strings.TrimSuffix(t, ":")})
			} else {
				para = append(para, t)
			}
		}
	}
	closeBullet()
	flush()
	return x.out
}

func nextNonBlank(lines []string, i int) string {
	for _, l := range lines[i+1:] {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return ""
}

// titleLike reports whether a paragraph could title the list after it: one to
// three short lines, none ending as a sentence does.
func titleLike(para []string) bool {
	if len(para) == 0 || len(para) > 3 {
		return false
	}
	for _, l := range para {
		if utf8.RuneCountInString(l) > 120 || strings.ContainsAny(l[len(l)-1:], ".!?;,") {
			return false
		}
	}
	return true
}

// allCaps reports whether s is a short heading in capitals: letters, none
// lowercase, at most six words and no comma or final period, and either two
// words or five letters (so "AWS" on its own stays a skill).
func allCaps(s string) bool {
	letters := 0
	for _, r := range s {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	n := len(strings.Fields(s))
	return letters > 0 && n <= 6 && utf8.RuneCountInString(s) <= 60 && !strings.ContainsAny(s, ",") &&
		!strings.HasSuffix(s, ".") && (n >= 2 || letters >= 5)
}

// titleColon reports whether s is a Title Case label ending in a colon, of at
// most four words ("Open Source Work:").
func titleColon(s string) bool {
	label, ok := strings.CutSuffix(s, ":")
	f := strings.Fields(label)
	if !ok || len(f) == 0 || len(f) > 4 {
		return false
	}
	for _, w := range f {
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(r) && w != "and" && w != "of" && w != "&" {
			return false
		}
	}
	return true
}

// sentences splits a paragraph into its sentences.
func sentences(p string) []string {
	var out []string
	start := 0
	for _, loc := range sentenceEnds(p) {
		if s := strings.TrimSpace(p[start : loc[0]+1]); hasWord(s) {
			out = append(out, s)
		}
		start = loc[1]
	}
	if s := strings.TrimSpace(p[start:]); hasWord(s) {
		out = append(out, s)
	}
	return out
}

var emphasis = strings.NewReplacer("**", "", "__", "", "`", "")

// cleanInline drops Markdown emphasis and code marks.
func cleanInline(s string) string { return strings.TrimSpace(emphasis.Replace(s)) }

func hasWord(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}
