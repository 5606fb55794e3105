package graph

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// GlobalOptions configure [Global]; zero fields take their defaults.
type GlobalOptions struct {
	// Level is the community level to search; -1 picks the finest level
	// with at most MaxCommunities reports (else the coarsest).
	Level int
	// MaxCommunities bounds the reports mapped: the ones whose text covers
	// most of the question ([text.Coverage]). Default 32.
	MaxCommunities int
	// MaxPoints bounds the points the answer is reduced from. Default 12.
	MaxPoints int
	// Generator, if set, rates each report's points and writes the answer;
	// nil means extractively.
	Generator provider.Generator
}

// Point is one rated statement a community report makes about a question.
type Point struct {
	Text string `json:"description"`
	// Score is how much it helps answer the question, 0 to 100.
	Score int `json:"score"`
	// Level and Community name the report it comes from.
	Level, Community int `json:"-"`
}

// GlobalResult is the answer of a global search.
type GlobalResult struct {
	Answer string
	// Sources are the documents of the communities whose points the answer
	// uses, in order of first use.
	Sources []string
	// Level is the community level searched; Mapped the communities mapped;
	// Used those whose points reached the answer.
	Level        int
	Mapped, Used []int
	Points       []Point
	// MapFailures counts reports whose rating by the generator was refused
	// (a reply that breaks [MapPrompt]'s schema); they contribute no points.
	MapFailures int
}

// MapPrompt is the system prompt of global search's map step with a generator.
const MapPrompt = `You rate what a community report says about the user's question.
The report is the one document below. List the points of the report that help answer the question, each with a score from 0 (useless) to 100 (answers it).
Reply with one JSON object and nothing else: {"points":[{"description":"...","score":0}]}. At most 5 points; no points if the report does not help.`

// Bounds of a map reply.
const (
	maxMapPoints     = 5
	maxPointChars    = 1000
	maxMapReplyBytes = 16 << 10
	// minOfflineScore is the least score an extractive point needs.
	minOfflineScore = 10
)

// Global answers a question over a graph's community reports, as GraphRAG's
// global search does: map each report of one level to rated points (with a
// generator, its reply to [MapPrompt], validated; without, each summary
// sentence scored by how much of the question it covers, [text.Coverage],
// times 100, keeping those of at least 10), keep the best points, and reduce
// them to an answer (with a generator, an answer over the points; without,
// the best points themselves, each with its community) with the documents of
// the communities used as sources.
func Global(ctx context.Context, question string, reports []Report, o GlobalOptions) (GlobalResult, error) {
	if strings.TrimSpace(question) == "" {
		return GlobalResult{}, fmt.Errorf("graph: global search: the question is empty")
	}
	o.MaxCommunities = cmp.Or(max(o.MaxCommunities, 0), 32)
	o.MaxPoints = cmp.Or(max(o.MaxPoints, 0), 12)
	res := GlobalResult{Level: chooseLevel(reports, o), Mapped: []int{}, Used: []int{}, Points: []Point{}, Sources: []string{}}
	var level []Report
	for _, r := range reports {
		if r.Level == res.Level {
			level = append(level, r)
		}
	}
	cover := func(r Report) float64 {
		return text.Coverage(question, r.Title+". "+strings.Join(r.Entities, ", ")+". "+r.Summary)
	}
	slices.SortStableFunc(level, func(a, b Report) int { return cmp.Compare(cover(b), cover(a)) })
	level = level[:min(len(level), o.MaxCommunities)]
	byCommunity := map[int]Report{}
	var points []Point
	for _, r := range level {
		if err := ctx.Err(); err != nil {
			return GlobalResult{}, err
		}
		res.Mapped = append(res.Mapped, r.Community)
		byCommunity[r.Community] = r
		ps, err := mapReport(ctx, question, r, o.Generator)
		if err != nil {
			res.MapFailures++
			continue
		}
		points = append(points, ps...)
	}
	slices.SortStableFunc(points, func(a, b Point) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Community, b.Community))
	})
	res.Points = points[:min(len(points), o.MaxPoints)]
	for _, p := range res.Points {
		if !slices.Contains(res.Used, p.Community) {
			res.Used = append(res.Used, p.Community)
			for _, d := range byCommunity[p.Community].Docs {
				if !slices.Contains(res.Sources, d) {
					res.Sources = append(res.Sources, d)
				}
			}
		}
	}
	answer, err := reduce(ctx, question, res.Points, o.Generator)
	if err != nil {
		return GlobalResult{}, err
	}
	res.Answer = answer
	return res, nil
}

