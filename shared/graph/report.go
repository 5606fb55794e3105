package graph

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// Report describes one community of a graph, for global search.
type Report struct {
	Level     int    `json:"level"`
	Community int    `json:"community"`
	Title     string `json:"title"`
	Summary   string `json:"summary"`
	// Entities are the names of its most central entities (weighted degree
	// within the community), at most [MaxReportEntities].
	Entities []string `json:"entities"`
	// Chunks are the ids of its central chunks (those mentioning its central
	// entities most), at most [MaxReportChunks]; Docs their documents.
	Chunks []string `json:"chunks"`
	Docs   []string `json:"docs"`
	// Size is how many entities it has.
	Size int `json:"size"`
	// By names what wrote Summary: "extractive", or the generator's provider/model.
	By string `json:"by"`
}

// Bounds of reports.
const (
	MaxReportEntities  = 10
	MaxReportChunks    = 4
	MaxReportSentences = 5
	// MaxReportChars bounds a summary, in characters.
	MaxReportChars = 1200
	// MinCommunitySize is the fewest entities a community needs for a report.
	MinCommunitySize = 2
	// MaxReportsPerLevel bounds the reports of one level (the largest
	// communities): global search maps at most this many.
	MaxReportsPerLevel = 256
	// maxReportsBytes bounds encoded reports.
	maxReportsBytes = 32 << 20
)

// ChunkTexts returns the texts of the chunks named by ids, by id; a chunk it
// cannot find is left out. The vector store provides it.
type ChunkTexts func(ctx context.Context, ids []string) (map[string]string, error)

// Reports writes a report for each community of c with at least
// [MinCommunitySize] entities, at most [MaxReportsPerLevel] per level (the
// largest, ties by community number), levels in order. Without a generator
// (gen nil) a summary is extractive: the sentences of the central chunks
// that name the most central entities, at most [MaxReportSentences] in
// chunk order and [MaxReportChars]. With one, up to [MaxGeneratedReports]
// summaries are its answers to the report prompt system ("" means
// prompt.GraphReport's default text; a caller with a tenant passes the
// tenant's) over the central chunks; a report past that bound, whose
// generation fails, or not generated within half the time ctx has left,
// stays extractive, and By says so.
func (g *Graph) Reports(ctx context.Context, c Communities, texts ChunkTexts, gen provider.Generator, system string) ([]Report, error) {
	if gen != nil && strings.TrimSpace(system) == "" {
		s, err := prompt.SpecOf(prompt.GraphReport)
		if err != nil {
			return nil, err
		}
		system = s.Text
	}
	var out []Report
	var docs [][]string // each report's central chunks' texts
	for l, part := range c.Levels {
		members := make([][]int32, c.Count(l))
		for e, p := range part {
			members[p] = append(members[p], int32(e))
		}
		var picked []int
		for p, m := range members {
			if len(m) >= MinCommunitySize {
				picked = append(picked, p)
			}
		}
		slices.SortStableFunc(picked, func(a, b int) int { return cmp.Compare(len(members[b]), len(members[a])) })
		picked = picked[:min(len(picked), MaxReportsPerLevel)]
		slices.Sort(picked)
		reports := make([]Report, 0, len(picked))
		var ids []string
		for _, p := range picked {
			r := g.outline(part, int32(p), members[p])
			r.Level = l
			ids = append(ids, r.Chunks...)
			reports = append(reports, r)
		}
		found, err := texts(ctx, ids)
		if err != nil {
			return nil, fmt.Errorf("graph: reports: chunk texts: %w", err)
		}
		for _, r := range reports {
			var d []string
			for _, id := range r.Chunks {
				if t, ok := found[id]; ok {
					d = append(d, t)
				}
			}
			out, docs = append(out, r), append(docs, d)
		}
	}
	for i := range out {
		out[i].Summary, out[i].By = extractive(out[i].Entities, docs[i]), "extractive"
	}
	if gen != nil {
		g.generateSummaries(ctx, out, docs, gen, system)
	}
	return out, nil
}

// Bounds of the reports a generator writes.
const (
	// MaxGeneratedReports bounds the reports one [Graph.Reports] call asks a
	// generator for: the coarsest levels' first (global search maps the
	// finest level with at most max_communities reports, and coarser levels
	// have fewer), the largest communities first within a level.
	MaxGeneratedReports = 32
	// reportConcurrency is how many reports are generated at once.
	reportConcurrency = 4
)

// generateSummaries replaces the extractive summaries of up to
// [MaxGeneratedReports] reports by gen's, within half the time ctx has left.
func (g *Graph) generateSummaries(ctx context.Context, reports []Report, docs [][]string, gen provider.Generator, system string) {
	order := make([]int, 0, len(reports))
	for i := range reports {
		if len(docs[i]) > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(reports[b].Level, reports[a].Level), cmp.Compare(reports[b].Size, reports[a].Size))
	})
	order = order[:min(len(order), MaxGeneratedReports)]
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(deadline)/2))
		defer cancel()
	}
	var wg errgroup.Group
	wg.SetLimit(reportConcurrency)
	for _, i := range order {
		wg.Go(func() error {
			r := &reports[i]
			out, err := gen.Generate(ctx, provider.GenerateRequest{
				Task: provider.TaskAnswer, System: system, Documents: docs[i], Sources: r.Chunks[:len(docs[i])],
				Question: "Entities: " + strings.Join(r.Entities, "; "), MaxTokens: 400,
			})
			if err == nil && strings.TrimSpace(out.Text) != "" {
				r.Summary, r.By = clipChars(strings.TrimSpace(out.Text), MaxReportChars), out.Provider+"/"+out.Model
			}
			return nil
		})
	}
	wg.Wait()
}

