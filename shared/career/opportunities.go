package career

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// MaxTitleChars bounds an opportunity's title and company.
const MaxTitleChars = 300

func oppsPK(c tenant.Caller) string { return pk(c, "opps") }

func oppItem(c tenant.Caller, o Opportunity) store.Item {
	reqs, _ := json.Marshal(o.Requirements) // a []string always encodes
	return store.Item{PK: oppsPK(c), SK: o.OpportunityID, Attrs: store.Attrs{
		"title": o.Title, "company": o.Company, "description": o.Description, "requirements": string(reqs),
		"source_hash": o.SourceHash, "ver": o.Version, "created_at": stamp(o.CreatedAt), "updated_at": stamp(o.UpdatedAt),
	}}
}

func toOpportunity(it store.Item) Opportunity {
	o := Opportunity{OpportunityID: it.SK, Title: it.String("title"), Company: it.String("company"),
		Description: it.String("description"), SourceHash: it.String("source_hash"), Version: it.Int("ver"),
		CreatedAt: parseTime(it.String("created_at")), UpdatedAt: parseTime(it.String("updated_at"))}
	json.Unmarshal([]byte(it.String("requirements")), &o.Requirements)
	if o.Requirements == nil {
		o.Requirements = []string{}
	}
	return o
}

// oppDetail is the audit detail of a change that left o at its version, from
// previous (0 for a new opportunity).
func oppDetail(o Opportunity, previous int64) map[string]any {
	return map[string]any{"opportunity_id": o.OpportunityID, "version": o.Version, "previous_version": previous,
		"source_hash": o.SourceHash, "requirements": len(o.Requirements)}
}

// canonicalText is the text of an opportunity that its source hash covers
// and that is embedded and matched against.
func (o Opportunity) canonicalText() string {
	var b strings.Builder
	b.WriteString(o.Title)
	for _, s := range []string{o.Company, o.Description} {
		if s != "" {
			b.WriteString("\n\n" + s)
		}
	}
	for _, r := range o.Requirements {
		b.WriteString("\n- " + r)
	}
	return b.String()
}

// checkOpportunity validates an opportunity's fields; prefix is prepended to
// the field names ("opportunity." for an inline one).
func checkOpportunity(prefix, title, company, description string, reqs []string) (Opportunity, error) {
	var o Opportunity
	var err error
	if o.Title, err = checkText(prefix+"title", title, MaxTitleChars); err != nil {
		return o, err
	}
	if o.Company, err = checkOptional(prefix+"company", company, MaxTitleChars); err != nil {
		return o, err
	}
	if o.Description, err = checkOptional(prefix+"description", description, MaxDescriptionChars); err != nil {
		return o, err
	}
	if len(reqs) == 0 || len(reqs) > MaxRequirements {
		return o, fault.Invalid(prefix+"requirements", "has %d requirements, want 1..%d", len(reqs), MaxRequirements)
	}
	o.Requirements = make([]string, len(reqs))
	for i, r := range reqs {
		if o.Requirements[i], err = checkText(fmt.Sprintf("%srequirements[%d]", prefix, i), r, MaxTextChars); err != nil {
			return o, err
		}
	}
	o.SourceHash = hash64Hex(o.canonicalText())
	return o, nil
}

// CreateOpportunity serves opportunity_create: it stores a new opportunity under a generated id.
func (s *Service) CreateOpportunity(ctx context.Context, c tenant.Caller, in OpportunityCreateInput) (OpportunityOutput, error) {
	trace, err := traceID(ctx, in.TraceID)
	if err != nil {
		return OpportunityOutput{}, err
	}
	o, err := checkOpportunity("", in.Title, in.Company, in.Description, in.Requirements)
	if err != nil {
		return OpportunityOutput{}, err
	}
	o.OpportunityID, o.Version = s.newID("opp"), 1
	o.CreatedAt = s.now()
	o.UpdatedAt = o.CreatedAt
	rec, err := s.auditWrite(c, trace, audit.OpportunityCreated, "opportunity_create", oppDetail(o, 0))
	if err != nil {
		return OpportunityOutput{}, err
	}
	if err := s.table.Transact(ctx, store.Put(oppItem(c, o), store.IfAbsent()), rec); err != nil {
		return OpportunityOutput{}, unavailable(err, "storing the opportunity failed; retry")
	}
	return OpportunityOutput{Opportunity: o, TraceID: trace}, nil
}

