package netguard_test

import (
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/netguard"
)

// local is the policy of a laptop whose upstreams listen on 127.0.0.1.
func local() *netguard.Policy {
	return &netguard.Policy{AllowHTTP: true, AllowedHosts: []string{"127.0.0.1"}, Resolver: newResolver(names)}
}

// serve starts a server on 127.0.0.1 and returns its port.
func serve(t *testing.T, h http.HandlerFunc) (url, port string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return srv.URL, port
}

func get(t *testing.T, c *http.Client, url string) (string, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return "", netguard.Redact(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestClientFollowsARedirectOnTheSameHost(t *testing.T) {
	url, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusFound)
			return
		}
		io.WriteString(w, "at "+r.URL.Path)
	})
	body, err := get(t, local().Client(0), url+"/old")
	if err != nil || body != "at /new" {
		t.Errorf("GET /old = %q, %v; want the redirect to /new followed", body, err)
	}
}

func TestClientRefusesARedirectToAnotherHost(t *testing.T) {
	for _, tc := range []struct{ name, to string }{
		{"another name of the same machine", "http://localhost:%s/"},
		{"the metadata service", "http://169.254.169.254/latest/meta-data/"},
		{"another port of the same host", "http://127.0.0.1:1/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hits int
			_, targetPort := serve(t, func(w http.ResponseWriter, r *http.Request) { hits++ })
			to := strings.Replace(tc.to, "%s", targetPort, 1)
			url, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, to+"?token=hunter2", http.StatusFound)
			})
			p := local()
			p.AllowedHosts = append(p.AllowedHosts, "localhost") // allowed, yet another host
			_, err := get(t, p.Client(0), url+"/")
			if !errors.Is(err, netguard.ErrRefused) || !strings.Contains(err.Error(), "redirects to another host") {
				t.Fatalf("a redirect to %s: %v, want a refusal", to, err)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows the URL's secrets: %v", err)
			}
			if hits != 0 {
				t.Error("the redirect's target was reached")
			}
		})
	}
}

func TestClientRefusesARedirectToARefusedScheme(t *testing.T) {
	url, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	_, err := get(t, local().Client(0), url+"/")
	if !errors.Is(err, netguard.ErrRefused) {
		t.Fatalf("a redirect to file:///etc/passwd: %v, want a refusal", err)
	}
}

func TestClientChecksTheAddressItConnectsTo(t *testing.T) {
	var hits int
	_, port := serve(t, func(w http.ResponseWriter, r *http.Request) { hits++ })
	for _, tc := range []struct{ name, url, want string }{
		{"an address not allowed", "http://127.0.0.1:" + port + "/", "host 127.0.0.1 refused: it is a loopback address"},
		{"a name that resolved to a public address at registration and now to loopback", "http://rebind.test:" + port + "/", "host rebind.test refused: it resolves to 127.0.0.1, a loopback address"},
		{"a name of the machine", "http://localhost:" + port + "/", "host localhost refused: it resolves to 127.0.0.1, a loopback address"},
		{"a decimal spelling of loopback", "http://2130706433:" + port + "/", "decimal, octal or hex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &netguard.Policy{AllowHTTP: true, Resolver: newResolver(names)}
			if strings.Contains(tc.url, "rebind.test") {
				if _, err := p.CheckURL(t.Context(), tc.url); err != nil {
					t.Fatalf("at registration: %v", err)
				}
			}
			_, err := get(t, p.Client(0), tc.url+"?token=hunter2")
			if !errors.Is(err, netguard.ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("GET %s: %v, want a refusal saying %q", tc.url, err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows the URL's secrets: %v", err)
			}
		})
	}
	if hits != 0 {
		t.Errorf("the server was reached %d times", hits)
	}
}

func TestClientCapsResponseBodies(t *testing.T) {
	const max = 1000
	url, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Get("length") == "" {
			w.(http.Flusher).Flush() // chunked: the length is not declared
		} else {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		w.Write([]byte(strings.Repeat("x", n)))
	})
	p := local()
	p.MaxResponseBytes = max
	c := p.Client(0)
	for _, tc := range []struct {
		name, query string
		tooLarge    bool
	}{
		{"a body of exactly the cap is read", "?n=1000", false},
		{"a declared body of exactly the cap is read", "?n=1000&length=1", false},
		{"a body one byte over the cap fails", "?n=1001", true},
		{"a body far over the cap fails", "?n=100000", true},
		{"a declared body over the cap fails at once", "?n=1001&length=1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, err := get(t, c, url+"/"+tc.query)
			if !tc.tooLarge {
				if err != nil || len(body) != max {
					t.Errorf("read %d bytes, %v; want %d", len(body), err, max)
				}
				return
			}
			if !errors.Is(err, netguard.ErrResponseTooLarge) || !strings.Contains(err.Error(), "host 127.0.0.1") {
				t.Errorf("err = %v, want ErrResponseTooLarge naming the host", err)
			}
			if len(body) > max {
				t.Errorf("read %d bytes, more than the cap", len(body))
			}
		})
	}
}

