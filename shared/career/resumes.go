package career

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/document"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// MaxResumeBytes bounds a resume file.
const MaxResumeBytes = 10 << 20

// MaxInlineResumeBytes bounds a resume passed inline (content_base64,
// decoded): its base64 in a request must reach the deployed gateway, whose
// requests are bounded by a Lambda invocation's payload (see
// catalog.MaxRequestBytes). Larger files go by s3_key.
const MaxInlineResumeBytes = 3 << 20

// MaxResumeAtoms bounds the atoms one resume yields.
const MaxResumeAtoms = 500

// IngestResumeInput is the input of ingest_resume.
type IngestResumeInput struct {
	S3Key         string `json:"s3_key,omitempty" jsonschema:"an object key under your tenant's prefix (tenants/<tenant>/...); give this or content_base64"`
	ContentBase64 string `json:"content_base64,omitempty" jsonschema:"the file's bytes, base64; give this or s3_key"`
	FileName      string `json:"file_name,omitempty" jsonschema:"the file's name, whose extension (.md, .txt, .docx, .pdf) says its format; required with content_base64"`
	Persist       *bool  `json:"persist,omitempty" jsonschema:"store the resume and its atoms (default true); false only extracts"`
	TraceID       string `json:"trace_id,omitempty" jsonschema:"the call's trace: its audit events and the result's _meta use it; the call's own if omitted"`
}

// IngestResumeOutput is the output of ingest_resume.
type IngestResumeOutput struct {
	ResumeID   string `json:"resume_id" jsonschema:"derived from resume_hash: the same content is the same resume"`
	ResumeHash string `json:"resume_hash" jsonschema:"sha256: and the SHA-256 of the canonical Markdown, in hex"`
	SourceHash string `json:"source_hash" jsonschema:"the stable 64-bit hash of the canonical Markdown, in hex"`
	Format     string `json:"format"`
	Title      string `json:"title,omitempty"`
	Persisted  bool   `json:"persisted"`
	ObjectKey  string `json:"object_key,omitempty" jsonschema:"where the canonical Markdown is stored"`
	Atoms      []Atom `json:"atoms" jsonschema:"the experience atoms, one per accomplishment or skill statement; for a resume ingested before, as stored (your edits kept)"`
	// RemovedAtoms are atoms an earlier ingestion of this resume extracted
	// that this one no longer yields (the extractor changed) and nobody
	// edited: they are deleted.
	RemovedAtoms []string `json:"removed_atoms,omitempty" jsonschema:"atoms of an earlier ingestion that this one no longer extracts and nobody edited, now deleted"`
	Warnings     []string `json:"warnings,omitempty" jsonschema:"what to know about the result: no atoms found, or atoms kept that this ingestion no longer extracts"`
	CanonicalLen int      `json:"canonical_chars"`
	TraceID      string   `json:"trace_id"`
}

func resumesPK(c tenant.Caller) string { return pk(c, "resumes") }

