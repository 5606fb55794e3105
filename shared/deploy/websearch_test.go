package deploy

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/config"
)

// sampleSearchPage is what the stand-in of DuckDuckGo's HTML endpoint
// answers every search with: package duckduckgo's results page.
const sampleSearchPage = "../websearch/duckduckgo/testdata/results.html"

// sampleSearchHandler answers as DuckDuckGo's HTML endpoint does, for the
// web search functions' sample events: no test reaches the network.
func sampleSearchHandler(t *testing.T) http.Handler {
	t.Helper()
	page, err := os.ReadFile(sampleSearchPage)
	if err != nil {
		t.Fatal(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.PostFormValue("q") == "" {
			http.Error(w, "want a search form", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.Write(page)
	})
}

// sampleSearchConfig returns the web search settings of an in-process
// function: DuckDuckGo at a local stand-in, over http as on a laptop.
func sampleSearchConfig(t *testing.T) config.WebSearch {
	t.Helper()
	srv := httptest.NewServer(sampleSearchHandler(t))
	t.Cleanup(srv.Close)
	return config.WebSearch{DuckDuckGoURL: srv.URL + "/html/", AllowedHosts: "127.0.0.1", AllowHTTP: true}
}

// sampleSearchEnv returns the environment of a web search bootstrap:
// DuckDuckGo at a local stand-in over https, as deployed, its certificate
// trusted through SSL_CERT_FILE.
func sampleSearchEnv(t *testing.T, dir string) []string {
	t.Helper()
	srv := httptest.NewTLSServer(sampleSearchHandler(t))
	t.Cleanup(srv.Close)
	cert := filepath.Join(dir, "search-ca.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"SSL_CERT_FILE=" + cert, config.EnvWebSearchDuckDuckGoURL + "=" + srv.URL + "/html/", config.EnvWebSearchAllowedHosts + "=127.0.0.1"}
}
