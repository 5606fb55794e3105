package career

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// MaxSectionChars bounds an atom's section.
const MaxSectionChars = 200

func atomsPK(c tenant.Caller) string { return pk(c, "atoms") }

func atomItem(c tenant.Caller, a Atom) store.Item {
	return store.Item{PK: atomsPK(c), SK: a.AtomID, Attrs: store.Attrs{
		"text": a.Text, "section": a.Section, "resume_id": a.ResumeID, "source_hash": a.SourceHash,
		"ver": a.Version, "created_at": stamp(a.CreatedAt), "updated_at": stamp(a.UpdatedAt),
	}}
}

func toAtom(it store.Item) Atom {
	return Atom{AtomID: it.SK, Text: it.String("text"), Section: it.String("section"), ResumeID: it.String("resume_id"),
		SourceHash: it.String("source_hash"), Version: it.Int("ver"),
		CreatedAt: parseTime(it.String("created_at")), UpdatedAt: parseTime(it.String("updated_at"))}
}

// atomDetail is the audit detail of a change that left a at its version,
// from previous (0 for a new atom).
func atomDetail(a Atom, previous int64) map[string]any {
	return map[string]any{"atom_id": a.AtomID, "version": a.Version, "previous_version": previous,
		"source_hash": a.SourceHash, "resume_id": a.ResumeID}
}

// checkText validates a required text argument named field of at most max characters.
func checkText(field, s string, max int) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fault.Invalid(field, "must not be empty")
	}
	if n := utf8.RuneCountInString(s); n > max {
		return "", fault.Invalid(field, "is %d characters, more than %d", n, max)
	}
	return s, nil
}

// checkOptional validates an optional text argument.
func checkOptional(field, s string, max int) (string, error) {
	if strings.TrimSpace(s) == "" {
		return "", nil
	}
	return checkText(field, s, max)
}

func (s *Service) atomFields(text, section, resumeID string) (Atom, error) {
	var a Atom
	var err error
	if a.Text, err = checkText("text", text, MaxTextChars); err != nil {
		return a, err
	}
	if a.Section, err = checkOptional("section", section, MaxSectionChars); err != nil {
		return a, err
	}
	if resumeID != "" {
		if err := validateID("resume_id", resumeID); err != nil {
			return a, err
		}
	}
	a.ResumeID = resumeID
	a.SourceHash = hash64Hex(a.Text)
	return a, nil
}

// CreateAtom serves atom_create: it stores a new atom under a generated id.
func (s *Service) CreateAtom(ctx context.Context, c tenant.Caller, in AtomCreateInput) (AtomOutput, error) {
	trace, err := traceID(ctx, in.TraceID)
	if err != nil {
		return AtomOutput{}, err
	}
	a, err := s.atomFields(in.Text, in.Section, in.ResumeID)
	if err != nil {
		return AtomOutput{}, err
	}
	a.AtomID, a.Version = s.newID("atom"), 1
	a.CreatedAt = s.now()
	a.UpdatedAt = a.CreatedAt
	rec, err := s.auditWrite(c, trace, audit.AtomCreated, "atom_create", atomDetail(a, 0))
	if err != nil {
		return AtomOutput{}, err
	}
	if err := s.table.Transact(ctx, store.Put(atomItem(c, a), store.IfAbsent()), rec); err != nil {
		return AtomOutput{}, unavailable(err, "storing the atom failed; retry")
	}
	return AtomOutput{Atom: a, TraceID: trace}, nil
}