// chooseLevel is the level o names, or the finest with at most
// MaxCommunities reports, else the coarsest; 0 without reports.
func chooseLevel(reports []Report, o GlobalOptions) int {
	if o.Level >= 0 {
		return o.Level
	}
	count := map[int]int{}
	top := 0
	for _, r := range reports {
		count[r.Level]++
		top = max(top, r.Level)
	}
	for l := 0; l <= top; l++ {
		if n := count[l]; n > 0 && n <= o.MaxCommunities {
			return l
		}
	}
	return top
}

func mapReport(ctx context.Context, question string, r Report, gen provider.Generator) ([]Point, error) {
	if gen == nil {
		var out []Point
		for _, s := range offline.Sentences(r.Summary) {
			if score := int(math.Round(100 * text.Coverage(question, s))); score >= minOfflineScore {
				out = append(out, Point{Text: s, Score: score, Level: r.Level, Community: r.Community})
			}
		}
		slices.SortStableFunc(out, func(a, b Point) int { return cmp.Compare(b.Score, a.Score) })
		return out[:min(len(out), maxMapPoints)], nil
	}
	g, err := gen.Generate(ctx, provider.GenerateRequest{
		Task: provider.TaskAnswer, System: MapPrompt, Question: question, MaxTokens: 600,
		Documents: []string{r.Title + "\n\n" + r.Summary},
	})
	if err != nil {
		return nil, err
	}
	if len(g.Text) > maxMapReplyBytes {
		return nil, fmt.Errorf("map reply of %d bytes", len(g.Text))
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(unfence(g.Text))))
	dec.DisallowUnknownFields()
	var reply struct {
		Points []Point `json:"points"`
	}
	if err := dec.Decode(&reply); err != nil {
		return nil, err
	}
	if len(reply.Points) > maxMapPoints {
		return nil, fmt.Errorf("points: more than %d", maxMapPoints)
	}
	for i, p := range reply.Points {
		if p.Score < 0 || p.Score > 100 || strings.TrimSpace(p.Text) == "" || len([]rune(p.Text)) > maxPointChars {
			return nil, fmt.Errorf("points[%d]: a score outside 0..100 or a description empty or too long", i)
		}
		reply.Points[i].Text = strings.TrimSpace(p.Text)
		reply.Points[i].Level, reply.Points[i].Community = r.Level, r.Community
	}
	return reply.Points, nil
}

func reduce(ctx context.Context, question string, points []Point, gen provider.Generator) (string, error) {
	if len(points) == 0 {
		return "", nil
	}
	label := func(p Point) string { return fmt.Sprintf("community %d/%d", p.Level, p.Community) }
	if gen == nil {
		var b strings.Builder
		for _, p := range points {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(p.Text + " [" + label(p) + "]")
		}
		return b.String(), nil
	}
	docs, sources := make([]string, len(points)), make([]string, len(points))
	for i, p := range points {
		docs[i], sources[i] = p.Text, label(p)
	}
	out, err := gen.Generate(ctx, provider.GenerateRequest{Task: provider.TaskAnswer, Question: question, Documents: docs, Sources: sources})
	if err != nil {
		return "", fmt.Errorf("graph: global search: reduce: %w", err)
	}
	return out.Text, nil
}