// UpdateOpportunity serves opportunity_update: it replaces the opportunity's
// fields if it is still at expected_version, or creates it under the given
// id when expected_version is 0.
func (s *Service) UpdateOpportunity(ctx context.Context, c tenant.Caller, in OpportunityUpdateInput) (OpportunityOutput, error) {
	trace, err := traceID(ctx, in.TraceID)
	if err != nil {
		return OpportunityOutput{}, err
	}
	if err := validateID("opportunity_id", in.OpportunityID); err != nil {
		return OpportunityOutput{}, err
	}
	if in.ExpectedVersion < 0 {
		return OpportunityOutput{}, fault.Invalid("expected_version", "must be 0 (create) or the version you read")
	}
	o, err := checkOpportunity("", in.Title, in.Company, in.Description, in.Requirements)
	if err != nil {
		return OpportunityOutput{}, err
	}
	o.OpportunityID = in.OpportunityID
	now := s.now()
	cond := store.IfAbsent()
	if in.ExpectedVersion == 0 {
		o.CreatedAt = now
	} else {
		cur, err := s.table.Get(ctx, oppsPK(c), in.OpportunityID)
		if errors.Is(err, store.ErrNotFound) {
			return OpportunityOutput{}, oppNotFound(in.OpportunityID)
		}
		if err != nil {
			return OpportunityOutput{}, unavailable(err, "reading opportunity %q failed; retry", in.OpportunityID)
		}
		if v := cur.Int("ver"); v != in.ExpectedVersion {
			return OpportunityOutput{}, fault.Conflict(nil, "opportunity %q is at version %d, not %d: read it again and reapply your change", in.OpportunityID, v, in.ExpectedVersion)
		}
		o.CreatedAt = parseTime(cur.String("created_at"))
		cond = store.IfEquals("ver", in.ExpectedVersion)
	}
	o.Version, o.UpdatedAt = in.ExpectedVersion+1, now
	typ := audit.OpportunityUpdated
	if in.ExpectedVersion == 0 {
		typ = audit.OpportunityCreated
	}
	rec, err := s.auditWrite(c, trace, typ, "opportunity_update", oppDetail(o, in.ExpectedVersion))
	if err != nil {
		return OpportunityOutput{}, err
	}
	err = s.table.Transact(ctx, store.Put(oppItem(c, o), cond), rec)
	if lostRace(err) {
		if in.ExpectedVersion == 0 {
			return OpportunityOutput{}, fault.Conflict(err, "opportunity %q already exists: read it and update it with its version", in.OpportunityID)
		}
		return OpportunityOutput{}, fault.Conflict(err, "opportunity %q changed since version %d: read it again and reapply your change", in.OpportunityID, in.ExpectedVersion)
	}
	if err != nil {
		return OpportunityOutput{}, unavailable(err, "storing opportunity %q failed; retry", in.OpportunityID)
	}
	return OpportunityOutput{Opportunity: o, TraceID: trace}, nil
}

func oppNotFound(id string) error {
	return fault.NotFound("opportunity %q does not exist; create it with opportunity_create", id)
}

// loadOpportunity reads one opportunity of the caller.
func (s *Service) loadOpportunity(ctx context.Context, c tenant.Caller, id string) (Opportunity, error) {
	it, err := s.table.Get(ctx, oppsPK(c), id)
	if errors.Is(err, store.ErrNotFound) {
		return Opportunity{}, oppNotFound(id)
	}
	if err != nil {
		return Opportunity{}, unavailable(err, "reading opportunity %q failed; retry", id)
	}
	return toOpportunity(it), nil
}

// GetOpportunities serves opportunity_get.
func (s *Service) GetOpportunities(ctx context.Context, c tenant.Caller, in OpportunityGetInput) (OpportunityGetOutput, error) {
	if err := validateIDs("opportunity_ids", in.OpportunityIDs); err != nil {
		return OpportunityGetOutput{}, err
	}
	out := OpportunityGetOutput{Opportunities: []Opportunity{}, Missing: []string{}}
	for _, id := range in.OpportunityIDs {
		o, err := s.loadOpportunity(ctx, c, id)
		switch {
		case fault.KindOf(err) == fault.KindNotFound:
			out.Missing = append(out.Missing, id)
		case err != nil:
			return OpportunityGetOutput{}, err
		default:
			out.Opportunities = append(out.Opportunities, o)
		}
	}
	return out, nil
}

// ListOpportunities serves opportunity_list: a page of the caller's opportunities by id.
func (s *Service) ListOpportunities(ctx context.Context, c tenant.Caller, in ListInput) (OpportunityListOutput, error) {
	limit, err := pageLimit(in.Limit)
	if err != nil {
		return OpportunityListOutput{}, err
	}
	page, err := s.table.Query(ctx, oppsPK(c), store.Query{Cursor: in.Cursor, Limit: limit})
	if errors.Is(err, store.ErrInvalid) {
		return OpportunityListOutput{}, fault.Invalid("cursor", "is not a cursor from a previous opportunity_list call")
	}
	if err != nil {
		return OpportunityListOutput{}, unavailable(err, "listing opportunities failed; retry")
	}
	out := OpportunityListOutput{Opportunities: make([]Opportunity, len(page.Items)), NextCursor: page.Next}
	for i, it := range page.Items {
		out.Opportunities[i] = toOpportunity(it)
	}
	return out, nil
}
