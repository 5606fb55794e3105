// Package multihop generates a synthetic corpus of linked entity
// descriptions and two-hop questions over it, for measuring retrieval on
// questions no single document answers (issue 15, item 6).
//
// The world: people, companies and cities with invented names (syllables
// drawn from a seeded generator, so no model has seen them and no general
// word list knows them). A person's description names the company they work
// for and the city they live in; a company's names its founder, its
// industry and the city of its headquarters; a city's names its river and
// region. Each question names one entity and asks about another that its
// description links to:
//
//	Who founded the company that Tovar Kelmin works for?              (person -> company)
//	In which city is the company Tovar Kelmin works for headquartered? (person -> company)
//	Which river flows through the city where Brasco Labs is based?     (company -> city)
//
// The answer is in the second document (the "second hop"), which does not
// name the entity the question names; the first hop is the named entity's
// own description. A question's relevant documents are both hops; Second
// says which is the second. Everything is a function of the seed: two calls
// with one seed give the same corpus, and different seeds share no
// questions, so one seed can be used for development and another for the
// reported figures.
package multihop

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Doc is one entity description.
type Doc struct {
	ID, Title, Text string
}

// Question is a two-hop question: First names the document describing the
// entity it names, Second the one holding the answer.
type Question struct {
	ID, Text      string
	First, Second string
	Answer        string
}

// Corpus is a generated world.
type Corpus struct {
	Docs      []Doc
	Questions []Question
}

// Options size a world; zero fields take the defaults of [Generate].
type Options struct {
	People, Companies, Cities, Questions int
}

// Generate returns the world of seed: by default 300 people, 60 companies,
// 40 cities and 150 questions (a third of each kind).
func Generate(seed uint64, o Options) Corpus {
	if o.People <= 0 {
		o.People = 300
	}
	if o.Companies <= 0 {
		o.Companies = 60
	}
	if o.Cities <= 0 {
		o.Cities = 40
	}
	if o.Questions <= 0 {
		o.Questions = 150
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	names := &namer{r: r, used: map[string]bool{}}
	type city struct{ name, river, region string }
	type company struct {
		name, founder, industry string
		city                    int
	}
	type person struct {
		name, job, field string
		company, city    int
	}
	cities := make([]city, o.Cities)
	for i := range cities {
		cities[i] = city{names.word(), names.word(), names.word()}
	}
	companies := make([]company, o.Companies)
	for i := range companies {
		companies[i] = company{
			name:     names.word() + " " + pick(r, companySuffixes),
			founder:  names.word() + " " + names.word(),
			industry: pick(r, industries),
			city:     r.IntN(len(cities)),
		}
	}
	people := make([]person, o.People)
	for i := range people {
		people[i] = person{
			name: names.word() + " " + names.word(), job: pick(r, jobs), field: pick(r, fields),
			company: r.IntN(len(companies)), city: r.IntN(len(cities)),
		}
	}
	var c Corpus
	for i, p := range cities {
		c.Docs = append(c.Docs, Doc{ID: fmt.Sprintf("city-%03d", i), Title: p.name, Text: fmt.Sprintf(
			"%s is a city on the %s river, in the region of %s. %s has a population of %d and a %s market.",
			p.name, p.river, p.region, p.name, 20000+r.IntN(900000), pick(r, markets))})
	}
	for i, co := range companies {
		c.Docs = append(c.Docs, Doc{ID: fmt.Sprintf("company-%03d", i), Title: co.name, Text: fmt.Sprintf(
			"%s is a %s company founded by %s in %d. %s is headquartered in %s and employs %d people.",
			co.name, co.industry, co.founder, 1950+r.IntN(70), co.name, cities[co.city].name, 50+r.IntN(5000))})
	}
	for i, p := range people {
		c.Docs = append(c.Docs, Doc{ID: fmt.Sprintf("person-%03d", i), Title: p.name, Text: fmt.Sprintf(
			"%s is a %s who lives in %s. %s works for %s and studied %s.",
			p.name, p.job, cities[p.city].name, p.name, companies[p.company].name, p.field)})
	}
	for q := range o.Questions {
		id := fmt.Sprintf("q%03d", q)
		switch q % 3 {
		case 0:
			i := r.IntN(len(people))
			p := people[i]
			c.Questions = append(c.Questions, Question{ID: id,
				Text:  fmt.Sprintf("Who founded the company that %s works for?", p.name),
				First: fmt.Sprintf("person-%03d", i), Second: fmt.Sprintf("company-%03d", p.company),
				Answer: companies[p.company].founder})
		case 1:
			i := r.IntN(len(people))
			p := people[i]
			c.Questions = append(c.Questions, Question{ID: id,
				Text:  fmt.Sprintf("In which city is the company %s works for headquartered?", p.name),
				First: fmt.Sprintf("person-%03d", i), Second: fmt.Sprintf("company-%03d", p.company),
				Answer: cities[companies[p.company].city].name})
		default:
			i := r.IntN(len(companies))
			co := companies[i]
			c.Questions = append(c.Questions, Question{ID: id,
				Text:  fmt.Sprintf("Which river flows through the city where %s is based?", co.name),
				First: fmt.Sprintf("company-%03d", i), Second: fmt.Sprintf("city-%03d", co.city),
				Answer: cities[co.city].river})
		}
	}
	return c
}

var (
	companySuffixes = []string{"Labs", "Industries", "Systems", "Holdings", "Works", "Dynamics"}
	industries      = []string{"shipping", "software", "textile", "mining", "pharmaceutical", "aerospace", "banking", "furniture"}
	jobs            = []string{"chemist", "carpenter", "pilot", "accountant", "architect", "nurse", "geologist", "translator"}
	fields          = []string{"economics", "physics", "history", "mathematics", "biology", "law", "music", "linguistics"}
	markets         = []string{"fish", "flower", "spice", "book", "cattle", "silk"}
)

func pick(r *rand.Rand, xs []string) string { return xs[r.IntN(len(xs))] }

// namer invents capitalised words of two or three syllables, never the same twice.
type namer struct {
	r    *rand.Rand
	used map[string]bool
}

var (
	onsets = []string{"b", "br", "d", "dr", "f", "g", "gr", "k", "kl", "l", "m", "n", "p", "qu", "r", "s", "st", "t", "tr", "v", "z"}
	nuclei = []string{"a", "e", "i", "o", "u", "ai", "or", "el", "an"}
	codas  = []string{"", "n", "r", "s", "l", "m", "x", "th"}
)

func (n *namer) word() string {
	for {
		var b strings.Builder
		for range 2 + n.r.IntN(2) {
			b.WriteString(pick(n.r, onsets))
			b.WriteString(pick(n.r, nuclei))
		}
		b.WriteString(pick(n.r, codas))
		w := b.String()
		w = strings.ToUpper(w[:1]) + w[1:]
		if !n.used[w] {
			n.used[w] = true
			return w
		}
	}
}