// IngestResume serves ingest_resume: it reads the resume (a key under the
// caller's prefix is checked before anything is read), turns it into
// canonical Markdown, extracts its atoms and, if persist, stores the
// Markdown (and an inline original) in the Blobs and the resume record and
// atoms in the Table. A file that cannot be read stores nothing.
//
// Ingesting a resume again never clobbers: the same content is the same
// resume and each statement keeps its atom id, so an atom that exists is
// left as it is (text, edits, version) and only missing atoms are created,
// each on condition that it is absent. Atoms of an earlier ingestion that
// this one does not yield (after a change of the extractor) are deleted if
// nobody edited them since, on condition that they are still at version 1,
// and kept, with a warning, otherwise.
func (s *Service) IngestResume(ctx context.Context, c tenant.Caller, in IngestResumeInput) (IngestResumeOutput, error) {
	trace, err := traceID(ctx, in.TraceID)
	if err != nil {
		return IngestResumeOutput{}, err
	}
	persist := in.Persist == nil || *in.Persist
	var name, field string
	var data []byte
	switch {
	case (in.S3Key == "") == (in.ContentBase64 == ""):
		return IngestResumeOutput{}, fault.Invalid("s3_key", "give exactly one of s3_key and content_base64")
	case in.S3Key != "":
		field = "s3_key"
		if err := tenant.OwnBlobKey(c, in.S3Key); err != nil {
			return IngestResumeOutput{}, fault.Invalid("s3_key", "%v", err)
		}
		if in.FileName != "" {
			return IngestResumeOutput{}, fault.Invalid("file_name", "goes with content_base64; an s3_key names its file itself")
		}
		name = path.Base(in.S3Key)
	default:
		field = "content_base64"
		if strings.TrimSpace(in.FileName) == "" {
			return IngestResumeOutput{}, fault.Invalid("file_name", "is required with content_base64: its extension says the format")
		}
		if strings.ContainsAny(in.FileName, "/\\\x00") || len(in.FileName) > 255 {
			return IngestResumeOutput{}, fault.Invalid("file_name", "must be a plain file name of at most 255 bytes, without slashes")
		}
		name = in.FileName
		if data, err = decodeInline(in.ContentBase64); err != nil {
			return IngestResumeOutput{}, err
		}
	}
	if err := checkFormat(name); err != nil {
		if field == "content_base64" {
			field = "file_name"
		}
		return IngestResumeOutput{}, fault.Invalid(field, "%v", err)
	}
	if persist && s.blobs == nil {
		return IngestResumeOutput{}, fault.Unavailable(nil, "storing resumes needs the object store and none is configured; pass persist false to only extract")
	}
	s.record(ctx, c, trace, audit.IngestStarted, ingestTool, "ok", map[string]any{"source": field, "file_name": name, "persist": persist})
	out, err := s.ingest(ctx, c, in.S3Key, name, field, data, persist, trace)
	switch {
	case err != nil:
		s.record(ctx, c, trace, audit.IngestCompleted, ingestTool, "error: "+string(fault.KindOf(err)), ingestDetail(out))
	case !out.Persisted:
		s.record(ctx, c, trace, audit.IngestCompleted, ingestTool, "ok", ingestDetail(out))
	}
	// A persisted resume's IngestCompleted landed with its record.
	return out, err
}

const ingestTool = "ingest_resume"

func ingestDetail(out IngestResumeOutput) map[string]any {
	return map[string]any{"resume_id": out.ResumeID, "resume_hash": out.ResumeHash, "source_hash": out.SourceHash,
		"atoms": len(out.Atoms), "removed_atoms": out.RemovedAtoms, "persisted": out.Persisted}
}

func (s *Service) ingest(ctx context.Context, c tenant.Caller, key, name, field string, data []byte, persist bool, trace string) (IngestResumeOutput, error) {
	if key != "" {
		if s.blobs == nil {
			return IngestResumeOutput{}, fault.Unavailable(nil, "reading resumes needs the object store and none is configured")
		}
		r, info, err := s.blobs.Get(ctx, key, nil)
		if errors.Is(err, store.ErrNotFound) {
			return IngestResumeOutput{}, fault.NotFound("no object %q (%s): put the resume there first", key, store.LookedFor(s.blobs, key))
		}
		if err != nil {
			return IngestResumeOutput{}, fault.Unavailable(err, "reading %s failed; retry", key)
		}
		defer r.Close()
		if info.Size > MaxResumeBytes || info.Size > document.MaxBytes {
			return IngestResumeOutput{}, fault.Invalid("s3_key", "object is %d bytes, more than %d", info.Size, MaxResumeBytes)
		}
		if data, err = io.ReadAll(io.LimitReader(r, MaxResumeBytes+1)); err != nil {
			return IngestResumeOutput{}, fault.Unavailable(err, "reading %s failed; retry", key)
		}
	}
	doc, err := extract(ctx, name, data)
	switch {
	case errors.Is(err, document.ErrUnsupported):
		return IngestResumeOutput{}, fault.Invalid(field, "%s is not a resume this server reads: %v", name, err)
	case errors.Is(err, document.ErrTooLarge):
		return IngestResumeOutput{}, fault.Invalid(field, "%s is refused: %v", name, err)
	case errors.Is(err, document.ErrCorrupt):
		return IngestResumeOutput{}, fault.Invalid(field, "%s cannot be read, it looks corrupt: %v", name, err)
	case err != nil:
		return IngestResumeOutput{}, err // the call's deadline passed
	}
	md := doc.Markdown
	if strings.TrimSpace(md) == "" {
		return IngestResumeOutput{}, fault.Invalid(field, "%s holds no text", name)
	}
	sum := sha256.Sum256([]byte(md))
	out := IngestResumeOutput{ResumeHash: "sha256:" + hex.EncodeToString(sum[:]), SourceHash: hash64Hex(md),
		Format: doc.Format, Title: doc.Title, CanonicalLen: len([]rune(md)), TraceID: trace}
	out.ResumeID = "resume_" + hex.EncodeToString(sum[:8])
	now := s.now()
	stmts := extractAtoms(md)
	if len(stmts) > MaxResumeAtoms {
		return IngestResumeOutput{}, fault.Invalid(field, "%s yields more than %d statements, the limit per resume", name, MaxResumeAtoms)
	}
	if len(stmts) == 0 {
		out.Warnings = append(out.Warnings, "no experience atoms found: no section headed like Experience, Projects or Skills holds a bullet or a sentence; add such headings, or create atoms with atom_create")
	}
	out.Atoms = make([]Atom, len(stmts))
	ids := atomIDs(out.ResumeID, stmts)
	for i, st := range stmts {
		out.Atoms[i] = Atom{AtomID: ids[i], Text: st.text, Section: st.section, ResumeID: out.ResumeID,
			SourceHash: hash64Hex(st.text), Version: 1, CreatedAt: now, UpdatedAt: now}
	}
	if !persist {
		return out, nil
	}
	if err := s.persistResume(ctx, c, &out, key, name, md, data, trace); err != nil {
		return IngestResumeOutput{}, err
	}
	return out, nil
}

