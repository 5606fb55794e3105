// Package ssmtest is a stand-in for AWS Systems Manager Parameter Store, for
// tests and for scripts/stack, where SSM cannot run: an HTTP server speaking
// its JSON 1.1 wire format (POST / with X-Amz-Target AmazonSSM.GetParameter,
// AmazonSSM.PutParameter or AmazonSSM.DeleteParameter), keeping each
// parameter's versions in memory, so that the code that creates key rings
// and the functions that read them run their real calls against it. It
// checks what SSM checks of those calls that Switchboard relies on: a
// standard parameter's 4 KB, Overwrite, decryption of a SecureString, a
// version selector (name:version).
//
//	ps := ssmtest.New(t)
//	t.Setenv("AWS_ENDPOINT_URL_SSM", ps.URL)
package ssmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Region and Account are those of [ARN]'s parameters.
const (
	Region  = "us-east-1"
	Account = "123456789012"
)

// StandardMaxBytes is a standard parameter's largest value.
const StandardMaxBytes = 4096

// ARN returns the ARN of the parameter name in [Region] and [Account].
func ARN(name string) string {
	return "arn:aws:ssm:" + Region + ":" + Account + ":parameter/" + strings.TrimPrefix(name, "/")
}

// Parameter is one parameter: its type, key, and every version's value,
// oldest first (version n is Values[n-1]).
type Parameter struct {
	Type, KeyID string
	Values      []string
}

// Server is the stand-in.
type Server struct {
	URL string

	mu     sync.Mutex
	params map[string]*Parameter
	calls  []string
}

// New starts an empty Server, stopped when t ends.
func New(t testing.TB) *Server {
	s := Handler()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

// Handler returns an empty Server that serves no address of its own (its
// URL is empty): the caller serves it, as scripts/stack does.
func Handler() *Server { return &Server{params: map[string]*Parameter{}} }

// Get returns a copy of the parameter name, if there is one.
func (s *Server) Get(name string) (Parameter, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.params[name]
	if !ok {
		return Parameter{}, false
	}
	c := *p
	c.Values = append([]string(nil), p.Values...)
	return c, true
}

// Put sets the parameter name as a SecureString of one version, value.
func (s *Server) Put(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.params[name] = &Parameter{Type: "SecureString", KeyID: "alias/aws/ssm", Values: []string{value}}
}

// Calls returns the calls made, each as "Action name", in order.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// ServeHTTP answers one SSM request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, kind, msg string) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"__type": kind, "message": msg})
	}
	action, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), "AmazonSSM.")
	if r.Method != http.MethodPost || !ok || !strings.Contains(r.Header.Get("Authorization"), "/ssm/aws4_request") {
		fail(http.StatusBadRequest, "InvalidAction", "only signed GetParameter, PutParameter and DeleteParameter requests are served")
		return
	}
	var in struct {
		Name, Value, Type, KeyId, Tier string
		Overwrite, WithDecryption      bool
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in); err != nil || in.Name == "" {
		fail(http.StatusBadRequest, "ValidationException", "the request is not JSON with a Name")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, action+" "+in.Name)
	var out any
	switch action {
	case "GetParameter":
		name, version := in.Name, 0
		if i := strings.LastIndex(in.Name, ":"); i > 0 && !strings.HasPrefix(in.Name, "arn:") {
			n, err := strconv.Atoi(in.Name[i+1:])
			if err != nil {
				fail(http.StatusBadRequest, "ParameterVersionLabelNotFound", "no label "+in.Name[i+1:])
				return
			}
			name, version = in.Name[:i], n
		}
		p, ok := s.params[name]
		if !ok {
			fail(http.StatusBadRequest, "ParameterNotFound", "")
			return
		}
		if version == 0 {
			version = len(p.Values)
		}
		if version < 1 || version > len(p.Values) {
			fail(http.StatusBadRequest, "ParameterVersionNotFound", fmt.Sprintf("version %d of %s", version, name))
			return
		}
		v := p.Values[version-1]
		if p.Type == "SecureString" && !in.WithDecryption {
			v = base64.StdEncoding.EncodeToString([]byte("ciphertext of " + name)) // SSM answers the ciphertext
		}
		out = map[string]any{"Parameter": map[string]any{"Name": name, "Type": p.Type, "Value": v, "Version": version, "ARN": ARN(name), "DataType": "text"}}
	case "PutParameter":
		if in.Tier != "" && in.Tier != "Standard" || len(in.Value) > StandardMaxBytes {
			fail(http.StatusBadRequest, "ParameterMaxVersionLimitExceeded", "this stand-in keeps standard parameters of up to 4 KB")
			return
		}
		if in.Type != "SecureString" && in.Type != "String" {
			fail(http.StatusBadRequest, "UnsupportedParameterType", in.Type)
			return
		}
		p, ok := s.params[in.Name]
		if ok && !in.Overwrite {
			fail(http.StatusBadRequest, "ParameterAlreadyExists", "The parameter already exists. To overwrite this value, set the overwrite option in the request to true.")
			return
		}
		if !ok {
			p = &Parameter{}
			s.params[in.Name] = p
		}
		p.Type, p.KeyID, p.Values = in.Type, in.KeyId, append(p.Values, in.Value)
		if p.KeyID == "" && p.Type == "SecureString" {
			p.KeyID = "alias/aws/ssm"
		}
		out = map[string]any{"Version": len(p.Values), "Tier": "Standard"}
	case "DeleteParameter":
		if _, ok := s.params[in.Name]; !ok {
			fail(http.StatusBadRequest, "ParameterNotFound", "")
			return
		}
		delete(s.params, in.Name)
		out = map[string]any{}
	default:
		fail(http.StatusBadRequest, "InvalidAction", "this stand-in serves GetParameter, PutParameter and DeleteParameter")
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	json.NewEncoder(w).Encode(out)
}
