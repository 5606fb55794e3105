package career

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"sort"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The matching strategies.
const (
	StrategyLexical = "deterministic_lexical_v0.1"
	StrategyHybrid  = "hybrid_lexical_embedding_v0.2"
)

// Strategies lists the matching strategies; the first is the default.
var Strategies = []string{StrategyLexical, StrategyHybrid}

// SatisfiedThreshold is the evidence score from which a requirement counts as satisfied.
const SatisfiedThreshold = 0.5

// rrfK is the reciprocal-rank-fusion constant of the hybrid strategy.
const rrfK = 60

// InlineOpportunity is an opportunity given in the call rather than stored.
type InlineOpportunity struct {
	Title        string   `json:"title"`
	Company      string   `json:"company,omitempty"`
	Description  string   `json:"description,omitempty"`
	Requirements []string `json:"requirements"`
}

// MatchInput is the input of match_opportunity.
type MatchInput struct {
	OpportunityID string             `json:"opportunity_id,omitempty" jsonschema:"a stored opportunity; give this or opportunity"`
	Opportunity   *InlineOpportunity `json:"opportunity,omitempty" jsonschema:"an opportunity given inline; give this or opportunity_id"`
	Strategy      string             `json:"strategy,omitempty" jsonschema:"deterministic_lexical_v0.1 (default) or hybrid_lexical_embedding_v0.2"`
	KLex          int                `json:"k_lex,omitempty" jsonschema:"lexical candidates per requirement (default 25)"`
	KEmb          int                `json:"k_emb,omitempty" jsonschema:"embedding candidates per requirement, hybrid only (default 25)"`
	ResumeID      string             `json:"resume_id,omitempty" jsonschema:"carried into the audit trail; does not alter matching"`
	TraceID       string             `json:"trace_id,omitempty" jsonschema:"the call's trace: its audit events and the result's _meta use it; the call's own if omitted"`
}

// Evidence is what satisfied one requirement, or came closest.
type Evidence struct {
	Index       int    `json:"requirement_index"`
	Requirement string `json:"requirement"`
	Satisfied   bool   `json:"satisfied"`
	// Score is the evidence score in [0, 1]: term coverage for the lexical
	// strategy, the mean of coverage and cosine similarity for the hybrid one.
	Score          float64  `json:"score"`
	AtomID         string   `json:"atom_id,omitempty" jsonschema:"the atom that satisfied it (or came closest)"`
	AtomSourceHash string   `json:"atom_source_hash,omitempty" jsonschema:"the atom's source hash when matched"`
	Section        string   `json:"section,omitempty"`
	Coverage       float64  `json:"coverage" jsonschema:"share of the requirement's terms the atom contains"`
	Cosine         *float64 `json:"cosine,omitempty" jsonschema:"embedding similarity, hybrid only"`
	MatchedTerms   []string `json:"matched_terms" jsonschema:"the requirement's terms found in the atom"`
}

// MatchReport is the deterministic result of matching: the same opportunity,
// atoms, strategy, k values and embedder give the same report, id included.
type MatchReport struct {
	ReportID              string     `json:"report_id" jsonschema:"derived from the report's content"`
	OpportunityID         string     `json:"opportunity_id,omitempty"`
	OpportunitySourceHash string     `json:"opportunity_source_hash"`
	Strategy              string     `json:"strategy"`
	KLex                  int        `json:"k_lex"`
	KEmb                  int        `json:"k_emb,omitempty"`
	EmbeddingProvider     string     `json:"embedding_provider,omitempty"`
	EmbeddingModel        string     `json:"embedding_model,omitempty"`
	EmbeddingDims         int        `json:"embedding_dims,omitempty"`
	AtomsConsidered       int        `json:"atoms_considered"`
	OverallScore          float64    `json:"overall_score" jsonschema:"mean of the requirements' evidence scores, in [0, 1]"`
	MatchedAtoms          []string   `json:"matched_atoms" jsonschema:"atoms that satisfied at least one requirement, in requirement order"`
	Requirements          []Evidence `json:"requirements" jsonschema:"per-requirement evidence, in the opportunity's order"`
	Unsatisfied           []int      `json:"unsatisfied_requirements" jsonschema:"indices of the requirements nothing satisfied"`
}

// ValidationSummary is the validation a match run ends with.
type ValidationSummary struct {
	Status       string    `json:"status" jsonschema:"accepted, rejected or needs_review"`
	FindingCount int       `json:"finding_count"`
	Findings     []Finding `json:"findings"`
}

// MatchOutput is the output of match_opportunity.
type MatchOutput struct {
	TraceID          string            `json:"trace_id"`
	ResumeID         string            `json:"resume_id,omitempty"`
	MatchReport      MatchReport       `json:"match_report"`
	ValidationReport ValidationSummary `json:"validation_report"`
}

