// Package memory keeps conversations: their messages in order, a rolling
// summary of the older ones, and the context window a model needs. It is the
// memory family of the chatbot memory server Switchboard replaces (seed 004),
// on a [store.Table].
//
// Every conversation is its own partition, so writers on different
// conversations never contend:
//
//	t#<tenant>#conv#<id>  meta              seq, ver, cleared, deleting, created_at
//	                      summary           text, through, ver, provider, model, language
//	                      msg#000000000001  role, content, created_at
//	                      idem#<key>        seq, hash, created_at (TTL [IdempotencyTTL]; memory_add_message's keys)
//	t#<tenant>#convs      <id>              created_at (the tenant's list of conversations)
//
// Messages get gapless sequence numbers: an add reads meta, then in one
// transaction bumps meta (if its version is unchanged) and writes the message
// (if its slot is empty), retrying when it loses a race. Once more than
// [SummarizeThreshold] messages lie outside the summary, everything but the
// [KeepRecent] newest is folded into the summary by the summariser. Messages are
// never deleted by that: the full history stays readable.
//
//	svc := memory.New(table, nil)
//	conv, _ := svc.GetOrCreate(ctx, caller, memory.GetOrCreateInput{})
//	_, _ = svc.AddMessage(ctx, caller, memory.AddMessageInput{ConversationID: conv.ConversationID, Role: "user", Content: "hi"})
//	window, _ := svc.GetContext(ctx, caller, memory.GetContextInput{ConversationID: conv.ConversationID})
package memory

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The seed's compression settings and Switchboard's limits.
const (
	// KeepRecent is how many of the newest messages stay outside the summary.
	KeepRecent = 6
	// SummarizeThreshold is how many messages may lie outside the summary
	// before the older ones are folded in.
	SummarizeThreshold = 10
	// DefaultContextMessages and MaxContextMessages cap memory_get_context's
	// window. Compression keeps at most SummarizeThreshold messages after the
	// summary, so the default cap leaves nothing out unless compression has
	// been failing.
	DefaultContextMessages = 20
	MaxContextMessages     = 100
	// MaxContentChars bounds one message, well inside DynamoDB's 400 KB item limit.
	MaxContentChars = 100_000
	// MaxSummaryChars bounds the rolling summary; past it the summary is condensed.
	MaxSummaryChars = 20_000
	// MaxPageMessages bounds one page of memory_get_all_messages.
	MaxPageMessages = store.MaxQueryLimit
	// MaxResourceMessages bounds the messages a conversation resource shows.
	MaxResourceMessages = store.MaxQueryLimit
	// MaxOldMessages bounds the old_messages a caller may pass, and
	// MaxOldMessagesChars their content in all: a call's request body is
	// bounded (catalog.DefaultRequestBytes), and JSON Schema cannot bound a sum.
	MaxOldMessages      = 200
	MaxOldMessagesChars = 900_000
	// MaxIdempotencyKeyChars bounds an idempotency key of memory_add_message.
	MaxIdempotencyKeyChars = 255
	// IdempotencyTTL is how long memory_add_message remembers an idempotency
	// key: longer than any client keeps retrying one call (Stripe's window).
	IdempotencyTTL = 24 * time.Hour
)

// IdempotencyKeyPattern is what an idempotency key matches: 1 to
// [MaxIdempotencyKeyChars] visible ASCII characters (no spaces), which
// covers UUIDs, ULIDs and base64 tokens and prints as itself.
const IdempotencyKeyPattern = `^[!-~]{1,255}$`

// Roles are the message roles memory accepts.
var Roles = []string{"user", "assistant", "system"}

// Languages are the summary languages memory accepts.
var Languages = []string{"en", "vi"}

// IDPattern is what a conversation id must match.
const IDPattern = tenant.KeyIDPattern

const (
	skMeta     = "meta"
	skSummary  = "summary"
	msgPrefix  = "msg#"
	idemPrefix = "idem#"
)

// Options configures [New]. A nil *Options uses the defaults.
type Options struct {
	// Summarizer folds old messages into the summary. If nil, defaults to the
	// offline extractive summariser.
	Summarizer provider.Summarizer
	// Now returns the current time. If nil, defaults to time.Now.
	Now func() time.Time
	// Logger receives warnings about compression. If nil, logs are discarded.
	Logger *slog.Logger
}

// Service implements the memory tools on a [store.Table]. It is safe for
// concurrent use.
type Service struct {
	table store.Table
	sum   provider.Summarizer
	now   func() time.Time
	log   *slog.Logger
}

// New returns a Service storing conversations in table.
func New(table store.Table, opts *Options) *Service {
	s := &Service{table: table, sum: offline.Summarizer{}, now: time.Now, log: slog.New(slog.DiscardHandler)}
	if opts != nil {
		if opts.Summarizer != nil {
			s.sum = opts.Summarizer
		}
		if opts.Now != nil {
			s.now = opts.Now
		}
		if opts.Logger != nil {
			s.log = opts.Logger
		}
	}
	s.log = s.log.With("component", "memory")
	return s
}

// ValidateID checks a conversation id against [IDPattern].
func ValidateID(id string) error {
	if !tenant.IsKeyID(id) {
		return fault.Invalid("conversation_id", "%q is not a conversation id: use 1-128 letters, digits, '_', '-', '.' or ':', starting with a letter or digit", id)
	}
	return nil
}