// UpdateAtom serves atom_update: it replaces the atom's fields if it is still
// at expected_version, or creates it under the given id when expected_version is 0.
func (s *Service) UpdateAtom(ctx context.Context, c tenant.Caller, in AtomUpdateInput) (AtomOutput, error) {
	trace, err := traceID(ctx, in.TraceID)
	if err != nil {
		return AtomOutput{}, err
	}
	if err := validateID("atom_id", in.AtomID); err != nil {
		return AtomOutput{}, err
	}
	if in.ExpectedVersion < 0 {
		return AtomOutput{}, fault.Invalid("expected_version", "must be 0 (create) or the version you read")
	}
	a, err := s.atomFields(in.Text, in.Section, in.ResumeID)
	if err != nil {
		return AtomOutput{}, err
	}
	a.AtomID = in.AtomID
	now := s.now()
	cond := store.IfAbsent()
	if in.ExpectedVersion == 0 {
		a.CreatedAt = now
	} else {
		cur, err := s.table.Get(ctx, atomsPK(c), in.AtomID)
		if errors.Is(err, store.ErrNotFound) {
			return AtomOutput{}, fault.NotFound("atom %q does not exist; create it with atom_create, or atom_update with expected_version 0", in.AtomID)
		}
		if err != nil {
			return AtomOutput{}, unavailable(err, "reading atom %q failed; retry", in.AtomID)
		}
		if v := cur.Int("ver"); v != in.ExpectedVersion {
			return AtomOutput{}, fault.Conflict(nil, "atom %q is at version %d, not %d: read it again and reapply your change", in.AtomID, v, in.ExpectedVersion)
		}
		a.CreatedAt = parseTime(cur.String("created_at"))
		cond = store.IfEquals("ver", in.ExpectedVersion)
	}
	a.Version, a.UpdatedAt = in.ExpectedVersion+1, now
	typ := audit.AtomUpdated
	if in.ExpectedVersion == 0 {
		typ = audit.AtomCreated
	}
	rec, err := s.auditWrite(c, trace, typ, "atom_update", atomDetail(a, in.ExpectedVersion))
	if err != nil {
		return AtomOutput{}, err
	}
	err = s.table.Transact(ctx, store.Put(atomItem(c, a), cond), rec)
	if lostRace(err) {
		if in.ExpectedVersion == 0 {
			return AtomOutput{}, fault.Conflict(err, "atom %q already exists: read it and update it with its version", in.AtomID)
		}
		return AtomOutput{}, fault.Conflict(err, "atom %q changed since version %d: read it again and reapply your change", in.AtomID, in.ExpectedVersion)
	}
	if err != nil {
		return AtomOutput{}, unavailable(err, "storing atom %q failed; retry", in.AtomID)
	}
	return AtomOutput{Atom: a, TraceID: trace}, nil
}

// GetAtoms serves atom_get: the atoms with the given ids that the caller has.
func (s *Service) GetAtoms(ctx context.Context, c tenant.Caller, in AtomGetInput) (AtomGetOutput, error) {
	if err := validateIDs("atom_ids", in.AtomIDs); err != nil {
		return AtomGetOutput{}, err
	}
	out := AtomGetOutput{Atoms: []Atom{}, Missing: []string{}}
	for _, id := range in.AtomIDs {
		it, err := s.table.Get(ctx, atomsPK(c), id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			out.Missing = append(out.Missing, id)
		case err != nil:
			return AtomGetOutput{}, unavailable(err, "reading atom %q failed; retry", id)
		default:
			out.Atoms = append(out.Atoms, toAtom(it))
		}
	}
	return out, nil
}

// ListAtoms serves atom_list: a page of the caller's atoms by id. With
// resume_id, a page holds only that resume's atoms and may be shorter than
// limit while more remain.
func (s *Service) ListAtoms(ctx context.Context, c tenant.Caller, in AtomListInput) (AtomListOutput, error) {
	limit, err := pageLimit(in.Limit)
	if err != nil {
		return AtomListOutput{}, err
	}
	if in.ResumeID != "" {
		if err := validateID("resume_id", in.ResumeID); err != nil {
			return AtomListOutput{}, err
		}
	}
	page, err := s.table.Query(ctx, atomsPK(c), store.Query{Cursor: in.Cursor, Limit: limit})
	if errors.Is(err, store.ErrInvalid) {
		return AtomListOutput{}, fault.Invalid("cursor", "is not a cursor from a previous atom_list call")
	}
	if err != nil {
		return AtomListOutput{}, unavailable(err, "listing atoms failed; retry")
	}
	out := AtomListOutput{Atoms: []Atom{}, NextCursor: page.Next}
	for _, it := range page.Items {
		if a := toAtom(it); in.ResumeID == "" || a.ResumeID == in.ResumeID {
			out.Atoms = append(out.Atoms, a)
		}
	}
	return out, nil
}

// allAtoms returns every atom of the caller, by id.
func (s *Service) allAtoms(ctx context.Context, c tenant.Caller) ([]Atom, error) {
	items, err := s.queryAll(ctx, atomsPK(c), "")
	if err != nil {
		return nil, unavailable(err, "reading your atoms failed; retry")
	}
	if len(items) > MaxAtoms {
		return nil, fault.Invalid("atoms", "you have %d atoms, more than the %d matching considers", len(items), MaxAtoms)
	}
	out := make([]Atom, len(items))
	for i, it := range items {
		out[i] = toAtom(it)
	}
	return out, nil
}
