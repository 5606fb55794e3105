package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/retrieval/beir"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// tune prints how the offline grader's score separates relevant retrievals
// from irrelevant ones on ds (the train split), by threshold. For each
// judged query it retrieves top_k passages as the pipeline's retriever does.
// A positive is a query with those passages, when one of them is of a
// document judged relevant; a negative is the query with the passages
// retrieved for another query (the one half the list away), less any of a
// document judged relevant to it: documents that do not answer it, from the
// same domain. The best threshold maximises balanced accuracy, the mean of
// the shares of positives kept and negatives refused.
func (e *env) tune(ctx context.Context, w io.Writer, ds *beir.Dataset) error {
	type retrieved struct {
		q    beir.Query
		docs []vector.Document
	}
	var runs []retrieved
	for _, q := range ds.Queries {
		if ds.Qrels[q.ID] == nil {
			continue
		}
		out, err := e.vectors.Retrieve(ctx, caller, vector.RetrieveInput{Question: q.Text, Stores: []string{storeAlias}, TopK: topK})
		if err != nil {
			return err
		}
		runs = append(runs, retrieved{q, out.Documents})
	}
	contents := func(docs []vector.Document, keep func(vector.Document) bool) []string {
		var out []string
		for _, d := range docs {
			if keep(d) {
				out = append(out, d.Content)
			}
		}
		return out
	}
	var pos, neg []float64
	for i, r := range runs {
		rel := ds.Qrels[r.q.ID]
		if slices.ContainsFunc(r.docs, func(d vector.Document) bool { return rel[d.DocID] > 0 }) {
			pos = append(pos, offline.Relevance(r.q.Text, contents(r.docs, func(vector.Document) bool { return true })))
		}
		other := runs[(i+len(runs)/2)%len(runs)]
		neg = append(neg, offline.Relevance(r.q.Text, contents(other.docs, func(d vector.Document) bool { return rel[d.DocID] == 0 })))
	}
	fmt.Fprintf(w, "tuning the offline grader on %d train queries: %d positives (a relevant document retrieved), %d negatives (another query's passages)\n", len(runs), len(pos), len(neg))
	fmt.Fprintln(w, "threshold  positives kept  negatives refused  balanced accuracy")
	best, bestAcc := 0.0, 0.0
	for i := 1; i <= 16; i++ {
		t := float64(i) * 0.05
		kept, refused := 0, 0
		for _, p := range pos {
			if p >= t {
				kept++
			}
		}
		for _, n := range neg {
			if n < t {
				refused++
			}
		}
		k, r := float64(kept)/float64(len(pos)), float64(refused)/float64(len(neg))
		fmt.Fprintf(w, "%9.2f  %14.3f  %17.3f  %17.3f\n", t, k, r, (k+r)/2)
		if (k+r)/2 > bestAcc {
			best, bestAcc = t, (k+r)/2
		}
	}
	fmt.Fprintf(w, "best threshold %.2f (balanced accuracy %.3f); offline.GradeThreshold is %.2f\n", best, bestAcc, offline.GradeThreshold)
	return nil
}