func reportsPK(c tenant.Caller) string { return pk(c, "reports") }

// MatchOpportunity serves match_opportunity: match, validate, store the
// report, with RunStarted, MatchCompleted, ValidationCompleted and
// RunCompleted in the audit trail.
func (s *Service) MatchOpportunity(ctx context.Context, c tenant.Caller, in MatchInput) (MatchOutput, error) {
	trace, err := traceID(ctx, in.TraceID)
	if err != nil {
		return MatchOutput{}, err
	}
	strategy := in.Strategy
	if strategy == "" {
		strategy = StrategyLexical
	}
	if !contains(Strategies, strategy) {
		return MatchOutput{}, fault.Invalid("strategy", "%q is not a strategy: use %s", strategy, strings.Join(Strategies, " or "))
	}
	kLex, err := kValue("k_lex", in.KLex)
	if err != nil {
		return MatchOutput{}, err
	}
	kEmb, err := kValue("k_emb", in.KEmb)
	if err != nil {
		return MatchOutput{}, err
	}
	if in.ResumeID != "" {
		if err := validateID("resume_id", in.ResumeID); err != nil {
			return MatchOutput{}, err
		}
	}
	// A missing embedder is the server's configuration, found before any read.
	var emb provider.Embedder
	if strategy == StrategyHybrid {
		if s.embedder == nil {
			return MatchOutput{}, fault.Unavailable(nil, "strategy %s needs an embedder and none is configured", StrategyHybrid)
		}
		emb = s.embedder
	} else {
		kEmb = 0
	}
	var opp Opportunity
	switch {
	case (in.OpportunityID == "") == (in.Opportunity == nil):
		return MatchOutput{}, fault.Invalid("opportunity_id", "give exactly one of opportunity_id and opportunity")
	case in.Opportunity != nil:
		o := in.Opportunity
		if opp, err = checkOpportunity("opportunity.", o.Title, o.Company, o.Description, o.Requirements); err != nil {
			return MatchOutput{}, err
		}
	default:
		if err := validateID("opportunity_id", in.OpportunityID); err != nil {
			return MatchOutput{}, err
		}
		if opp, err = s.loadOpportunity(ctx, c, in.OpportunityID); err != nil {
			return MatchOutput{}, err
		}
	}
	const tool = "match_opportunity"
	s.record(ctx, c, trace, audit.RunStarted, tool, "ok", map[string]any{"source": "career", "operation": "match_pipeline",
		"opportunity_id": opp.OpportunityID, "strategy": strategy, "resume_id": in.ResumeID})
	report, err := s.match(ctx, c, opp, strategy, kLex, kEmb, emb)
	if err != nil {
		s.record(ctx, c, trace, audit.RunCompleted, tool, "error: "+string(fault.KindOf(err)), map[string]any{"resume_id": in.ResumeID})
		return MatchOutput{}, err
	}
	s.record(ctx, c, trace, audit.MatchCompleted, tool, "ok", map[string]any{"report_id": report.ReportID,
		"overall_score": report.OverallScore, "matched_atoms": len(report.MatchedAtoms), "resume_id": in.ResumeID})
	if err := s.storeReport(ctx, c, report, trace); err != nil {
		s.record(ctx, c, trace, audit.RunCompleted, tool, "error: "+string(fault.KindOf(err)), nil)
		return MatchOutput{}, err
	}
	v, err := s.validate(ctx, c, report)
	if err != nil {
		s.record(ctx, c, trace, audit.RunCompleted, tool, "error: "+string(fault.KindOf(err)), nil)
		return MatchOutput{}, err
	}
	s.record(ctx, c, trace, audit.ValidationCompleted, tool, "ok", map[string]any{"report_id": report.ReportID,
		"status": v.Status, "finding_count": v.FindingCount})
	s.record(ctx, c, trace, audit.RunCompleted, tool, "ok", map[string]any{"report_id": report.ReportID, "resume_id": in.ResumeID})
	return MatchOutput{TraceID: trace, ResumeID: in.ResumeID, MatchReport: report, ValidationReport: v}, nil
}

func kValue(field string, k int) (int, error) {
	switch {
	case k == 0:
		return DefaultK, nil
	case k < 1 || k > MaxK:
		return 0, fault.Invalid(field, "%d is outside 1..%d", k, MaxK)
	}
	return k, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (s *Service) storeReport(ctx context.Context, c tenant.Caller, r MatchReport, trace string) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	err = s.table.Put(ctx, store.Item{PK: reportsPK(c), SK: r.ReportID, Attrs: store.Attrs{
		"report": string(b), "trace_id": trace, "created_at": stamp(s.now()),
	}}, store.Condition{})
	return unavailable(err, "storing the match report failed; retry")
}

