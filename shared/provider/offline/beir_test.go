package offline_test

import (
	"bufio"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
)

// TestGradeAgainstBEIRJudgements measures the offline grader on a BEIR-layout
// folder: how often it says "yes" for a judged-relevant document, and for a
// random other document of the corpus; and how often the offline answer from
// the relevant document is non-empty. It runs only when
// SWITCHBOARD_BEIR_DIR names the folder:
//
//	SWITCHBOARD_BEIR_DIR=../shared/eval/scifact SWITCHBOARD_BEIR_SPLIT=test \
//	  go test -run TestGradeAgainstBEIRJudgements -v ./shared/provider/offline/
func TestGradeAgainstBEIRJudgements(t *testing.T) {
	dir := os.Getenv("SWITCHBOARD_BEIR_DIR")
	if dir == "" {
		t.Skip("set SWITCHBOARD_BEIR_DIR to a BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) to run")
	}
	split := os.Getenv("SWITCHBOARD_BEIR_SPLIT")
	if split == "" {
		split = "train"
	}
	docs := map[string]string{}
	var ids []string
	eachLine(t, filepath.Join(dir, "corpus.jsonl"), func(line string) {
		var d struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		docs[d.ID] = strings.TrimSpace(d.Title + ". " + d.Text)
		ids = append(ids, d.ID)
	})
	queries := map[string]string{}
	eachLine(t, filepath.Join(dir, "queries.jsonl"), func(line string) {
		var q struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatal(err)
		}
		queries[q.ID] = q.Text
	})
	relevant := map[string][]string{}
	eachLine(t, filepath.Join(dir, "qrels", split+".tsv"), func(line string) {
		f := strings.Split(line, "\t")
		if len(f) >= 3 && f[0] != "query-id" && f[2] != "0" {
			relevant[f[0]] = append(relevant[f[0]], f[1])
		}
	})
	qids := make([]string, 0, len(relevant))
	for q := range relevant {
		qids = append(qids, q)
	}
	slices.Sort(qids)
	gen := offline.NewGenerator()
	grade := func(q, doc string) bool {
		g, err := gen.Generate(context.Background(), provider.GenerateRequest{Task: provider.TaskGrade, Question: q, Documents: []string{doc}})
		if err != nil {
			t.Fatal(err)
		}
		return g.Text == "yes"
	}
	r := rand.New(rand.NewPCG(1, 2))
	var yesRelevant, yesRandom, answered int
	for _, qid := range qids {
		q, rel := queries[qid], relevant[qid]
		if grade(q, docs[rel[0]]) {
			yesRelevant++
		}
		a, err := gen.Generate(context.Background(), provider.GenerateRequest{Task: provider.TaskAnswer, Question: q, Documents: []string{docs[rel[0]]}, MaxTokens: 80})
		if err != nil {
			t.Fatal(err)
		}
		if a.Text != "" {
			answered++
		}
		other := ids[r.IntN(len(ids))]
		for slices.Contains(rel, other) {
			other = ids[r.IntN(len(ids))]
		}
		if grade(q, docs[other]) {
			yesRandom++
		}
	}
	n := float64(len(qids))
	t.Logf("split=%s queries=%d grade_yes_relevant=%.3f grade_yes_random=%.3f (GradeMinShared=%d) answer_nonempty_relevant=%.3f",
		split, len(qids), float64(yesRelevant)/n, float64(yesRandom)/n, offline.GradeMinShared, float64(answered)/n)
}

func eachLine(t *testing.T, path string, fn func(string)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			fn(sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
