// Package beir reads retrieval test collections in the BEIR layout and scores
// runs the way BEIR (pytrec_eval) does: nDCG@k with graded gains and
// recall@k. It also writes TREC run files.
//
//	ds, err := beir.Load("../shared/eval/scifact", "test")
//	run := beir.Run{}
//	for _, q := range ds.Queries {
//		run[q.ID] = rankedDocIDs(q.Text) // best first
//	}
//	fmt.Printf("ndcg@10=%.4f recall@100=%.4f\n", beir.MeanNDCG(run, ds.Qrels, 10), beir.MeanRecall(run, ds.Qrels, 100))
//
// A dataset folder holds corpus.jsonl ({"_id", "title", "text"} per line),
// queries.jsonl ({"_id", "text"}) and qrels/<split>.tsv (a header line, then
// query-id, corpus-id, score, tab-separated).
package beir

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Doc is one corpus document.
type Doc struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// Query is one test query.
type Query struct {
	ID   string `json:"_id"`
	Text string `json:"text"`
}

// Qrels maps a query id to its judged documents' relevance grades.
type Qrels map[string]map[string]int

// Run maps a query id to the document ids retrieved for it, best first.
type Run map[string][]string

// Dataset is a split of a BEIR collection: the whole corpus, the queries that
// have judgements in the split (in file order), and those judgements.
type Dataset struct {
	Corpus  []Doc
	Queries []Query
	Qrels   Qrels
}

// Load reads dir's corpus, its queries judged in split and qrels/<split>.tsv.
func Load(dir, split string) (*Dataset, error) {
	corpus, err := LoadCorpus(filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		return nil, err
	}
	qrels, err := LoadQrels(filepath.Join(dir, "qrels", split+".tsv"))
	if err != nil {
		return nil, err
	}
	all, err := LoadQueries(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Corpus: corpus, Qrels: qrels}
	for _, q := range all {
		if _, ok := qrels[q.ID]; ok {
			ds.Queries = append(ds.Queries, q)
		}
	}
	return ds, nil
}

func readJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("beir: %w", err)
	}
	defer f.Close()
	var out []T
	dec := json.NewDecoder(bufio.NewReader(f))
	for line := 1; ; line++ {
		var v T
		if err := dec.Decode(&v); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("beir: read %s: record %d: %w", path, line, err)
		}
		out = append(out, v)
	}
}

// LoadCorpus reads a corpus.jsonl file.
func LoadCorpus(path string) ([]Doc, error) { return readJSONL[Doc](path) }

// LoadQueries reads a queries.jsonl file.
func LoadQueries(path string) ([]Query, error) { return readJSONL[Query](path) }

// LoadQrels reads a qrels TSV file, skipping its header line.
func LoadQrels(path string) (Qrels, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("beir: %w", err)
	}
	q := Qrels{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if i == 0 && strings.HasPrefix(line, "query-id") || strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("beir: read %s: line %d: want 3 tab-separated fields, got %d", path, i+1, len(f))
		}
		grade, err := strconv.Atoi(strings.TrimSpace(f[2]))
		if err != nil {
			return nil, fmt.Errorf("beir: read %s: line %d: score: %w", path, i+1, err)
		}
		if q[f[0]] == nil {
			q[f[0]] = map[string]int{}
		}
		q[f[0]][f[1]] = grade
	}
	return q, nil
}

// NDCG returns nDCG@k of ranked (document ids, best first) against the grades
// rel, with gain equal to the grade and discount log2(rank+1), as trec_eval's
// ndcg_cut. A query without relevant documents scores 0.
func NDCG(ranked []string, rel map[string]int, k int) float64 {
	var dcg float64
	for i, id := range ranked[:min(k, len(ranked))] {
		if g := rel[id]; g > 0 {
			dcg += float64(g) / math.Log2(float64(i+2))
		}
	}
	var grades []int
	for _, g := range rel {
		if g > 0 {
			grades = append(grades, g)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(grades)))
	var idcg float64
	for i, g := range grades[:min(k, len(grades))] {
		idcg += float64(g) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// Recall returns the fraction of the relevant documents (grade > 0) found in
// the first k of ranked. A query without relevant documents scores 0.
func Recall(ranked []string, rel map[string]int, k int) float64 {
	relevant, found := 0, 0
	for _, g := range rel {
		if g > 0 {
			relevant++
		}
	}
	for _, id := range ranked[:min(k, len(ranked))] {
		if rel[id] > 0 {
			found++
		}
	}
	if relevant == 0 {
		return 0
	}
	return float64(found) / float64(relevant)
}

// MeanNDCG averages [NDCG] over every query of qrels; a query missing from
// run scores 0.
func MeanNDCG(run Run, qrels Qrels, k int) float64 { return mean(run, qrels, k, NDCG) }

// MeanRecall averages [Recall] over every query of qrels; a query missing
// from run scores 0.
func MeanRecall(run Run, qrels Qrels, k int) float64 { return mean(run, qrels, k, Recall) }

func mean(run Run, qrels Qrels, k int, metric func([]string, map[string]int, int) float64) float64 {
	if len(qrels) == 0 {
		return 0
	}
	var sum float64
	for qid, rel := range qrels {
		sum += metric(run[qid], rel, k)
	}
	return sum / float64(len(qrels))
}

// WriteRun writes one query's ranking in TREC run format, one line per
// document: "qid Q0 docid rank score tag", rank counting from 1. scores[i]
// belongs to docIDs[i].
func WriteRun(w io.Writer, qid string, docIDs []string, scores []float64, tag string) error {
	if len(scores) != len(docIDs) {
		return fmt.Errorf("beir: write run: %d documents, %d scores", len(docIDs), len(scores))
	}
	bw := bufio.NewWriter(w)
	for i, id := range docIDs {
		fmt.Fprintf(bw, "%s Q0 %s %d %.6f %s\n", qid, id, i+1, scores[i], tag)
	}
	return bw.Flush()
}
