package career

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"path"
	"regexp"
	"strings"
	"unicode"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/document"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// MaxResumeBytes bounds a resume file.
const MaxResumeBytes = 10 << 20

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
	ResumeID     string `json:"resume_id" jsonschema:"derived from resume_hash: the same content is the same resume"`
	ResumeHash   string `json:"resume_hash" jsonschema:"sha256: and the SHA-256 of the canonical Markdown, in hex"`
	SourceHash   string `json:"source_hash" jsonschema:"the stable 64-bit hash of the canonical Markdown, in hex"`
	Format       string `json:"format"`
	Title        string `json:"title,omitempty"`
	Persisted    bool   `json:"persisted"`
	ObjectKey    string `json:"object_key,omitempty" jsonschema:"where the canonical Markdown is stored"`
	Atoms        []Atom `json:"atoms" jsonschema:"the experience atoms extracted, one per accomplishment or skill statement"`
	CanonicalLen int    `json:"canonical_chars"`
	TraceID      string `json:"trace_id"`
}

func resumesPK(c tenant.Caller) string { return pk(c, "resumes") }

// IngestResume serves ingest_resume: it reads the resume (a key under the
// caller's prefix is checked before anything is read), turns it into
// canonical Markdown, extracts its atoms and, if persist, stores the
// Markdown (and an inline original) in the Blobs and the resume record and
// atoms in the Table. A file that cannot be read stores nothing.
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
		if base64.StdEncoding.DecodedLen(len(in.ContentBase64)) > MaxResumeBytes+3 {
			return IngestResumeOutput{}, fault.Invalid("content_base64", "decodes to more than %d bytes", MaxResumeBytes)
		}
		if data, err = base64.StdEncoding.DecodeString(in.ContentBase64); err != nil {
			return IngestResumeOutput{}, fault.Invalid("content_base64", "is not base64: %v", err)
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
	const tool = "ingest_resume"
	s.record(ctx, c, trace, audit.IngestStarted, tool, "ok", map[string]any{"source": field, "file_name": name, "persist": persist})
	out, err := s.ingest(ctx, c, in.S3Key, name, field, data, persist, trace)
	outcome := "ok"
	if err != nil {
		outcome = "error: " + string(fault.KindOf(err))
	}
	s.record(ctx, c, trace, audit.IngestCompleted, tool, outcome, map[string]any{"resume_id": out.ResumeID,
		"resume_hash": out.ResumeHash, "source_hash": out.SourceHash, "atoms": len(out.Atoms), "persisted": out.Persisted})
	return out, err
}