func convPK(c tenant.Caller, id string) string { return tenant.Key(c.Tenant) + "conv#" + id }
func indexPK(c tenant.Caller) string           { return tenant.Key(c.Tenant) + "convs" }
func msgSK(seq int64) string {
	if seq < 0 {
		return fmt.Sprintf("%s%012d", msgPrefix, seq) // never written: the sign goes first
	}
	// fmt's %012d, without its cost: every read of messages makes two.
	var buf [len(msgPrefix) + 20]byte
	b := append(buf[:0], msgPrefix...)
	for p := int64(100_000_000_000); p > seq && p > 1; p /= 10 {
		b = append(b, '0')
	}
	return string(strconv.AppendInt(b, seq, 10))
}

// maxSeq is the largest sequence number msgSK writes in its 12 digits.
const maxSeq = 999_999_999_999

// meta is a conversation's control item.
type meta struct {
	Seq      int64 // the last sequence number handed out
	Ver      int64 // bumped by every write, the optimistic-concurrency guard
	Cleared  int64 // messages up to this seq were removed by memory_clear
	Deleting bool  // memory_delete has begun: the conversation takes no more writes
	Created  time.Time
}

func (m meta) item(pk string) store.Item {
	return store.Item{PK: pk, SK: skMeta, Attrs: store.Attrs{
		"seq": m.Seq, "ver": m.Ver, "cleared": m.Cleared, "deleting": m.Deleting, "created_at": m.Created.UTC().Format(time.RFC3339Nano),
	}}
}

// summary is a conversation's rolling summary item.
type summary struct {
	Text     string
	Through  int64
	Ver      int64
	Provider string
	Model    string
	Language string
}

func (s summary) item(pk string) store.Item {
	return store.Item{PK: pk, SK: skSummary, Attrs: store.Attrs{
		"text": s.Text, "through": s.Through, "ver": s.Ver, "provider": s.Provider, "model": s.Model, "language": s.Language,
	}}
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// notFound is the error for a conversation the caller does not have.
func notFound(id string) error {
	return fault.NotFound("conversation %q does not exist; create it with memory_get_or_create", id)
}

func (s *Service) loadMeta(ctx context.Context, c tenant.Caller, id string) (meta, error) {
	it, err := s.table.Get(ctx, convPK(c, id), skMeta)
	if errors.Is(err, store.ErrNotFound) {
		return meta{}, notFound(id)
	}
	if err != nil {
		return meta{}, fault.Unavailable(err, "reading conversation %q failed; retry", id)
	}
	m := meta{Seq: it.Int("seq"), Ver: it.Int("ver"), Cleared: it.Int("cleared"), Deleting: it.Bool("deleting"), Created: parseTime(it.String("created_at"))}
	return m, nil
}

// loadLiveMeta is loadMeta for a write: a conversation being deleted takes none.
func (s *Service) loadLiveMeta(ctx context.Context, c tenant.Caller, id string) (meta, error) {
	m, err := s.loadMeta(ctx, c, id)
	if err == nil && m.Deleting {
		return meta{}, notFound(id)
	}
	return m, err
}

func (s *Service) loadSummary(ctx context.Context, c tenant.Caller, id string) (summary, error) {
	it, err := s.table.Get(ctx, convPK(c, id), skSummary)
	if errors.Is(err, store.ErrNotFound) {
		return summary{}, notFound(id)
	}
	if err != nil {
		return summary{}, fault.Unavailable(err, "reading the summary of %q failed; retry", id)
	}
	return summary{Text: it.String("text"), Through: it.Int("through"), Ver: it.Int("ver"),
		Provider: it.String("provider"), Model: it.String("model"), Language: it.String("language")}, nil
}

// retry runs an optimistic update, turning a lost fight into a conflict the
// caller can retry.
func retry(ctx context.Context, id string, fn func() error) error {
	err := store.Retry(ctx, fn)
	if errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrConflict) {
		return fault.Conflict(err, "conversation %q is changing too fast to update; retry", id)
	}
	if err != nil && fault.KindOf(err) == fault.KindInternal {
		return fault.Unavailable(err, "updating conversation %q failed; retry", id)
	}
	return err
}

// GetOrCreate opens the conversation in.ConversationID, creating it if it
// does not exist, or starts a new one with a generated id.
func (s *Service) GetOrCreate(ctx context.Context, c tenant.Caller, in GetOrCreateInput) (GetOrCreateOutput, error) {
	id := in.ConversationID
	if id == "" {
		var b [16]byte
		rand.Read(b[:])
		id = "chat_" + hex.EncodeToString(b[:])
	} else if err := ValidateID(id); err != nil {
		return GetOrCreateOutput{}, err
	}
	pk := convPK(c, id)
	now := s.now()
	err := s.table.Transact(ctx,
		store.Put(meta{Created: now}.item(pk), store.IfAbsent()),
		store.Put(summary{}.item(pk), store.IfAbsent()),
		store.Put(store.Item{PK: indexPK(c), SK: id, Attrs: store.Attrs{"created_at": now.UTC().Format(time.RFC3339Nano)}}, store.IfAbsent()),
	)
	switch {
	case err == nil:
		return GetOrCreateOutput{ConversationID: id, Created: true}, nil
	case errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrConflict):
		m, err := s.loadMeta(ctx, c, id)
		if err != nil {
			return GetOrCreateOutput{}, err
		}
		if m.Deleting {
			return GetOrCreateOutput{}, fault.Conflict(nil, "conversation %q is being deleted; run memory_delete again to finish, then create it anew", id)
		}
		return GetOrCreateOutput{ConversationID: id, Created: false}, nil
	default:
		return GetOrCreateOutput{}, fault.Unavailable(err, "creating conversation %q failed; retry", id)
	}
}

