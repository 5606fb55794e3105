package main

import "fmt"

// offDomainQuestions returns 50 questions about cooking, sports and travel,
// the same every time: ten templates, each filled with five subjects. No
// store of scientific abstracts or software documentation answers them.
func offDomainQuestions() []string {
	templates := []struct {
		format   string
		subjects []string
	}{
		{"How long should I boil %s?", []string{"an egg for a soft yolk", "spaghetti", "fresh corn on the cob", "potatoes for a salad", "lobster tails"}},
		{"What oven temperature is best for roasting %s?", []string{"a whole chicken", "pork belly", "root vegetables", "a leg of lamb", "butternut squash"}},
		{"What can I use instead of %s?", []string{"buttermilk in pancakes", "eggs in a vegan cake", "breadcrumbs in meatballs", "heavy cream in a sauce", "baking powder in muffins"}},
		{"How do I keep %s?", []string{"basil fresh in the fridge", "avocado from turning brown", "cookies soft for a week", "homemade bread from going stale", "a sourdough starter alive on holiday"}},
		{"Who won %s?", []string{"the football World Cup in 1998", "the Tour de France in 2019", "the most Wimbledon titles", "the Super Bowl in 2015", "the first Rugby World Cup"}},
		{"How many players %s?", []string{"are on a volleyball team", "start a baseball game", "are on the ice in hockey", "does a cricket team field", "are on a water polo team"}},
		{"What are the rules of %s?", []string{"the offside trap in football", "a tie-break in tennis", "castling in chess", "a free throw in basketball", "the lineout in rugby"}},
		{"Do I need a visa to visit %s?", []string{"Japan for two weeks", "Brazil as a tourist", "Vietnam from Canada", "Morocco for a holiday", "New Zealand on a working holiday"}},
		{"What is the cheapest way to travel from %s?", []string{"Paris to Rome", "London to Edinburgh", "Bangkok to Chiang Mai", "Lisbon to Porto", "Boston to New York"}},
		{"When is the best season to visit %s?", []string{"Iceland for the northern lights", "Patagonia for hiking", "Kyoto for the autumn leaves", "the Greek islands", "the Serengeti for the migration"}},
	}
	var out []string
	for _, t := range templates {
		for _, s := range t.subjects {
			out = append(out, fmt.Sprintf(t.format, s))
		}
	}
	return out
}