// persistResume stores the resume of out: its objects, then its atoms, then
// its record.
//
// The objects go first, under keys derived from the content (the resume id
// is the canonical text's SHA-256), and only for a resume not recorded yet:
// a failed table write leaves objects that the retry its error asks for
// writes again and then records, never a second copy.
//
// The record is the commit point: it lands in the last transaction, with
// IngestCompleted, after every atom. A resume with more atoms than one
// transaction holds is written a transaction at a time; if one fails there is
// no record, and ingesting again completes the atoms (the same ids; those
// already stored are kept).
func (s *Service) persistResume(ctx context.Context, c tenant.Caller, out *IngestResumeOutput, key, name, md string, data []byte, trace string) error {
	rec, err := s.table.Get(ctx, resumesPK(c), out.ResumeID)
	recorded := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return unavailable(err, "reading the resume record failed; retry")
	}
	prefix := tenant.BlobPrefix(c.Tenant) + "resumes/" + out.ResumeID + "/"
	out.ObjectKey = prefix + "canonical.md"
	original := key
	if key == "" {
		original = prefix + "original" + strings.ToLower(path.Ext(name))
	}
	if recorded {
		out.ObjectKey, original = rec.String("canonical_key"), rec.String("object_key")
	} else {
		if _, err := s.blobs.Put(ctx, out.ObjectKey, []byte(md), &store.PutOptions{ContentType: "text/markdown; charset=utf-8"}); err != nil {
			return fault.Unavailable(err, "storing the resume failed; retry")
		}
		if key == "" {
			if _, err := s.blobs.Put(ctx, original, data, nil); err != nil {
				return fault.Unavailable(err, "storing the resume failed; retry")
			}
		}
	}
	record := store.Item{PK: resumesPK(c), SK: out.ResumeID, Attrs: store.Attrs{
		"file_name": name, "format": out.Format, "title": out.Title, "object_key": original, "canonical_key": out.ObjectKey,
		"resume_hash": out.ResumeHash, "source_hash": out.SourceHash, "atoms": int64(len(out.Atoms)),
		"trace_id": trace, "created_at": stamp(s.now()),
	}}
	extracted := slices.Clone(out.Atoms)
	for attempt := 0; ; attempt++ {
		kept, err := s.storeAtoms(ctx, c, out, extracted, record, trace)
		if err == nil {
			out.Persisted = true
			if len(kept) > 0 {
				out.Warnings = append(out.Warnings, fmt.Sprintf("kept %d atoms that an earlier ingestion of this resume extracted and this one does not, as they may hold your edits: %s",
					len(kept), strings.Join(kept, ", ")))
			}
			return nil
		}
		if !lostRace(err) || attempt >= store.MaxRetries || ctx.Err() != nil {
			return unavailable(err, "storing the resume's atoms failed; ingest it again")
		}
		// Another writer (a concurrent ingestion, an atom_update) got there
		// first: read again and write only what is still missing.
		backoff(ctx, attempt)
	}
}

