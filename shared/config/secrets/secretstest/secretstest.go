// Package secretstest is a stand-in for AWS Secrets Manager in tests: an
// HTTP server speaking its JSON 1.1 wire format (POST / with X-Amz-Target
// secretsmanager.GetSecretValue), answering from a fixed set of secrets and
// recording what was read, so that tests of the functions that read secrets
// at start run the real client against it.
//
//	sm := secretstest.New(t, map[string]string{secretstest.ARN("openai"): "sk-..."})
//	t.Setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", sm.URL)
package secretstest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Region and Account are those of [ARN]'s secrets.
const (
	Region  = "us-east-1"
	Account = "123456789012"
)

// ARN returns the ARN of the secret named name in [Region] and [Account].
func ARN(name string) string {
	return "arn:aws:secretsmanager:" + Region + ":" + Account + ":secret:" + name + "-AbCdEf"
}

// Server is the stand-in. Secrets maps an ARN, or an ARN#<version id> for a
// version other than the current one, to its string value.
type Server struct {
	URL string

	mu      sync.Mutex
	secrets map[string]string
	reads   []string
	// throttle is how many of the next requests are answered
	// ThrottlingException.
	throttle int
}

// Throttle makes the next n requests answer ThrottlingException (HTTP 400),
// as Secrets Manager does over its request rate.
func (s *Server) Throttle(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.throttle = n
}

// New starts a Server holding secrets, stopped when t ends.
func New(t testing.TB, secrets map[string]string) *Server {
	s := Handler(secrets)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

// Handler returns a Server holding secrets that serves no address of its
// own (its URL is empty): the caller serves it, as scripts/stack does.
func Handler(secrets map[string]string) *Server { return &Server{secrets: secrets} }

// Reads returns what was read, each as ARN or ARN#<version id>, in order.
func (s *Server) Reads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reads...)
}

// ServeHTTP answers one Secrets Manager request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, kind, msg string) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"__type": kind, "message": msg})
	}
	if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" {
		fail(http.StatusBadRequest, "InvalidRequestException", "only GetSecretValue is served")
		return
	}
	if !strings.Contains(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256") {
		fail(http.StatusForbidden, "AccessDeniedException", "unsigned request")
		return
	}
	var in struct{ SecretId, VersionId string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		fail(http.StatusBadRequest, "InvalidRequestException", err.Error())
		return
	}
	s.mu.Lock()
	throttled := s.throttle > 0
	if throttled {
		s.throttle--
	}
	s.mu.Unlock()
	if throttled {
		fail(http.StatusBadRequest, "ThrottlingException", "Rate exceeded")
		return
	}
	key := in.SecretId
	if in.VersionId != "" {
		key += "#" + in.VersionId
	}
	s.mu.Lock()
	s.reads = append(s.reads, key)
	v, ok := s.secrets[key]
	s.mu.Unlock()
	if !ok {
		fail(http.StatusBadRequest, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	json.NewEncoder(w).Encode(map[string]any{"ARN": in.SecretId, "Name": in.SecretId, "SecretString": v, "VersionId": in.VersionId, "CreatedDate": 1.7e9})
}
