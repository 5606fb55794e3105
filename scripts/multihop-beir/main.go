// Command multihop-beir writes a synthetic multi-hop world (package
// graph/multihop: linked descriptions of invented people, companies and
// cities, and two-hop questions over them) as a BEIR folder that
// scripts/retrieval-eval reads: corpus.jsonl, queries.jsonl and
// qrels/test.tsv, where both hops of each question are relevant.
//
//	go run ./scripts/multihop-beir --seed 2 --out /tmp/multihop
//	go run ./scripts/retrieval-eval --data /tmp/multihop --split test --run /tmp/mh.trec --pipeline graphrag
//
// Seed 2 is the world whose figures are reported; seed 1 is the one looked
// at while developing (see multihop's package doc).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/switchboard-dev/switchboard/shared/graph/multihop"
)

func main() {
	seed := flag.Uint64("seed", 2, "the world's `seed`")
	out := flag.String("out", "", "`folder` to write")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/multihop-beir --seed 2 --out DIR")
		os.Exit(2)
	}
	if err := write(multihop.Generate(*seed, multihop.Options{}), *out); err != nil {
		fmt.Fprintln(os.Stderr, "multihop-beir:", err)
		os.Exit(1)
	}
}

func write(world multihop.Corpus, dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "qrels"), 0o755); err != nil {
		return err
	}
	lines := func(name string, rows []any) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		enc := json.NewEncoder(f)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				f.Close()
				return err
			}
		}
		return f.Close()
	}
	type doc struct {
		ID    string `json:"_id"`
		Title string `json:"title"`
		Text  string `json:"text"`
	}
	type query struct {
		ID   string `json:"_id"`
		Text string `json:"text"`
	}
	var docs, queries []any
	for _, d := range world.Docs {
		docs = append(docs, doc{d.ID, d.Title, d.Text})
	}
	qrels := "query-id\tcorpus-id\tscore\n"
	for _, q := range world.Questions {
		queries = append(queries, query{q.ID, q.Text})
		qrels += fmt.Sprintf("%s\t%s\t1\n%s\t%s\t1\n", q.ID, q.First, q.ID, q.Second)
	}
	if err := lines("corpus.jsonl", docs); err != nil {
		return err
	}
	if err := lines("queries.jsonl", queries); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "qrels", "test.tsv"), []byte(qrels), 0o644)
}