func validateMessage(field, role, content string) error {
	if !slices.Contains(Roles, role) {
		return fault.Invalid(field+"role", "%q is not a role: use user, assistant or system", role)
	}
	if strings.TrimSpace(content) == "" {
		return fault.Invalid(field+"content", "must not be empty")
	}
	if n := utf8.RuneCountInString(content); n > MaxContentChars {
		return fault.Invalid(field+"content", "is %d characters, more than %d", n, MaxContentChars)
	}
	return nil
}

// AddMessage appends a message and, when enough have gathered outside the
// summary, folds the older ones into it.
//
// With an idempotency key, the message and the key's record land in one
// transaction, the record only if absent:
//
//	t#<tenant>#conv#<id>  idem#<key>  seq, hash (SHA-256 of role and content), created_at  (TTL IdempotencyTTL)
//
// so of any number of calls with one key exactly one adds the message, and
// the others (and later retries) find the record and answer its seq with
// replayed set; a different message under a used key is a conflict.
func (s *Service) AddMessage(ctx context.Context, c tenant.Caller, in AddMessageInput) (AddMessageOutput, error) {
	if err := ValidateID(in.ConversationID); err != nil {
		return AddMessageOutput{}, err
	}
	if err := validateMessage("", in.Role, in.Content); err != nil {
		return AddMessageOutput{}, err
	}
	if err := validateIdempotencyKey(in.IdempotencyKey); err != nil {
		return AddMessageOutput{}, err
	}
	pk := convPK(c, in.ConversationID)
	hash := messageHash(in.Role, in.Content)
	var seq int64
	var replayed bool
	err := retry(ctx, in.ConversationID, func() error {
		if in.IdempotencyKey != "" {
			// The key before the conversation: a key absent now and present
			// at commit fails the transaction, and the retry finds it.
			var err error
			if seq, replayed, err = s.recorded(ctx, pk, in.IdempotencyKey, hash); err != nil || replayed {
				return err
			}
		}
		m, err := s.loadLiveMeta(ctx, c, in.ConversationID)
		if err != nil {
			return err
		}
		seq = m.Seq + 1
		next := m
		next.Seq, next.Ver = seq, m.Ver+1
		now := s.now()
		writes := []store.Write{
			store.Put(next.item(pk), store.IfEquals("ver", m.Ver)),
			store.Put(store.Item{PK: pk, SK: msgSK(seq), Attrs: store.Attrs{
				"role": in.Role, "content": in.Content, "created_at": now.UTC().Format(time.RFC3339Nano),
			}}, store.IfAbsent()),
		}
		if in.IdempotencyKey != "" {
			writes = append(writes, store.Put(store.Item{PK: pk, SK: idemPrefix + in.IdempotencyKey, Attrs: store.Attrs{
				"seq": seq, "hash": hash, "created_at": now.UTC().Format(time.RFC3339Nano),
			}, ExpiresAt: now.Add(IdempotencyTTL)}, store.IfAbsent()))
		}
		return s.table.Transact(ctx, writes...)
	})
	if err != nil {
		return AddMessageOutput{}, err
	}
	if replayed {
		return AddMessageOutput{Status: "success", ConversationID: in.ConversationID, Seq: seq, Replayed: true}, nil
	}
	compressed, err := s.compress(ctx, c, in.ConversationID, seq)
	if err != nil {
		// The message is stored; the next add will try compressing again.
		s.log.WarnContext(ctx, "compression failed", "conversation", in.ConversationID, "error", err)
	}
	return AddMessageOutput{Status: "success", ConversationID: in.ConversationID, Seq: seq, Compressed: compressed}, nil
}

// TurnRoles are the roles [Service.AddTurns] accepts: [Roles] and "tool".
var TurnRoles = append(slices.Clip(Roles), "tool")

// MaxTurns bounds the messages one [Service.AddTurns] call appends, within a
// transaction's 100 writes.
const MaxTurns = 64

