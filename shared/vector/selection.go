package vector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/switchboard-dev/switchboard/shared/vector/query"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Store selection by a model (seed 000's "smart table selection"). When the
// service has a generator that can hold a conversation (Options.Generator: a
// hosted model, not the offline generator) and a search that names no stores
// has two or more candidates, the model is asked which to search: one user
// message, the caller's tenant's optimizer_vs-table-selection prompt in force
// (read through Options.Prompts on every search, so an override is in force
// on the next one), filled with the candidates ({stores}: the best
// [MaxSelectionCandidates] by score, one per line, "alias: description"),
// the question and [MaxSelectedStores]. Its reply is read strictly
// ([parseSelection]); a model that fails, answers late ([SelectionTimeout])
// or names no candidate leaves the choice to the score (selectStores), and
// [StoreSelection] says why. Offline, the score alone selects.
const (
	// MaxSelectionCandidates bounds the stores the model is shown.
	MaxSelectionCandidates = 32
	// MaxSelectionReplyBytes bounds the reply read.
	MaxSelectionReplyBytes = 4096
	// SelectionTimeout bounds the model's answer: the pipeline's retrieve
	// step has 6 s for the selection, the embedding and the search.
	SelectionTimeout = 2 * time.Second
	// maxSelectionDescription bounds a candidate's description in the
	// prompt, in characters.
	maxSelectionDescription = 300
	// selectionTokens bounds the reply: a JSON array of a few aliases.
	selectionTokens = 256
	// maxIgnoredNames bounds the unknown names a StoreSelection reports.
	maxIgnoredNames = 8
)

// How a search's stores were selected ([StoreSelection.By]).
const (
	SelectedByModel = "model"
	SelectedByScore = "score"
)

// StoreSelection is [query.StoreSelection].
type StoreSelection = query.StoreSelection

// chooseStores picks the stores a search naming none covers, among recs:
// by the model when the service has one and there is a choice to make, else
// (and whenever the model's choice fails) by score.
func (s *Service) chooseStores(ctx context.Context, c tenant.Caller, question string, recs []storeRec) ([]storeRec, *StoreSelection) {
	if s.chooser == nil || len(recs) <= 1 {
		return selectStores(question, recs), &StoreSelection{By: SelectedByScore}
	}
	ranked, scores := rankStores(question, recs)
	chosen, sel, err := s.askModel(ctx, c, question, ranked[:min(len(ranked), MaxSelectionCandidates)])
	if err == nil {
		return chosen, sel
	}
	s.log.WarnContext(ctx, "store selection by the model failed; selecting by score", "tenant", c.Tenant, "error", err)
	if sel == nil {
		sel = &StoreSelection{}
	}
	sel.By, sel.Fallback = SelectedByScore, clipText(err.Error(), 200)
	return cutRanked(ranked, scores), sel
}

// askModel asks the model which of candidates to search for question. The
// error says why its choice cannot be used; sel is set once it answered.
func (s *Service) askModel(ctx context.Context, c tenant.Caller, question string, candidates []storeRec) ([]storeRec, *StoreSelection, error) {
	text, err := s.prompts.Text(ctx, c.Tenant, prompt.TableSelection)
	if err != nil {
		return nil, nil, fmt.Errorf("the prompt %s could not be read: %w", prompt.TableSelection, err)
	}
	var lines strings.Builder
	aliases := make([]string, len(candidates))
	for i, r := range candidates {
		aliases[i] = r.Alias
		desc := strings.Join(strings.Fields(r.Description), " ")
		if desc == "" {
			desc = "(no description)"
		}
		fmt.Fprintf(&lines, "%s: %s\n", r.Alias, clipText(desc, maxSelectionDescription))
	}
	msg, err := prompt.Fill(prompt.TableSelection, text, map[string]string{
		"stores": strings.TrimSuffix(lines.String(), "\n"), "question": question, "max_stores": strconv.Itoa(MaxSelectedStores),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("the prompt %s could not be filled: %w", prompt.TableSelection, err)
	}
	askCtx, cancel := context.WithTimeout(ctx, SelectionTimeout)
	defer cancel()
	zero := 0.0
	reply, err := s.chooser.Chat(askCtx, provider.ChatRequest{
		Messages: []provider.Message{{Role: provider.RoleUser, Content: msg}}, MaxTokens: selectionTokens, Temperature: &zero,
	})
	switch {
	case err != nil && errors.Is(askCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return nil, nil, fmt.Errorf("the model did not answer within %s", SelectionTimeout)
	case err != nil:
		return nil, nil, fmt.Errorf("the model failed: %w", err)
	}
	sel := &StoreSelection{By: SelectedByModel, Provider: reply.Provider, Model: reply.Model}
	names, ignored, err := parseSelection(reply.Text, aliases)
	sel.Ignored = ignored
	if err != nil {
		return nil, sel, err
	}
	byAlias := make(map[string]storeRec, len(candidates))
	for _, r := range candidates {
		byAlias[r.Alias] = r
	}
	chosen := make([]storeRec, len(names))
	for i, n := range names {
		chosen[i] = byAlias[n]
	}
	return chosen, sel, nil
}

// listItem is what a line of a reply listing names may carry around a
// name: a bullet or a number.
var listItem = regexp.MustCompile(`^(?:[-*•]|\d{1,3}[.)])\s*`)

// parseSelection reads a model's choice of stores among candidates: the
// first JSON array in reply, which must hold strings alone (so that
// {"stores": [...]} and a fenced block are read too), else names separated
// by commas or line breaks (bullets, numbers and quotes around a name
// dropped). Names are matched to candidates regardless of case; unknown
// ones are ignored (returned, at most [maxIgnoredNames]), repeats dropped,
// and at most [MaxSelectedStores] kept, in the reply's order. A reply past
// [MaxSelectionReplyBytes], an array of anything but strings, or a reply
// that names no candidate is an error.
func parseSelection(reply string, candidates []string) (chosen, ignored []string, err error) {
	if len(reply) > MaxSelectionReplyBytes {
		return nil, nil, fmt.Errorf("the model's reply has %d bytes, more than %d", len(reply), MaxSelectionReplyBytes)
	}
	var names []string
	if i := strings.IndexByte(reply, '['); i >= 0 {
		if err := json.NewDecoder(strings.NewReader(reply[i:])).Decode(&names); err != nil {
			return nil, nil, fmt.Errorf("the model's reply is not a JSON array of store names: %s", clipText(reply, 80))
		}
	} else {
		for _, f := range strings.FieldsFunc(reply, func(r rune) bool { return r == ',' || r == '\n' }) {
			names = append(names, listItem.ReplaceAllString(strings.TrimSpace(f), ""))
		}
	}
	known := make(map[string]bool, len(candidates))
	for _, a := range candidates {
		known[a] = true
	}
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.ToLower(strings.TrimRight(strings.Trim(strings.TrimSpace(n), "\"'`“”‘’"), "."))
		switch {
		case n == "":
			continue
		case seen[n]:
		case !known[n]:
			if len(ignored) < maxIgnoredNames {
				ignored = append(ignored, clipText(n, 64))
			}
		case len(chosen) < MaxSelectedStores:
			chosen = append(chosen, n)
		}
		seen[n] = true
	}
	switch {
	case len(chosen) > 0:
		return chosen, ignored, nil
	case len(seen) == 0:
		return nil, ignored, errors.New("the model chose no store")
	}
	return nil, ignored, fmt.Errorf("the model's reply names no store it could choose: %s", clipText(reply, 80))
}

// clipText cuts s to n characters, marking the cut.
func clipText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
