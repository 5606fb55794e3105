package shutdown_test

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/lambdatest"
	"github.com/switchboard-dev/switchboard/shared/shutdown"
)

func TestRegisterRegistersOneExtensionOfNoEvents(t *testing.T) {
	rt := lambdatest.NewRuntime(nil)
	defer rt.Close()
	if err := shutdown.Register(rt.Addr()); err != nil {
		t.Fatal(err)
	}
	if got := rt.Registered(); len(got) != 1 || got[0] != shutdown.ExtensionName {
		t.Errorf("registered %v, want [%s]", got, shutdown.ExtensionName)
	}
}

// TestRegisterAsksForTheNextEvent checks the requests the runtime API gets:
// the registration, then a request for the next event with the identifier
// it gave, without which Lambda would not end the init phase.
func TestRegisterAsksForTheNextEvent(t *testing.T) {
	type request struct{ method, path, name, id, body string }
	got := make(chan request, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body strings.Builder
		if r.Body != nil {
			b := make([]byte, 256)
			n, _ := r.Body.Read(b)
			body.Write(b[:n])
		}
		got <- request{r.Method, r.URL.Path, r.Header.Get("Lambda-Extension-Name"), r.Header.Get("Lambda-Extension-Identifier"), body.String()}
		if r.Method == http.MethodPost {
			w.Header().Set("Lambda-Extension-Identifier", "ext-1")
			w.Write([]byte(`{"functionName":"f"}`))
			return
		}
		<-r.Context().Done() // the next event never comes
	}))
	defer srv.Close()
	if err := shutdown.Register(strings.TrimPrefix(srv.URL, "http://")); err != nil {
		t.Fatal(err)
	}
	want := []request{
		{http.MethodPost, "/2020-01-01/extension/register", shutdown.ExtensionName, "", `{"events":[]}`},
		{http.MethodGet, "/2020-01-01/extension/event/next", "", "ext-1", ""},
	}
	for _, w := range want {
		select {
		case r := <-got:
			if r != w {
				t.Errorf("request %+v, want %+v", r, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no request %s %s", w.method, w.path)
		}
	}
	srv.CloseClientConnections()
}

func TestRegisterReportsWhatTheRuntimeAPIRefused(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"a refusal", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"errorType":"Extension.InvalidRegistration"}`, http.StatusForbidden)
		}, "answered 403 Forbidden"},
		{"an answer without an identifier", func(w http.ResponseWriter, r *http.Request) {}, "no Lambda-Extension-Identifier"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			err := shutdown.Register(strings.TrimPrefix(srv.URL, "http://"))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), shutdown.ExtensionName) {
				t.Errorf("Register: %v, want an error naming %s and saying %q", err, shutdown.ExtensionName, tt.want)
			}
		})
	}
}

func TestWaitOutsideABootstrapDoesNothing(t *testing.T) {
	if err := shutdown.Wait(); err != nil {
		t.Errorf("Wait in a test binary: %v, want nil", err)
	}
}

// TestTheRegistrationStartsBeforeNetHTTP checks what lets the registration
// overlap a bootstrap's other initialisers: built as a bootstrap is, the
// package imports neither net/http nor any module's package, so it is
// initialised before them.
func TestTheRegistrationStartsBeforeNetHTTP(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "lambda.norpc", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var std []string
	for line := range strings.Lines(string(out)) {
		path, standard, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch {
		case path == "github.com/switchboard-dev/switchboard/shared/shutdown":
		case standard != "true":
			t.Errorf("package shutdown depends on %s, a module's package, which it would then be initialised after", path)
		default:
			std = append(std, path)
		}
	}
	if slices.Contains(std, "net/http") {
		t.Error("package shutdown depends on net/http, which it would then be initialised after")
	}
	if !slices.Contains(std, "net") {
		t.Errorf("go list -deps listed %v, without net", std)
	}
}