// loadReport reads a stored match report.
func (s *Service) loadReport(ctx context.Context, c tenant.Caller, id string) (MatchReport, error) {
	it, err := s.table.Get(ctx, reportsPK(c), id)
	if errors.Is(err, store.ErrNotFound) {
		return MatchReport{}, fault.NotFound("match report %q does not exist; match_opportunity returns report ids", id)
	}
	if err != nil {
		return MatchReport{}, unavailable(err, "reading match report %q failed; retry", id)
	}
	var r MatchReport
	if err := json.Unmarshal([]byte(it.String("report")), &r); err != nil {
		return MatchReport{}, err
	}
	return r, nil
}

// candidate is an atom some ranking put forward for a requirement.
type candidate struct {
	atom   int
	fused  float64
	cosine *float64
}

// match computes the report of opp against every atom of the caller.
func (s *Service) match(ctx context.Context, c tenant.Caller, opp Opportunity, strategy string, kLex, kEmb int, emb provider.Embedder) (MatchReport, error) {
	atoms, err := s.allAtoms(ctx, c)
	if err != nil {
		return MatchReport{}, err
	}
	texts, ids := make([]string, len(atoms)), make([]string, len(atoms))
	atomTerms := make([]map[string]bool, len(atoms))
	for i, a := range atoms {
		texts[i], ids[i] = a.Text, a.AtomID
		atomTerms[i] = set(terms(a.Text)...)
	}
	ix, err := newBM25(ids, texts)
	if err != nil {
		return MatchReport{}, err
	}
	var lex lexicalIndex = ix
	var atomVecs, reqVecs [][]float32
	report := MatchReport{OpportunityID: opp.OpportunityID, OpportunitySourceHash: opp.SourceHash, Strategy: strategy,
		KLex: kLex, KEmb: kEmb, AtomsConsidered: len(atoms), MatchedAtoms: []string{}, Unsatisfied: []int{}}
	if emb != nil {
		report.EmbeddingProvider, report.EmbeddingModel, report.EmbeddingDims = emb.Provider(), emb.Model(), emb.Dims()
		if atomVecs, err = s.atomVectors(ctx, c, emb, atoms); err != nil {
			return MatchReport{}, err
		}
		e, err := emb.Embed(ctx, provider.EmbedRequest{Texts: opp.Requirements, Purpose: provider.ForQuery})
		if err != nil {
			return MatchReport{}, fault.Unavailable(err, "embedding the requirements failed; retry")
		}
		reqVecs = e.Vectors
	}
	seen := map[string]bool{}
	total := 0.0
	for ri, req := range opp.Requirements {
		rterms := unique(terms(req))
		var cands []candidate
		lexHits, err := lex.search(req, kLex)
		if err != nil {
			return MatchReport{}, err
		}
		if emb == nil {
			for _, h := range lexHits {
				cands = append(cands, candidate{atom: h.doc})
			}
		} else {
			cands = fuse(lexHits, topCosine(reqVecs[ri], atomVecs, kEmb))
			for i := range cands {
				// Lexical candidates beyond the embedding top k get their
				// similarity too, so every hybrid score means the same thing.
				if cands[i].cosine == nil {
					cos := round(cosine(reqVecs[ri], atomVecs[cands[i].atom]))
					cands[i].cosine = &cos
				}
			}
		}
		ev := Evidence{Index: ri, Requirement: req, MatchedTerms: []string{}}
		bestScore := -1.0
		for _, cd := range cands {
			matched, cov := coverage(rterms, atomTerms[cd.atom])
			score := round(evidenceScore(cov, cd.cosine))
			if score > bestScore { // candidates come best-ranked first, so ties keep the better rank
				bestScore = score
				a := atoms[cd.atom]
				ev.Score, ev.Coverage, ev.AtomID, ev.AtomSourceHash, ev.Section = score, round(cov), a.AtomID, a.SourceHash, a.Section
				ev.Cosine, ev.MatchedTerms = cd.cosine, append([]string{}, matched...)
			}
		}
		ev.Satisfied = ev.AtomID != "" && ev.Score >= SatisfiedThreshold
		if !ev.Satisfied {
			report.Unsatisfied = append(report.Unsatisfied, ri)
		} else if !seen[ev.AtomID] {
			seen[ev.AtomID] = true
			report.MatchedAtoms = append(report.MatchedAtoms, ev.AtomID)
		}
		total += ev.Score
		report.Requirements = append(report.Requirements, ev)
	}
	report.OverallScore = round(total / float64(len(opp.Requirements)))
	report.ReportID = reportID(report)
	return report, nil
}

