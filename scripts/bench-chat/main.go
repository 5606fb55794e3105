// Command bench-chat prints the chat orchestration's figures (issue 14):
//
//  1. A chat turn's latency offline, end to end over HTTP, each turn with one
//     vector search: POST /v1/chat/completions (thread_id set, so the turn
//     reads its thread's history and records itself), beside the anchor,
//     rag_basic on the same question through the compatibility endpoint's
//     POST /jsonrpc (the pipeline and an answer, nothing of the chat's own).
//  2. The tokens sent to the model on turn 5 of a conversation with a vector
//     search every turn: the model is an OpenAI-compatible stand-in on
//     loopback that asks for the vector search on each turn and then
//     answers; it counts what each request sends (one token a word, as the
//     offline generator counts). Beside it, the naive design that keeps the
//     documents in the history as ordinary tool messages (the standard MCP
//     pattern): the same conversation, turn 5's request rebuilt from the
//     thread's stored messages with the internal ones kept.
//
// It assembles Switchboard as `go run ./functions/gateway` does (embedded
// table and blob folder in a temporary directory, every function in process,
// the pipeline interpreted from its ASL definition, the gateway on a loopback
// port) and ingests this repository's README.md and ARCHITECTURE.md into one
// store, so that it needs no data files.
//
//	go run ./scripts/bench-chat            # -n 100 -warmup 10
//
// It is a benchmark, not a test: it prints figures, and exits 1 if a call
// fails or a turn does not search.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/chat"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/handlers/chatfn"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/provider/openai"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/embedded"
	"github.com/switchboard-dev/switchboard/shared/store/localfs"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// questions are asked in turn, five to a thread; each is answered by a
// passage of the two documents.
var questions = []string{
	"How are API keys stored in the table?",
	"How does memory compression summarise old messages?",
	"What does the tools/call fast path do?",
	"How are connector credentials sealed?",
	"What are the default rate limits per tenant?",
}

var caller = tenant.Caller{Tenant: tenant.Local, Principal: "local"}

func main() {
	n := flag.Int("n", 100, "measured turns")
	warmup := flag.Int("warmup", 10, "unmeasured turns first")
	flag.Parse()
	if err := run(*n, *warmup); err != nil {
		fmt.Fprintln(os.Stderr, "bench-chat:", err)
		os.Exit(1)
	}
}

func run(n, warmup int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "bench-chat-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	model, err := newStandIn()
	if err != nil {
		return err
	}
	defer model.srv.Close()
	base, stack, tbl, stop, err := serve(dir, model.URL)
	if err != nil {
		return err
	}
	defer stop()
	if err := ingest(ctx, stack); err != nil {
		return err
	}

	// Figure 1: offline turns beside rag_basic.
	var chatTimes, ragTimes []time.Duration
	for i := range warmup + n {
		q := questions[i%len(questions)]
		thread := fmt.Sprintf("bench-%d", i/len(questions))
		start := time.Now()
		out, err := completion(base, "switchboard", thread, q)
		d := time.Since(start)
		if err != nil {
			return err
		}
		if vs := out.VSMetadata; vs == nil || len(vs.SearchedStores) == 0 {
			return fmt.Errorf("turn %d searched no store: %+v", i, out)
		}
		start = time.Now()
		if err := ragBasic(base, q); err != nil {
			return err
		}
		if i >= warmup {
			chatTimes, ragTimes = append(chatTimes, d), append(ragTimes, time.Since(start))
		}
	}
	fmt.Printf("chat turn offline, end to end over HTTP, one vector search each (%d turns, threads of %d):\n", n, len(questions))
	fmt.Printf("  POST /v1/chat/completions        p50 %7.2f ms  p90 %7.2f ms  max %7.2f ms\n", ms(pct(chatTimes, 50)), ms(pct(chatTimes, 90)), ms(pct(chatTimes, 100)))
	fmt.Printf("  anchor: rag_basic via /jsonrpc  p50 %7.2f ms  p90 %7.2f ms  max %7.2f ms\n", ms(pct(ragTimes, 50)), ms(pct(ragTimes, 90)), ms(pct(ragTimes, 100)))

	// Figure 2: tokens sent on turn 5, with the stand-in model.
	const thread = "tokens"
	for i, q := range questions {
		model.reset()
		out, err := completion(base, "stand-in", thread, q)
		if err != nil {
			return err
		}
		if out.VSMetadata == nil || out.VSMetadata.NumDocuments == 0 {
			return fmt.Errorf("turn %d of the token run found no relevant documents: %+v", i+1, out)
		}
		if i == len(questions)-1 {
			sent := model.sent()
			naive, err := naiveTurn5(ctx, memory.New(tbl, nil), sent[len(sent)-1])
			if err != nil {
				return err
			}
			final := sent[len(sent)-1]
			fmt.Printf("tokens sent to the model on turn 5 (a vector search every turn; one token a word):\n")
			fmt.Printf("  Switchboard (documents in this turn's system prompt only)  final request %6d tokens, turn total %6d (reported prompt_tokens %d)\n",
				final.tokens, sum(sent), out.TokenUsage.PromptTokens)
			fmt.Printf("  naive (documents kept in the history as tool messages)     final request %6d tokens\n", naive)
			fmt.Printf("  naive / Switchboard: %.2fx\n", float64(naive)/float64(final.tokens))
		}
	}
	return nil
}