// AddTurns appends ts, in order, as consecutive messages in one transaction
// (a chat turn lands whole or not at all), then compresses as [Service.AddMessage]
// does. Internal messages are kept out of the summary, as they are out of a
// model's context. An assistant message that calls tools may have no text.
func (s *Service) AddTurns(ctx context.Context, c tenant.Caller, id string, ts []Turn) (AddMessageOutput, error) {
	if err := ValidateID(id); err != nil {
		return AddMessageOutput{}, err
	}
	if len(ts) == 0 || len(ts) > MaxTurns {
		return AddMessageOutput{}, fault.Invalid("messages", "must hold 1 to %d messages, not %d", MaxTurns, len(ts))
	}
	for i, t := range ts {
		field := fmt.Sprintf("messages[%d].", i)
		if !slices.Contains(TurnRoles, t.Role) {
			return AddMessageOutput{}, fault.Invalid(field+"role", "%q is not a role: use user, assistant, system or tool", t.Role)
		}
		content := t.Content
		if content == "" && len(t.ToolCalls) > 0 {
			content = "-"
		}
		if err := validateMessage(field, "user", content); err != nil {
			return AddMessageOutput{}, err
		}
		if len(t.ToolCalls) > 0 && !json.Valid(t.ToolCalls) {
			return AddMessageOutput{}, fault.Invalid(field+"tool_calls", "is not JSON")
		}
	}
	pk := convPK(c, id)
	var seq int64
	err := retry(ctx, id, func() error {
		m, err := s.loadLiveMeta(ctx, c, id)
		if err != nil {
			return err
		}
		next := m
		next.Seq, next.Ver = m.Seq+int64(len(ts)), m.Ver+1
		now := s.now().UTC().Format(time.RFC3339Nano)
		writes := []store.Write{store.Put(next.item(pk), store.IfEquals("ver", m.Ver))}
		for i, t := range ts {
			attrs := store.Attrs{"role": t.Role, "content": t.Content, "created_at": now}
			if len(t.ToolCalls) > 0 {
				attrs["tool_calls"] = string(t.ToolCalls)
			}
			if t.ToolCallID != "" {
				attrs["tool_call_id"] = t.ToolCallID
			}
			if t.Name != "" {
				attrs["name"] = t.Name
			}
			if t.Internal {
				attrs["internal"] = true
			}
			writes = append(writes, store.Put(store.Item{PK: pk, SK: msgSK(m.Seq + 1 + int64(i)), Attrs: attrs}, store.IfAbsent()))
		}
		seq = next.Seq
		return s.table.Transact(ctx, writes...)
	})
	if err != nil {
		return AddMessageOutput{}, err
	}
	compressed, err := s.compress(ctx, c, id, seq)
	if err != nil {
		s.log.WarnContext(ctx, "compression failed", "conversation", id, "error", err)
	}
	return AddMessageOutput{Status: "success", ConversationID: id, Seq: seq, Compressed: compressed}, nil
}

func validateIdempotencyKey(key string) error {
	if key == "" {
		return nil
	}
	ok := len(key) <= MaxIdempotencyKeyChars
	for i := 0; ok && i < len(key); i++ {
		ok = '!' <= key[i] && key[i] <= '~'
	}
	if !ok {
		return fault.Invalid("idempotency_key", "must be 1-%d visible ASCII characters (letters, digits, punctuation; no spaces)", MaxIdempotencyKeyChars)
	}
	return nil
}

// messageHash fingerprints a message for its idempotency record.
func messageHash(role, content string) string {
	h := sha256.New()
	h.Write([]byte(role))
	h.Write([]byte{0})
	h.Write([]byte(content))
	return hex.EncodeToString(h.Sum(nil))
}

// recorded returns the seq an earlier call with key stored its message at,
// if there was one, or a conflict naming the field if that message was
// another.
func (s *Service) recorded(ctx context.Context, pk, key, hash string) (int64, bool, error) {
	it, err := s.table.Get(ctx, pk, idemPrefix+key)
	if errors.Is(err, store.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fault.Unavailable(err, "reading the idempotency key failed; retry with the same key")
	}
	if it.String("hash") != hash {
		return 0, false, &fault.Error{Kind: fault.KindConflict, Field: "idempotency_key",
			Message: fmt.Sprintf("was used for another message (stored at seq %d); use a new key for a new message", it.Int("seq"))}
	}
	return it.Int("seq"), true, nil
}

// compress folds the messages older than the newest KeepRecent into the
// summary once more than SummarizeThreshold lie outside it. It writes only if
// the summary did not change meanwhile; a concurrent compression that won
// makes this one a no-op.
func (s *Service) compress(ctx context.Context, c tenant.Caller, id string, seq int64) (bool, error) {
	sum, err := s.loadSummary(ctx, c, id)
	if err != nil {
		return false, err
	}
	if seq-sum.Through <= SummarizeThreshold {
		return false, nil
	}
	upto := seq - KeepRecent
	msgs, err := s.messagesBetween(ctx, c, id, sum.Through+1, upto)
	if err != nil {
		return false, err
	}
	next, err := s.accumulate(ctx, sum, turns(msgs), sum.Language)
	if err != nil {
		return false, err
	}
	next.Through = upto
	err = s.table.Put(ctx, next.item(convPK(c, id)), store.IfEquals("ver", sum.Ver))
	if errors.Is(err, store.ErrConditionFailed) {
		return false, nil
	}
	return err == nil, err
}

// accumulate summarises ts and appends the result to sum as a new paragraph,
// condensing the whole when it grows past MaxSummaryChars.
func (s *Service) accumulate(ctx context.Context, sum summary, ts []provider.Turn, lang string) (summary, error) {
	next := sum
	next.Ver++
	if len(ts) == 0 {
		return next, nil
	}
	part, err := s.sum.Summarize(ctx, provider.SummarizeRequest{Turns: ts, Language: lang})
	if err != nil {
		return sum, fmt.Errorf("summarising: %w", err)
	}
	next.Text = joinParagraphs(sum.Text, part.Text)
	next.Provider, next.Model = part.Provider, part.Model
	if utf8.RuneCountInString(next.Text) > MaxSummaryChars {
		var paras []provider.Turn
		for _, p := range strings.Split(next.Text, "\n\n") {
			paras = append(paras, provider.Turn{Content: p})
		}
		condensed, err := s.sum.Summarize(ctx, provider.SummarizeRequest{Turns: paras, Language: lang, MaxChars: MaxSummaryChars / 2})
		if err != nil {
			return sum, fmt.Errorf("condensing the summary: %w", err)
		}
		next.Text = condensed.Text
	}
	return next, nil
}