// outline fills a report's title, entities and central chunks.
func (g *Graph) outline(part []int32, p int32, members []int32) Report {
	r := Report{Community: int(p), Size: len(members)}
	degree := map[int32]float64{}
	for _, e := range members {
		for j := g.adjStart[e]; j < g.adjStart[e+1]; j++ {
			if part[g.adjTo[j]] == p {
				degree[e] += g.adjW[j]
			}
		}
	}
	central := slices.Clone(members)
	slices.SortFunc(central, func(a, b int32) int {
		return cmp.Or(cmp.Compare(degree[b], degree[a]), strings.Compare(g.keys[a], g.keys[b]))
	})
	central = central[:min(len(central), MaxReportEntities)]
	chunkScore := map[int32]float64{}
	for _, e := range central {
		for j := g.linkStart[e]; j < g.linkStart[e+1]; j++ {
			chunkScore[g.linkTo[j]] += g.linkN[j] * (1 + degree[e])
		}
		r.Entities = append(r.Entities, g.names[e])
	}
	chunks := make([]int32, 0, len(chunkScore))
	for c := range chunkScore {
		chunks = append(chunks, c)
	}
	slices.SortFunc(chunks, func(a, b int32) int {
		return cmp.Or(cmp.Compare(chunkScore[b], chunkScore[a]), strings.Compare(g.chunkIDs[a], g.chunkIDs[b]))
	})
	for _, c := range chunks[:min(len(chunks), MaxReportChunks)] {
		r.Chunks = append(r.Chunks, g.chunkIDs[c])
		if !slices.Contains(r.Docs, g.chunkDocs[c]) {
			r.Docs = append(r.Docs, g.chunkDocs[c])
		}
	}
	r.Title = strings.Join(r.Entities[:min(3, len(r.Entities))], ", ")
	return r
}

// extractive picks the sentences of docs that name the most of entities.
func extractive(entities []string, docs []string) string {
	type sentence struct {
		s     string
		at    int
		score float64
	}
	var all []sentence
	for _, d := range docs {
		for _, s := range offline.Sentences(d) {
			terms := map[string]bool{}
			for _, t := range text.Terms(s) {
				terms[t] = true
			}
			var score float64
			for rank, e := range entities {
				ks := strings.Fields(Key(e))
				named := len(ks) > 0
				for _, k := range ks {
					named = named && terms[k]
				}
				if named {
					score += 1 / float64(1+rank)
				}
			}
			if score > 0 && !slices.ContainsFunc(all, func(x sentence) bool { return x.s == s }) {
				all = append(all, sentence{s, len(all), score})
			}
		}
	}
	slices.SortStableFunc(all, func(a, b sentence) int { return cmp.Compare(b.score, a.score) })
	all = all[:min(len(all), MaxReportSentences)]
	slices.SortFunc(all, func(a, b sentence) int { return cmp.Compare(a.at, b.at) })
	var b strings.Builder
	for _, s := range all {
		if utf8.RuneCountInString(b.String())+1+utf8.RuneCountInString(s.s) > MaxReportChars {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.s)
	}
	return b.String()
}

func clipChars(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// MarshalReports encodes reports as JSON, the form they are stored in.
func MarshalReports(reports []Report) ([]byte, error) {
	b, err := json.Marshal(reports)
	if err != nil {
		return nil, fmt.Errorf("graph: encode reports: %w", err)
	}
	return b, nil
}

// DecodeReports decodes reports written by [MarshalReports], refusing data
// past 32 MiB (before decoding it) and reports past the bounds a report is
// written within, with an error naming the report and field.
func DecodeReports(data []byte) ([]Report, error) {
	if len(data) > maxReportsBytes {
		return nil, fmt.Errorf("graph: decode reports: %d bytes, the most is %d", len(data), maxReportsBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var rs []Report
	if err := dec.Decode(&rs); err != nil {
		return nil, fmt.Errorf("graph: decode reports: %w", err)
	}
	for i, r := range rs {
		switch {
		case r.Level < 0 || r.Community < 0 || r.Size < 0:
			return nil, fmt.Errorf("graph: decode reports: reports[%d]: negative level, community or size", i)
		case len(r.Entities) > MaxReportEntities:
			return nil, fmt.Errorf("graph: decode reports: reports[%d].entities: more than %d", i, MaxReportEntities)
		case len(r.Chunks) > MaxReportChunks || len(r.Docs) > MaxReportChunks:
			return nil, fmt.Errorf("graph: decode reports: reports[%d].chunks: more than %d", i, MaxReportChunks)
		case utf8.RuneCountInString(r.Summary) > MaxReportChars:
			return nil, fmt.Errorf("graph: decode reports: reports[%d].summary: longer than %d characters", i, MaxReportChars)
		}
	}
	return rs, nil
}