// storeAtoms makes one attempt at writing the atoms of out that are missing,
// deleting the unedited ones this extraction no longer yields, and then the
// record (if absent) with IngestCompleted. out.Atoms become the atoms as
// stored. It returns the atoms it kept although this extraction does not
// yield them.
func (s *Service) storeAtoms(ctx context.Context, c tenant.Caller, out *IngestResumeOutput, extracted []Atom, record store.Item, trace string) (kept []string, err error) {
	items, err := s.queryAll(ctx, atomsPK(c), atomIDPrefix(out.ResumeID))
	if err != nil {
		return nil, err
	}
	stored := make(map[string]store.Item, len(items))
	for _, it := range items {
		stored[it.SK] = it
	}
	var writes []store.Write
	wanted := make(map[string]bool, len(extracted))
	for i, a := range extracted {
		wanted[a.AtomID] = true
		if it, ok := stored[a.AtomID]; ok {
			out.Atoms[i] = toAtom(it)
			continue
		}
		out.Atoms[i] = a
		it := atomItem(c, a)
		it.Attrs[attrExtracted] = true // atom_update rewrites the item without it
		writes = append(writes, store.Put(it, store.IfAbsent()))
	}
	out.RemovedAtoms = nil
	for _, it := range items {
		switch {
		case wanted[it.SK]:
		case it.Bool(attrExtracted) && it.Int("ver") == 1:
			out.RemovedAtoms = append(out.RemovedAtoms, it.SK)
			writes = append(writes, store.Delete(it.PK, it.SK, store.IfEquals("ver", int64(1))))
		default:
			kept = append(kept, it.SK)
		}
	}
	if _, err := s.table.Get(ctx, record.PK, record.SK); errors.Is(err, store.ErrNotFound) {
		writes = append(writes, store.Put(record, store.IfAbsent()))
	} else if err != nil {
		return nil, err
	}
	detail := ingestDetail(*out)
	detail["persisted"] = true
	completed, err := s.auditWrite(c, trace, audit.IngestCompleted, ingestTool, detail)
	if err != nil {
		return nil, err
	}
	writes = append(writes, completed)
	for start := 0; start < len(writes); start += store.MaxTransactWrites {
		if err := s.table.Transact(ctx, writes[start:min(start+store.MaxTransactWrites, len(writes))]...); err != nil {
			return nil, err
		}
	}
	return kept, nil
}

// attrExtracted marks an atom as ingest_resume wrote it: untouched since.
const attrExtracted = "extracted"

func atomIDPrefix(resumeID string) string {
	return "atom_" + strings.TrimPrefix(resumeID, "resume_") + "_"
}

// atomIDs returns the ids of a resume's statements. An id derives from the
// resume and the statement's section and text, not its position, so the same
// statement keeps its atom when the resume is ingested again, even by an
// extractor that finds other statements around it; a statement repeated in a
// section gets a counter.
func atomIDs(resumeID string, stmts []statement) []string {
	ids := make([]string, len(stmts))
	seen := map[string]int{}
	for i, st := range stmts {
		sum := sha256.Sum256([]byte(st.section + "\n" + st.text))
		id := atomIDPrefix(resumeID) + hex.EncodeToString(sum[:6])
		if seen[id]++; seen[id] > 1 {
			id += fmt.Sprintf("_%d", seen[id])
		}
		ids[i] = id
	}
	return ids
}

// decodeInline decodes a resume passed as content_base64, refusing one over
// MaxInlineResumeBytes before decoding it.
func decodeInline(b64 string) ([]byte, error) {
	tooBig := fault.Invalid("content_base64", "decodes to more than %d bytes; pass a larger file by s3_key", MaxInlineResumeBytes)
	if base64.StdEncoding.DecodedLen(len(b64)) > MaxInlineResumeBytes+2 {
		return nil, tooBig
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fault.Invalid("content_base64", "is not base64: %v", err)
	}
	if len(data) > MaxInlineResumeBytes {
		return nil, tooBig
	}
	return data, nil
}