// serve assembles the local server (offline providers) with the chat
// function's model replaced by the stand-in for threads named "tokens",
// serves it on loopback and returns its base URL.
func serve(dir, standIn string) (string, *local.Stack, store.Table, func(), error) {
	fail := func(err error) (string, *local.Stack, store.Table, func(), error) { return "", nil, nil, nil, err }
	tbl, err := embedded.Open(filepath.Join(dir, "table.db"), nil)
	if err != nil {
		return fail(err)
	}
	blobs := localfs.New(filepath.Join(dir, "blobs"))
	deps := lambdafn.Deps{Table: tbl, Blobs: blobs, Summarizer: offline.Summarizer{},
		Embedder: offline.NewEmbedder(offline.DefaultDims), Generator: offline.NewGenerator(),
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	client, err := openai.NewClient(standIn, "", nil)
	if err != nil {
		return fail(err)
	}
	gen, _ := openai.NewGenerator(client, "stand-in")
	// The chat function answers model "stand-in" with the stand-in, as a
	// per-request model the configuration allows; any other turn offline.
	chatFn := lambdafn.Function{Path: chatfn.Chat.Path, Build: func(d lambdafn.Deps) lambda.Handler {
		d.Generator = provider.WithGenerators(d.Generator, offline.GeneratorModel, map[string]provider.Generator{"stand-in": gen})
		return chatfn.Chat.Build(d)
	}}
	stack, err := local.New(local.Options{Deps: deps, Functions: append(handlers.All(), chatFn)})
	if err != nil {
		return fail(err)
	}
	gw, err := gateway.New(gateway.Options{Catalog: catalog.Default(), Invoker: stack, Anonymous: &caller, Logger: deps.Logger})
	if err != nil {
		return fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	srv := &http.Server{Handler: gw.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), stack, tbl, func() { srv.Close(); stack.Close(); tbl.Close() }, nil
}

// ingest puts README.md and ARCHITECTURE.md into the store "docs".
func ingest(ctx context.Context, stack *local.Stack) error {
	if err := callTool(ctx, stack, "vector_store_create", map[string]any{"alias": "docs", "description": "Switchboard's README and architecture"}); err != nil {
		return err
	}
	for _, name := range []string{"README.md", "ARCHITECTURE.md"} {
		text, err := os.ReadFile(name)
		if err != nil {
			return fmt.Errorf("run it from the repository's root: %w", err)
		}
		if err := callTool(ctx, stack, "vector_document_ingest", map[string]any{"store": "docs", "doc_id": name, "content": string(text), "format": "md", "metadata": map[string]string{"source": name}}); err != nil {
			return err
		}
	}
	return nil
}

func callTool(ctx context.Context, stack *local.Stack, name string, args any) error {
	t, _ := catalog.Default().Tool(name)
	raw, _ := json.Marshal(args)
	resp, err := stack.Invoke(ctx, t.Function, &invoke.Request{Method: invoke.MethodCallTool, Tool: name, Arguments: raw, Caller: caller,
		TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", RequestID: "bench-chat-ingest"})
	if err == nil && resp.Error != nil {
		err = fmt.Errorf("%s: %s", name, resp.Error.Message)
	}
	return err
}

// completion posts one turn to /v1/chat/completions and returns the
// chat's own fields of the answer.
func completion(base, model, thread, question string) (chat.Output, error) {
	body, _ := json.Marshal(map[string]any{"model": model, "thread_id": thread, "messages": []any{map[string]any{"role": "user", "content": question}}})
	resp, err := http.Post(base+gateway.ChatCompletionsPath, "application/json", bytes.NewReader(body))
	if err != nil {
		return chat.Output{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return chat.Output{}, fmt.Errorf("chat completion: HTTP %d: %s", resp.StatusCode, raw)
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		VSMetadata *chat.VSMetadata `json:"vs_metadata"`
		TokenUsage chat.TokenUsage  `json:"token_usage"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Choices) != 1 {
		return chat.Output{}, fmt.Errorf("chat completion: undecodable answer %s", raw)
	}
	if strings.HasPrefix(out.Choices[0].Message.Content, "Sorry") {
		return chat.Output{}, fmt.Errorf("chat completion failed: %s", out.Choices[0].Message.Content)
	}
	return chat.Output{Answer: out.Choices[0].Message.Content, VSMetadata: out.VSMetadata, TokenUsage: out.TokenUsage}, nil
}

// ragBasic calls rag_basic through the compatibility endpoint.
func ragBasic(base, question string) error {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tool-server/tools/call",
		"params": map[string]any{"name": "rag_basic", "arguments": map[string]any{"query": question}}})
	resp, err := http.Post(base+"/jsonrpc", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || bytes.Contains(raw, []byte(`"error"`)) {
		return fmt.Errorf("rag_basic: HTTP %d: %s", resp.StatusCode, raw)
	}
	return nil
}

// naiveTurn5 is the size of turn 5's final request in the naive design:
// the same system prompt without injected documents, every stored message
// of turns 1 to 4 with the documents kept (the internal tool messages), and
// turn 5's question and documents as a tool message.
func naiveTurn5(ctx context.Context, mem *memory.Service, final request) (int, error) {
	all, err := mem.GetAllMessages(ctx, caller, memory.GetAllMessagesInput{ConversationID: "tokens"})
	if err != nil {
		return 0, err
	}
	system, _, _ := strings.Cut(final.system, "\n\nRelevant documents")
	n := words(system)
	msgs := all.Messages[:len(all.Messages)-1] // turn 5's answer, recorded since, was not sent
	for _, m := range msgs {
		n += words(m.Content) + 8*strings.Count(string(m.ToolCalls), `"name"`)
		if m.Internal {
			n += 8 // the assistant's vector-search call the naive history keeps beside it
		}
	}
	return n, nil
}

// standIn is an OpenAI-compatible model on loopback: offered the vector
// search, it asks for it with the user's question; otherwise it answers in
// one sentence. It counts each request's tokens (one a word; a tool call 8)
// and reports them as usage.prompt_tokens.
type standIn struct {
	srv  *http.Server
	URL  string
	mu   sync.Mutex
	reqs []request
}

// request is what one request to the stand-in sent.
type request struct {
	system string
	tokens int
}

func newStandIn() (*standIn, error) {
	s := &standIn{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	s.URL = "http://" + ln.Addr().String()
	return s, nil
}

func (s *standIn) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role      string            `json:"role"`
			Content   *string           `json:"content"`
			ToolCalls []json.RawMessage `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	got := request{}
	question := ""
	for _, m := range req.Messages {
		text := ""
		if m.Content != nil {
			text = *m.Content
		}
		if m.Role == "system" {
			got.system = text
		}
		if m.Role == "user" {
			question = text
		}
		got.tokens += words(text) + 8*len(m.ToolCalls)
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, got)
	s.mu.Unlock()
	message := map[string]any{"role": "assistant", "content": "Here is what the documents say about it."}
	finish := "stop"
	if slices.ContainsFunc(req.Tools, func(t struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}) bool {
		return t.Function.Name == chat.VectorSearchTool
	}) {
		args, _ := json.Marshal(map[string]string{"question": question})
		message = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": fmt.Sprintf("call_%d", len(s.reqs)), "type": "function",
			"function": map[string]any{"name": chat.VectorSearchTool, "arguments": string(args)}}}}
		finish = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"model": "stand-in", "choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}},
		"usage": map[string]any{"prompt_tokens": got.tokens, "completion_tokens": 10, "total_tokens": got.tokens + 10}})
}

func (s *standIn) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = nil
}

func (s *standIn) sent() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

func sum(rs []request) int {
	n := 0
	for _, r := range rs {
		n += r.tokens
	}
	return n
}

func words(s string) int { return len(strings.Fields(s)) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// pct is the p-th percentile of ds (nearest rank).
func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)]
}
