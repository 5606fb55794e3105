// Package openaitest is a stand-in for an OpenAI-compatible API in tests of
// the packages that use one (package openai's own tests check the client
// against the wire format in detail): a real HTTP server answering POST
// /v1/chat/completions and /v1/embeddings in that format, with replies
// computed by the test's functions.
//
//	srv := openaitest.New(t, openaitest.Handlers{Chat: func(system, user string) string { return "yes" }})
//	gen := srv.Generator(t, "gpt-4o-mini")
package openaitest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/provider/openai"
)

// Handlers compute the server's replies.
type Handlers struct {
	// Chat returns the assistant's reply to a chat request's system and
	// (last) user message.
	Chat func(system, user string) string
	// Embed returns the vector of one input text.
	Embed func(text string) []float32
}

// Server is the stand-in; Systems lists the system messages of the chat
// requests it answered, in arrival order.
type Server struct {
	URL string
	h   Handlers

	mu      sync.Mutex
	systems []string
}

// New starts a server answering with h, closed when the test ends.
func New(t testing.TB, h Handlers) *Server {
	s := &Server{h: h}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Systems returns the system messages of the chat requests answered so far.
func (s *Server) Systems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.systems...)
}

func (s *Server) client(t testing.TB) *openai.Client {
	t.Helper()
	c, err := openai.NewClient(s.URL+"/v1", "", &openai.ClientOptions{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Generator returns an openai.Generator of model through the server.
func (s *Server) Generator(t testing.TB, model string) *openai.Generator {
	t.Helper()
	g, err := openai.NewGenerator(s.client(t), model)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Embedder returns an openai.Embedder of model, of dims dimensions, through the server.
func (s *Server) Embedder(t testing.TB, model string, dims int) *openai.Embedder {
	t.Helper()
	e, err := openai.NewEmbedder(s.client(t), model, &openai.EmbedderOptions{Dims: dims})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model    string   `json:"model"`
		Input    []string `json:"input"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&body) != nil {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	var resp any
	switch {
	case r.URL.Path == "/v1/chat/completions" && s.h.Chat != nil:
		var system, user string
		for _, m := range body.Messages {
			switch m.Role {
			case "system":
				system = m.Content
			case "user":
				user = m.Content
			}
		}
		s.mu.Lock()
		s.systems = append(s.systems, system)
		s.mu.Unlock()
		resp = map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "model": body.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": s.h.Chat(system, user)}}},
			"usage": map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
		}
	case r.URL.Path == "/v1/embeddings" && s.h.Embed != nil:
		data := make([]any, len(body.Input))
		for i, text := range body.Input {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": s.h.Embed(text)}
		}
		resp = map[string]any{"object": "list", "data": data, "model": body.Model,
			"usage": map[string]any{"prompt_tokens": len(body.Input), "total_tokens": len(body.Input)}}
	default:
		http.Error(w, `{"error":{"message":"no such endpoint","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}