func TestClientCapsEventStreamsPerEventOnlyWhenAsked(t *testing.T) {
	const max = 1000
	events := map[string]string{
		// 50 events of 100 bytes, 5,000 bytes in all, with each line end SSE allows.
		"small":   strings.Repeat("data: "+strings.Repeat("x", 92)+"\n\n", 20) + strings.Repeat("data: "+strings.Repeat("y", 92)+"\r\n\r\n", 20) + strings.Repeat("data: "+strings.Repeat("z", 92)+"\r\r", 10),
		"lines":   strings.Repeat("data: "+strings.Repeat("x", 400)+"\n", 3) + "\n", // one event of three lines, 1,218 bytes
		"crlf":    strings.Repeat("data: "+strings.Repeat("x", 400)+"\r\n", 3) + "\r\n",
		"oneline": "data: " + strings.Repeat("x", 2000) + "\n\n",
		"exact":   strings.Repeat("data: "+strings.Repeat("x", 994)+"\n\n", 3), // events of exactly the cap
	}
	url, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("type") == "stream" {
			w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		}
		w.(http.Flusher).Flush()
		w.Write([]byte(events[r.URL.Query().Get("events")]))
	})
	for _, tc := range []struct {
		name         string
		eventsCapped bool
		query        string
		want         string // "" for the whole body, else what the error says
	}{
		{"a stream of small events longer than the cap is read whole", true, "type=stream&events=small", ""},
		{"events of exactly the cap are read", true, "type=stream&events=exact", ""},
		{"an event of several lines over the cap fails", true, "type=stream&events=lines", "an event of more than 1000 bytes"},
		{"an event of CRLF lines over the cap fails", true, "type=stream&events=crlf", "an event of more than 1000 bytes"},
		{"one long line over the cap fails", true, "type=stream&events=oneline", "an event of more than 1000 bytes"},
		{"a body that is no event stream is still capped whole", true, "events=small", "more than 1000 bytes"},
		{"without EventsCapped an event stream is capped whole", false, "type=stream&events=small", "more than 1000 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := local()
			p.MaxResponseBytes, p.EventsCapped = max, tc.eventsCapped
			body, err := get(t, p.Client(0), url+"/?"+tc.query)
			if tc.want == "" {
				whole := events[tc.query[strings.LastIndex(tc.query, "=")+1:]]
				if err != nil || body != whole {
					t.Fatalf("read %d bytes, %v; want the %d of the stream", len(body), err, len(whole))
				}
				return
			}
			if !errors.Is(err, netguard.ErrResponseTooLarge) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "host 127.0.0.1") {
				t.Fatalf("err = %v, want ErrResponseTooLarge saying %q", err, tc.want)
			}
			if len(body) > 2*max {
				t.Errorf("read %d bytes past the cap", len(body))
			}
		})
	}
}

func TestRedactKeepsSchemeAndHostOnly(t *testing.T) {
	p := &netguard.Policy{Resolver: newResolver(names)}
	_, err := p.Client(0).Get("https://metadata.test:8443/latest/meta-data/iam?token=hunter2")
	got := netguard.Redact(err).Error()
	want := `Get "https://metadata.test:8443": netguard: host metadata.test refused: it resolves to 169.254.169.254`
	if !strings.HasPrefix(got, want) {
		t.Errorf("Redact = %q, want it to begin %q", got, want)
	}
	if !errors.Is(netguard.Redact(err), netguard.ErrRefused) {
		t.Error("Redact lost the refusal")
	}
}

func TestClientResumesTheTLSSessionOnANewConnection(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close") // each request on a new connection
		io.WriteString(w, strconv.FormatBool(r.TLS.DidResume))
	}))
	t.Cleanup(srv.Close)
	// The client trusts the system's roots: this test's are the server's
	// certificate (no other test of the package loads them first).
	bundle := filepath.Join(t.TempDir(), "bundle.pem")
	if err := os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", bundle)
	t.Setenv("SSL_CERT_DIR", t.TempDir())
	c := local().Client(0)
	var resumed []string
	for range 2 {
		body, err := get(t, c, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resumed = append(resumed, body)
	}
	if resumed[0] != "false" || resumed[1] != "true" {
		t.Errorf("resumed = %v; want the second connection to resume the first's session", resumed)
	}
}