func joinParagraphs(a, b string) string {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// turns are msgs as the summariser reads them: internal messages (one
// turn's retrieved documents) are left out, as they are of a model's context.
func turns(msgs []Message) []provider.Turn {
	ts := make([]provider.Turn, 0, len(msgs))
	for _, m := range msgs {
		if !m.Internal {
			ts = append(ts, provider.Turn{Role: m.Role, Content: m.Content})
		}
	}
	return ts
}

// toMessage returns the message item it holds. It only reads it, so that
// the queries of messages can be ReadOnly.
func toMessage(it store.Item) Message {
	seq, _ := strconv.ParseInt(strings.TrimPrefix(it.SK, msgPrefix), 10, 64) // msgSK's zero-padded digits
	m := Message{Seq: seq, Role: it.String("role"), Content: it.String("content"), CreatedAt: parseTime(it.String("created_at")),
		ToolCallID: it.String("tool_call_id"), Name: it.String("name"), Internal: it.Bool("internal")}
	if tc := it.String("tool_calls"); tc != "" {
		m.ToolCalls = json.RawMessage(tc)
	}
	return m
}

// messagesBetween returns the messages with seq in [from, to], oldest first.
func (s *Service) messagesBetween(ctx context.Context, c tenant.Caller, id string, from, to int64) ([]Message, error) {
	out := []Message{}
	if to < from {
		return out, nil
	}
	q := store.Query{From: msgSK(from), To: msgSK(to), Limit: store.MaxQueryLimit, ReadOnly: true}
	for {
		page, err := s.table.Query(ctx, convPK(c, id), q)
		if err != nil {
			return nil, fault.Unavailable(err, "reading messages of %q failed; retry", id)
		}
		for _, it := range page.Items {
			out = append(out, toMessage(it))
		}
		if page.Next == "" {
			return out, nil
		}
		q.Cursor = page.Next
	}
}

// GetContext returns the summary and every message after what it covers (at
// least the [KeepRecent] newest), oldest first, capped at the newest
// in.MaxMessages; Omitted counts the messages after the summary that the cap
// left out.
func (s *Service) GetContext(ctx context.Context, c tenant.Caller, in GetContextInput) (GetContextOutput, error) {
	if err := ValidateID(in.ConversationID); err != nil {
		return GetContextOutput{}, err
	}
	n := in.MaxMessages
	switch {
	case n == 0:
		n = DefaultContextMessages
	case n < 1 || n > MaxContextMessages:
		return GetContextOutput{}, fault.Invalid("max_messages", "%d is outside 1..%d", n, MaxContextMessages)
	}
	// The summary first, then the messages: a compression in between makes a
	// message appear in both, never in neither. The messages after the
	// summary come first; only if they are fewer than KeepRecent (a summary
	// that covers some of the newest) does a second query reach below it,
	// so that no message is read only to be dropped.
	sum, err := s.loadSummary(ctx, c, in.ConversationID)
	if err != nil {
		return GetContextOutput{}, err
	}
	page, err := s.table.Query(ctx, convPK(c, in.ConversationID), store.Query{From: msgSK(sum.Through + 1), To: msgSK(maxSeq), Reverse: true, Limit: n, ReadOnly: true})
	if err != nil {
		return GetContextOutput{}, fault.Unavailable(err, "reading messages of %q failed; retry", in.ConversationID)
	}
	out := GetContextOutput{ConversationID: in.ConversationID, Summary: sum.Text, Through: sum.Through, Messages: make([]Message, 0, len(page.Items))}
	for _, it := range page.Items {
		out.Messages = append(out.Messages, toMessage(it))
	}
	if more := min(KeepRecent, n) - len(out.Messages); more > 0 && sum.Through > 0 {
		below, err := s.table.Query(ctx, convPK(c, in.ConversationID), store.Query{From: msgSK(max(sum.Through+1-KeepRecent, 1)), To: msgSK(sum.Through), Reverse: true, Limit: more, ReadOnly: true})
		if err != nil {
			return GetContextOutput{}, fault.Unavailable(err, "reading messages of %q failed; retry", in.ConversationID)
		}
		for _, it := range below.Items {
			out.Messages = append(out.Messages, toMessage(it))
		}
	}
	slices.Reverse(out.Messages)
	// Sequences are gapless above the summary (memory_clear moves its end
	// past what it removes), so what the cap cut is the gap below the oldest.
	if len(out.Messages) == n && page.Next != "" {
		out.Omitted = max(out.Messages[0].Seq-(sum.Through+1), 0)
	}
	return out, nil
}

// GetAllMessages returns the full history, oldest first, a page at a time.
func (s *Service) GetAllMessages(ctx context.Context, c tenant.Caller, in GetAllMessagesInput) (MessagesOutput, error) {
	if err := ValidateID(in.ConversationID); err != nil {
		return MessagesOutput{}, err
	}
	limit := in.Limit
	switch {
	case limit == 0:
		limit = MaxPageMessages
	case limit < 1 || limit > MaxPageMessages:
		return MessagesOutput{}, fault.Invalid("limit", "%d is outside 1..%d", limit, MaxPageMessages)
	}
	if _, err := s.loadSummary(ctx, c, in.ConversationID); err != nil {
		return MessagesOutput{}, err
	}
	page, err := s.table.Query(ctx, convPK(c, in.ConversationID), store.Query{Prefix: msgPrefix, Limit: limit, Cursor: in.Cursor, ReadOnly: true})
	if errors.Is(err, store.ErrInvalid) {
		return MessagesOutput{}, fault.Invalid("cursor", "is not a cursor from a previous memory_get_all_messages call on this conversation")
	}
	if err != nil {
		return MessagesOutput{}, fault.Unavailable(err, "reading messages of %q failed; retry", in.ConversationID)
	}
	out := MessagesOutput{ConversationID: in.ConversationID, Messages: make([]Message, len(page.Items)), NextCursor: page.Next}
	for i, it := range page.Items {
		out.Messages[i] = toMessage(it)
	}
	return out, nil
}

// oldRange returns the seqs of the messages outside both the summary and the
// recent window.
func oldRange(m meta, sum summary) (from, to int64) {
	return max(sum.Through, m.Cleared) + 1, m.Seq - KeepRecent
}

// GetOldMessages returns the messages older than the recent window that the
// summary does not cover yet: what a client would summarise. Once they are
// compressed into the summary it is empty.
func (s *Service) GetOldMessages(ctx context.Context, c tenant.Caller, in ConversationInput) (OldMessagesOutput, error) {
	if err := ValidateID(in.ConversationID); err != nil {
		return OldMessagesOutput{}, err
	}
	m, err := s.loadMeta(ctx, c, in.ConversationID)
	if err != nil {
		return OldMessagesOutput{}, err
	}
	sum, err := s.loadSummary(ctx, c, in.ConversationID)
	if err != nil {
		return OldMessagesOutput{}, err
	}
	from, to := oldRange(m, sum)
	msgs, err := s.messagesBetween(ctx, c, in.ConversationID, from, to)
	if err != nil {
		return OldMessagesOutput{}, err
	}
	return OldMessagesOutput{ConversationID: in.ConversationID, Messages: msgs, TotalCount: m.Seq - m.Cleared}, nil
}

func summaryOutput(id string, sum summary, created bool) SummaryOutput {
	return SummaryOutput{ConversationID: id, Summary: sum.Text, Created: created, Through: sum.Through, Provider: sum.Provider, Model: sum.Model}
}

// GetOrCreateSummary returns the conversation's summary; if there is none yet
// it summarises in.OldMessages, or the conversation's own old messages, and
// stores the result.
func (s *Service) GetOrCreateSummary(ctx context.Context, c tenant.Caller, in GetOrCreateSummaryInput) (SummaryOutput, error) {
	if err := ValidateID(in.ConversationID); err != nil {
		return SummaryOutput{}, err
	}
	lang := in.Language
	if lang == "" {
		lang = "en"
	} else if !slices.Contains(Languages, lang) {
		return SummaryOutput{}, fault.Invalid("language", "%q is not supported: use en or vi", lang)
	}
	if len(in.OldMessages) > MaxOldMessages {
		return SummaryOutput{}, fault.Invalid("old_messages", "has %d messages, more than %d", len(in.OldMessages), MaxOldMessages)
	}
	total := 0
	for i, m := range in.OldMessages {
		if err := validateMessage(fmt.Sprintf("old_messages[%d].", i), m.Role, m.Content); err != nil {
			return SummaryOutput{}, err
		}
		total += utf8.RuneCountInString(m.Content)
	}
	if total > MaxOldMessagesChars {
		return SummaryOutput{}, fault.Invalid("old_messages", "hold %d characters in all, more than %d", total, MaxOldMessagesChars)
	}
	sum, err := s.loadSummary(ctx, c, in.ConversationID)
	if err != nil || sum.Text != "" {
		return summaryOutput(in.ConversationID, sum, false), err
	}
	var ts []provider.Turn
	through := sum.Through
	if len(in.OldMessages) > 0 {
		for _, m := range in.OldMessages {
			ts = append(ts, provider.Turn{Role: m.Role, Content: m.Content})
		}
	} else {
		m, err := s.loadMeta(ctx, c, in.ConversationID)
		if err != nil {
			return SummaryOutput{}, err
		}
		from, to := oldRange(m, sum)
		msgs, err := s.messagesBetween(ctx, c, in.ConversationID, from, to)
		if err != nil {
			return SummaryOutput{}, err
		}
		ts = turns(msgs)
		if len(msgs) > 0 {
			through = msgs[len(msgs)-1].Seq
		}
	}
	if len(ts) == 0 {
		return summaryOutput(in.ConversationID, sum, false), nil
	}
	next, err := s.accumulate(ctx, sum, ts, lang)
	if err != nil {
		return SummaryOutput{}, fault.Unavailable(err, "summarising conversation %q failed; retry", in.ConversationID)
	}
	next.Through, next.Language = through, lang
	err = s.table.Put(ctx, next.item(convPK(c, in.ConversationID)), store.IfEquals("ver", sum.Ver))
	if errors.Is(err, store.ErrConditionFailed) {
		// Someone else wrote a summary meanwhile: theirs stands.
		cur, err := s.loadSummary(ctx, c, in.ConversationID)
		return summaryOutput(in.ConversationID, cur, false), err
	}
	if err != nil {
		return SummaryOutput{}, fault.Unavailable(err, "storing the summary of %q failed; retry", in.ConversationID)
	}
	return summaryOutput(in.ConversationID, next, true), nil
}

// SetSummary adds to the rolling summary, or replaces it. In append mode a
// text that already begins with the current summary is taken as the whole new
// summary, so that clients which accumulate the text themselves, as the
// seed's chat service does, never get it twice.
func (s *Service) SetSummary(ctx context.Context, c tenant.Caller, in SetSummaryInput) (SetSummaryOutput, error) {
	if err := ValidateID(in.ConversationID); err != nil {
		return SetSummaryOutput{}, err
	}
	mode := in.Mode
	if mode == "" {
		mode = "append"
	}
	if mode != "append" && mode != "replace" {
		return SetSummaryOutput{}, fault.Invalid("mode", "%q is not a mode: use append or replace", mode)
	}
	if n := utf8.RuneCountInString(in.Summary); n > MaxSummaryChars {
		return SetSummaryOutput{}, fault.Invalid("summary", "is %d characters, more than %d", n, MaxSummaryChars)
	}
	var next summary
	err := retry(ctx, in.ConversationID, func() error {
		sum, err := s.loadSummary(ctx, c, in.ConversationID)
		if err != nil {
			return err
		}
		next = sum
		next.Ver++
		next.Provider, next.Model = "client", ""
		text := strings.TrimSpace(in.Summary)
		switch {
		case mode == "replace", strings.HasPrefix(text, strings.TrimSpace(sum.Text)):
			next.Text = text
		default:
			next.Text = joinParagraphs(sum.Text, text)
		}
		if n := utf8.RuneCountInString(next.Text); n > MaxSummaryChars {
			return fault.Invalid("summary", "would make the rolling summary %d characters, more than %d; use mode replace", n, MaxSummaryChars)
		}
		return s.table.Put(ctx, next.item(convPK(c, in.ConversationID)), store.IfEquals("ver", sum.Ver))
	})
	if err != nil {
		return SetSummaryOutput{}, err
	}
	return SetSummaryOutput{Status: "success", ConversationID: in.ConversationID, Summary: next.Text}, nil
}

// GetSummary returns the rolling summary, empty if there is none yet.
func (s *Service) GetSummary(ctx context.Context, c tenant.Caller, in ConversationInput) (SummaryOutput, error) {
	if err := ValidateID(in.ConversationID); err != nil {
		return SummaryOutput{}, err
	}
	sum, err := s.loadSummary(ctx, c, in.ConversationID)
	return summaryOutput(in.ConversationID, sum, false), err
}

// Clear removes every message and the summary, keeping the conversation.
// Messages added while it runs survive it.
func (s *Service) Clear(ctx context.Context, c tenant.Caller, in ConversationInput) (StatusOutput, error) {
	if err := ValidateID(in.ConversationID); err != nil {
		return StatusOutput{}, err
	}
	pk := convPK(c, in.ConversationID)
	var cleared int64
	err := retry(ctx, in.ConversationID, func() error {
		m, err := s.loadLiveMeta(ctx, c, in.ConversationID)
		if err != nil {
			return err
		}
		sum, err := s.loadSummary(ctx, c, in.ConversationID)
		if err != nil {
			return err
		}
		cleared = m.Seq
		nm := m
		nm.Cleared, nm.Ver = m.Seq, m.Ver+1
		ns := summary{Through: m.Seq, Ver: sum.Ver + 1, Language: sum.Language}
		return s.table.Transact(ctx,
			store.Put(nm.item(pk), store.IfEquals("ver", m.Ver)),
			store.Put(ns.item(pk), store.IfEquals("ver", sum.Ver)),
		)
	})
	if err != nil {
		return StatusOutput{}, err
	}
	n, err := s.deleteMessages(ctx, pk, msgSK(cleared))
	if err != nil {
		return StatusOutput{}, fault.Unavailable(err, "removing messages of %q failed after %d; run memory_clear again to finish", in.ConversationID, n)
	}
	return StatusOutput{Status: "cleared", ConversationID: in.ConversationID, Removed: n}, nil
}

// deleteMessages deletes the messages of partition pk up to sort key to
// (all of them if to is empty), a transaction of up to 100 at a time.
func (s *Service) deleteMessages(ctx context.Context, pk, to string) (int, error) {
	if to == "" {
		return s.deletePrefix(ctx, pk, msgPrefix)
	}
	return s.deleteItems(ctx, pk, store.Query{From: msgPrefix, To: to, Limit: store.MaxTransactWrites})
}

// deletePrefix deletes the items of partition pk whose sort keys begin with prefix.
func (s *Service) deletePrefix(ctx context.Context, pk, prefix string) (int, error) {
	return s.deleteItems(ctx, pk, store.Query{Prefix: prefix, Limit: store.MaxTransactWrites})
}

// deleteItems deletes the items q selects in partition pk, a transaction
// of up to 100 at a time.
func (s *Service) deleteItems(ctx context.Context, pk string, q store.Query) (int, error) {
	n := 0
	for {
		// Always read the first page: the previous one is gone.
		page, err := s.table.Query(ctx, pk, q)
		if err != nil {
			return n, err
		}
		if len(page.Items) == 0 {
			return n, nil
		}
		ws := make([]store.Write, len(page.Items))
		for i, it := range page.Items {
			ws[i] = store.Delete(pk, it.SK, store.Condition{})
		}
		if err := s.table.Transact(ctx, ws...); err != nil {
			return n, err
		}
		n += len(ws)
	}
}

// Delete removes the conversation and everything in it. If it is interrupted,
// running it again finishes the job; meanwhile the conversation takes no writes.
// Unless in.Confirm is set, a caller that can be asked (package elicit) is
// asked to confirm first.
func (s *Service) Delete(ctx context.Context, c tenant.Caller, in DeleteInput) (StatusOutput, error) {
	if err := ValidateID(in.ConversationID); err != nil {
		return StatusOutput{}, err
	}
	if !in.Confirm {
		if err := s.confirmDelete(ctx, c, in.ConversationID); err != nil {
			return StatusOutput{}, err
		}
	}
	pk := convPK(c, in.ConversationID)
	err := retry(ctx, in.ConversationID, func() error {
		m, err := s.loadMeta(ctx, c, in.ConversationID)
		if err != nil || m.Deleting {
			return err
		}
		nm := m
		nm.Deleting, nm.Ver = true, m.Ver+1
		return s.table.Put(ctx, nm.item(pk), store.IfEquals("ver", m.Ver))
	})
	if err != nil {
		return StatusOutput{}, err
	}
	n, err := s.deleteMessages(ctx, pk, "")
	if err == nil {
		// A conversation created anew under this id must not answer its keys.
		_, err = s.deletePrefix(ctx, pk, idemPrefix)
	}
	if err == nil {
		err = s.table.Transact(ctx,
			store.Delete(pk, skMeta, store.Condition{}),
			store.Delete(pk, skSummary, store.Condition{}),
			store.Delete(indexPK(c), in.ConversationID, store.Condition{}),
		)
	}
	if err != nil {
		return StatusOutput{}, fault.Unavailable(err, "deleting conversation %q failed part way; run memory_delete again to finish", in.ConversationID)
	}
	return StatusOutput{Status: "deleted", ConversationID: in.ConversationID, Removed: n}, nil
}

// confirmDelete asks the person behind the caller's client whether to
// delete conversation id, when the client can show a form: the question
// names what would be lost, and its request state is good for one answer. A
// client that cannot be asked (before protocol 2026-07-28, or without form
// elicitation) is not, as before; nor is one finishing an interrupted
// deletion. It returns nil to go ahead, the question to ask, or the refusal.
func (s *Service) confirmDelete(ctx context.Context, c tenant.Caller, id string) error {
	round := elicit.FromContext(ctx)
	if !round.Supports(elicit.MethodElicit) {
		return nil
	}
	switch yes, answered := round.Confirmed("confirm"); {
	case answered && yes:
		return nil
	case answered:
		return fault.Invalid("confirm", "the user did not confirm deleting conversation %q; nothing was deleted", id)
	}
	m, err := s.loadMeta(ctx, c, id)
	if err != nil || m.Deleting {
		return err
	}
	ask := elicit.Ask("confirm", elicit.Confirm(fmt.Sprintf(
		"Delete conversation %q, its %d messages and its summary? This cannot be undone.", id, m.Seq-m.Cleared)))
	ask.Once = true
	return ask
}

// ListConversations returns a page of the caller's conversations, by id.
func (s *Service) ListConversations(ctx context.Context, c tenant.Caller, cursor string) ([]ConversationRef, string, error) {
	page, err := s.table.Query(ctx, indexPK(c), store.Query{Cursor: cursor})
	if errors.Is(err, store.ErrInvalid) {
		return nil, "", fault.Invalid("cursor", "is not a cursor from a previous listing")
	}
	if err != nil {
		return nil, "", fault.Unavailable(err, "listing conversations failed; retry")
	}
	refs := make([]ConversationRef, len(page.Items))
	for i, it := range page.Items {
		refs[i] = ConversationRef{ConversationID: it.SK, CreatedAt: parseTime(it.String("created_at"))}
	}
	return refs, page.Next, nil
}

// Conversation returns the whole conversation: summary and up to
// [MaxResourceMessages] of the newest messages.
func (s *Service) Conversation(ctx context.Context, c tenant.Caller, id string) (Conversation, error) {
	if err := ValidateID(id); err != nil {
		return Conversation{}, err
	}
	m, err := s.loadMeta(ctx, c, id)
	if err != nil {
		return Conversation{}, err
	}
	sum, err := s.loadSummary(ctx, c, id)
	if err != nil {
		return Conversation{}, err
	}
	page, err := s.table.Query(ctx, convPK(c, id), store.Query{Prefix: msgPrefix, Reverse: true, Limit: MaxResourceMessages})
	if err != nil {
		return Conversation{}, fault.Unavailable(err, "reading messages of %q failed; retry", id)
	}
	conv := Conversation{ConversationID: id, CreatedAt: m.Created, Summary: sum.Text, Through: sum.Through,
		Messages: make([]Message, len(page.Items)), TotalCount: m.Seq - m.Cleared, Truncated: page.Next != ""}
	for i, it := range page.Items {
		conv.Messages[len(page.Items)-1-i] = toMessage(it)
	}
	return conv, nil
}