// coverage returns the terms of a requirement (reqTerms, without repeats)
// that an atom holds, in the requirement's order, and their share.
func coverage(reqTerms []string, atomTerms map[string]bool) ([]string, float64) {
	var matched []string
	for _, w := range reqTerms {
		if atomTerms[w] {
			matched = append(matched, w)
		}
	}
	if len(reqTerms) == 0 {
		return matched, 0
	}
	return matched, float64(len(matched)) / float64(len(reqTerms))
}

// evidenceScore is the score of evidence: its coverage for the lexical
// strategy; for the hybrid one, which has a similarity, the mean of coverage
// and the similarity (negative counts as 0).
func evidenceScore(cov float64, cosine *float64) float64 {
	if cosine == nil {
		return cov
	}
	return (cov + math.Max(*cosine, 0)) / 2
}

// reportID derives a report's id from its content.
func reportID(r MatchReport) string {
	r.ReportID = ""
	b, _ := json.Marshal(r) // a report always encodes
	sum := sha256.Sum256(b)
	return "mr_" + hex.EncodeToString(sum[:10])
}

// round keeps 4 decimals, so reports compare and print stably.
func round(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// fuse merges a lexical and an embedding ranking by reciprocal rank fusion,
// best first, ties broken by atom position.
func fuse(lex []hit, vec []candidate) []candidate {
	byAtom := map[int]*candidate{}
	var order []int
	add := func(atom, rank int, cos *float64) {
		cd := byAtom[atom]
		if cd == nil {
			cd = &candidate{atom: atom}
			byAtom[atom] = cd
			order = append(order, atom)
		}
		cd.fused += 1 / float64(rrfK+rank+1)
		if cos != nil {
			cd.cosine = cos
		}
	}
	for r, h := range lex {
		add(h.doc, r, nil)
	}
	for r, v := range vec {
		add(v.atom, r, v.cosine)
	}
	out := make([]candidate, 0, len(order))
	for _, a := range order {
		out = append(out, *byAtom[a])
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].fused != out[j].fused {
			return out[i].fused > out[j].fused
		}
		return out[i].atom < out[j].atom
	})
	return out
}

// topCosine returns the k atoms most similar to q, best first.
func topCosine(q []float32, atoms [][]float32, k int) []candidate {
	out := make([]candidate, 0, len(atoms))
	for i, v := range atoms {
		cos := round(cosine(q, v))
		out = append(out, candidate{atom: i, cosine: &cos})
	}
	sort.SliceStable(out, func(i, j int) bool { return *out[i].cosine > *out[j].cosine })
	if len(out) > k {
		out = out[:k]
	}
	return out
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range min(len(a), len(b)) {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// atomVectors returns a vector for every atom: the one index_build stored for
// this embedder if the atom has not changed since, else a fresh embedding.
func (s *Service) atomVectors(ctx context.Context, c tenant.Caller, emb provider.Embedder, atoms []Atom) ([][]float32, error) {
	stored := map[string]store.Item{}
	if len(atoms) <= MaxBatchIDs {
		// A few atoms (the ones a report cites) are read one by one.
		for _, a := range atoms {
			it, err := s.table.Get(ctx, vecPK(c, emb), kindAtoms+"#"+a.AtomID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, unavailable(err, "reading the atom index failed; retry")
			}
			if err == nil {
				stored[it.SK] = it
			}
		}
	} else {
		items, err := s.queryAll(ctx, vecPK(c, emb), kindAtoms+"#")
		if err != nil {
			return nil, unavailable(err, "reading the atom index failed; retry")
		}
		for _, it := range items {
			stored[it.SK] = it
		}
	}
	out := make([][]float32, len(atoms))
	var missing []int
	for i, a := range atoms {
		if it, ok := stored[kindAtoms+"#"+a.AtomID]; ok && it.String("source_hash") == a.SourceHash {
			out[i] = decodeVector(it.Bytes("vector"))
		} else {
			missing = append(missing, i)
		}
	}
	for start := 0; start < len(missing); start += embedBatch {
		batch := missing[start:min(start+embedBatch, len(missing))]
		texts := make([]string, len(batch))
		for j, i := range batch {
			texts[j] = atoms[i].Text
		}
		e, err := emb.Embed(ctx, provider.EmbedRequest{Texts: texts, Purpose: provider.ForDocument})
		if err != nil {
			return nil, fault.Unavailable(err, "embedding atoms failed; retry")
		}
		for j, i := range batch {
			out[i] = e.Vectors[j]
		}
	}
	return out, nil
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