func (s *Service) ingest(ctx context.Context, c tenant.Caller, key, name, field string, data []byte, persist bool, trace string) (IngestResumeOutput, error) {
	if key != "" {
		if s.blobs == nil {
			return IngestResumeOutput{}, fault.Unavailable(nil, "reading resumes needs the object store and none is configured")
		}
		r, info, err := s.blobs.Get(ctx, key, nil)
		if errors.Is(err, store.ErrNotFound) {
			return IngestResumeOutput{}, fault.NotFound("no object %q in your tenant's storage", key)
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
	doc, err := extract(name, data)
	switch {
	case errors.Is(err, document.ErrUnsupported):
		return IngestResumeOutput{}, fault.Invalid(field, "%s is not a resume this server reads: %v", name, err)
	case err != nil:
		return IngestResumeOutput{}, fault.Invalid(field, "%s cannot be read, it looks corrupt: %v", name, err)
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
		return IngestResumeOutput{}, fault.Invalid(field, "%s yields %d statements, more than %d", name, len(stmts), MaxResumeAtoms)
	}
	out.Atoms = make([]Atom, len(stmts))
	for i, st := range stmts {
		// Atom ids derive from the resume and the statement's place in it, so
		// ingesting the same resume again rewrites the same atoms.
		out.Atoms[i] = Atom{AtomID: atomID(out.ResumeID, i), Text: st.text, Section: st.section, ResumeID: out.ResumeID,
			SourceHash: hash64Hex(st.text), Version: 1, CreatedAt: now, UpdatedAt: now}
	}
	if !persist {
		return out, nil
	}
	prefix := tenant.BlobPrefix(c.Tenant) + "resumes/" + out.ResumeID + "/"
	out.ObjectKey = prefix + "canonical.md"
	if _, err := s.blobs.Put(ctx, out.ObjectKey, []byte(md), &store.PutOptions{ContentType: "text/markdown; charset=utf-8"}); err != nil {
		return IngestResumeOutput{}, fault.Unavailable(err, "storing the resume failed; retry")
	}
	original := key
	if key == "" {
		original = prefix + "original" + strings.ToLower(path.Ext(name))
		if _, err := s.blobs.Put(ctx, original, data, nil); err != nil {
			return IngestResumeOutput{}, fault.Unavailable(err, "storing the resume failed; retry")
		}
	}
	record := store.Item{PK: resumesPK(c), SK: out.ResumeID, Attrs: store.Attrs{
		"file_name": name, "format": out.Format, "title": out.Title, "object_key": original, "canonical_key": out.ObjectKey,
		"resume_hash": out.ResumeHash, "source_hash": out.SourceHash, "atoms": int64(len(out.Atoms)),
		"trace_id": trace, "created_at": stamp(now),
	}}
	// The record and the first atoms land together; a long resume's other
	// atoms follow a transaction at a time (re-ingesting rewrites them all).
	writes := []store.Write{store.Put(record, store.Condition{})}
	for _, a := range out.Atoms {
		writes = append(writes, store.Put(atomItem(c, a), store.Condition{}))
	}
	for start := 0; start < len(writes); start += store.MaxTransactWrites {
		if err := s.table.Transact(ctx, writes[start:min(start+store.MaxTransactWrites, len(writes))]...); err != nil {
			return IngestResumeOutput{}, unavailable(err, "storing the resume's atoms failed; ingest it again")
		}
	}
	out.Persisted = true
	return out, nil
}

func atomID(resumeID string, i int) string {
	return "atom_" + strings.TrimPrefix(resumeID, "resume_") + "_" + leftPad(i)
}

func leftPad(i int) string {
	s := []byte("000")
	for j := 2; j >= 0 && i > 0; j-- {
		s[j] = byte('0' + i%10)
		i /= 10
	}
	return string(s)
}

// statement is an atom found in a resume.
type statement struct{ section, text string }

// atomSection matches the headings of the sections atoms come from.
var atomSection = regexp.MustCompile(`(?i)\b(experience|employment|work|career|professional|projects?|skills?|accomplishments?|achievements?|competenc(e|ies)|expertise|qualifications?|technolog(y|ies)|leadership|highlights?)\b`)

var (
	headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	bulletRE  = regexp.MustCompile(`^\s*(?:[-*+•]|\d+[.)])\s+(.*)$`)
	sentRE    = regexp.MustCompile(`[.!?](\s+|$)`)
)

// extractAtoms returns one statement per bullet, and per sentence of a
// paragraph, under the experience and skills sections of md: the sections
// whose top-level heading matches [atomSection]. A statement's section is its
// heading path, such as "Experience > Staff Engineer, Acme".
func extractAtoms(md string) []statement {
	var out []statement
	var path []string // heading texts by level
	var levels []int
	inside := false
	var para []string
	flush := func() {
		if len(para) == 0 {
			return
		}
		text := strings.Join(para, " ")
		para = nil
		if !inside {
			return
		}
		for _, sent := range sentences(text) {
			out = append(out, statement{section: strings.Join(path, " > "), text: sent})
		}
	}
	for _, line := range strings.Split(md, "\n") {
		if m := headingRE.FindStringSubmatch(line); m != nil {
			flush()
			level := len(m[1])
			for len(levels) > 0 && levels[len(levels)-1] >= level {
				levels, path = levels[:len(levels)-1], path[:len(path)-1]
			}
			levels, path = append(levels, level), append(path, cleanInline(m[2]))
			inside = false
			for _, p := range path {
				if atomSection.MatchString(p) {
					inside = true
				}
			}
			continue
		}
		if m := bulletRE.FindStringSubmatch(line); m != nil {
			flush()
			if t := cleanInline(m[1]); inside && hasWord(t) {
				out = append(out, statement{section: strings.Join(path, " > "), text: t})
			}
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		para = append(para, cleanInline(line))
	}
	flush()
	return out
}

// sentences splits a paragraph into its sentences.
func sentences(p string) []string {
	var out []string
	start := 0
	for _, loc := range sentRE.FindAllStringIndex(p, -1) {
		if s := strings.TrimSpace(p[start : loc[0]+1]); hasWord(s) {
			out = append(out, s)
		}
		start = loc[1]
	}
	if s := strings.TrimSpace(p[start:]); hasWord(s) {
		out = append(out, s)
	}
	return out
}

var emphasis = strings.NewReplacer("**", "", "__", "", "`", "")

// cleanInline drops Markdown emphasis and code marks.
func cleanInline(s string) string { return strings.TrimSpace(emphasis.Replace(s)) }

func hasWord(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}
