package netguard

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// authority is a certificate and its key, which may sign others.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// issue makes a certificate for subject, signed by parent (self-signed if
// nil): a CA if hosts is empty, else a server's for hosts (names or IPs),
// valid from now to notAfter.
func issue(t *testing.T, parent *authority, subject string, notAfter time.Time, hosts ...string) *authority {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: subject},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter, BasicConstraintsValid: true}
	if len(hosts) == 0 {
		tmpl.IsCA, tmpl.KeyUsage = true, x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature
	} else {
		tmpl.KeyUsage, tmpl.ExtKeyUsage = x509.KeyUsageDigitalSignature, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &authority{cert, key}
}

func pemOf(certs ...*authority) []byte {
	var out []byte
	for _, c := range certs {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.cert.Raw})...)
	}
	return out
}

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// pki is a trusted root (with a second root of the same subject and
// another key, as a renewed root has), an intermediate, and an untrusted
// root that claims the trusted one's subject.
type pki struct {
	root, renewed, intermediate, impostor *authority
	trusted                               []*authority
}

func newPKI(t *testing.T) *pki {
	later := time.Now().Add(24 * time.Hour)
	p := &pki{root: issue(t, nil, "Switchboard Test Root", later), renewed: issue(t, nil, "Switchboard Test Root", later),
		impostor: issue(t, nil, "Switchboard Test Root", later)}
	p.intermediate = issue(t, p.root, "Switchboard Test Intermediate", later)
	// Another root, so that the store holds more than the chains use.
	p.trusted = []*authority{issue(t, nil, "Some Other Root", later), p.root, p.renewed}
	return p
}

func TestTrustVerifiesAsCryptoX509WithAllTheRoots(t *testing.T) {
	p := newPKI(t)
	later, past := time.Now().Add(24*time.Hour), time.Now().Add(-time.Minute)
	cases := []struct {
		name  string
		host  string
		chain []*authority
		ok    bool
	}{
		{"a leaf issued by a trusted root verifies", "upstream.test", []*authority{issue(t, p.root, "leaf", later, "upstream.test")}, true},
		{"a leaf issued through an intermediate verifies", "upstream.test", []*authority{issue(t, p.intermediate, "leaf", later, "upstream.test"), p.intermediate}, true},
		{"a leaf issued by the second of two roots of one subject verifies", "upstream.test", []*authority{issue(t, p.renewed, "leaf", later, "upstream.test")}, true},
		{"a leaf for an IP address verifies for that address", "127.0.0.1", []*authority{issue(t, p.root, "leaf", later, "127.0.0.1")}, true},
		{"a leaf for another host is refused", "upstream.test", []*authority{issue(t, p.root, "leaf", later, "other.test")}, false},
		{"a leaf for a name is refused for an IP address", "127.0.0.1", []*authority{issue(t, p.root, "leaf", later, "upstream.test")}, false},
		{"an expired leaf is refused", "upstream.test", []*authority{issue(t, p.root, "leaf", past, "upstream.test")}, false},
		{"a leaf issued by an untrusted root of a trusted subject is refused", "upstream.test", []*authority{issue(t, p.impostor, "leaf", later, "upstream.test")}, false},
		{"a leaf without its intermediate is refused", "upstream.test", []*authority{issue(t, p.intermediate, "leaf", later, "upstream.test")}, false},
		{"a CA certificate is not a server's", "upstream.test", []*authority{p.intermediate}, false},
		{"no certificate is refused", "upstream.test", nil, false},
	}
	bundle := writeFile(t, filepath.Join(t.TempDir(), "bundle.pem"), pemOf(p.trusted...))
	trust, err := loadTrust([]string{bundle}, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := x509.NewCertPool()
	for _, a := range p.trusted {
		all.AddCert(a.cert)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var certs []*x509.Certificate
			for _, a := range tc.chain {
				certs = append(certs, a.cert)
			}
			got := trust.verify(tc.host, certs)
			if (got == nil) != tc.ok {
				t.Fatalf("verify = %v; want ok %v", got, tc.ok)
			}
			if len(certs) == 0 {
				return
			}
			// The oracle: crypto/x509 with every trusted root in the pool.
			opts := x509.VerifyOptions{DNSName: tc.host, Roots: all, Intermediates: x509.NewCertPool()}
			for _, c := range certs[1:] {
				opts.Intermediates.AddCert(c)
			}
			if _, want := certs[0].Verify(opts); (want == nil) != (got == nil) {
				t.Errorf("verify = %v; crypto/x509 with all the roots says %v", got, want)
			}
		})
	}
}

func TestLoadTrustReadsWhatCryptoX509Reads(t *testing.T) {
	later := time.Now().Add(time.Hour)
	a, b, c, d := issue(t, nil, "A", later), issue(t, nil, "B", later), issue(t, nil, "C", later), issue(t, nil, "D", later)
	dir := t.TempDir()
	extra := append(pem.EncodeToMemory(&pem.Block{Type: "TRUSTED CERTIFICATE", Bytes: d.cert.Raw}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED"}, Bytes: d.cert.Raw})...)
	bundle := writeFile(t, filepath.Join(dir, "pki", "bundle.pem"), append(pemOf(a, b), extra...))
	certs := filepath.Join(dir, "certs")
	writeFile(t, filepath.Join(certs, "a.pem"), pemOf(a))                                                                         // again, in a file of its own
	writeFile(t, filepath.Join(certs, "c.pem"), pemOf(c))                                                                         // only here
	writeFile(t, filepath.Join(certs, "junk.txt"), []byte("not a certificate"))                                                   // skipped
	writeFile(t, filepath.Join(certs, "broken.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{0x30, 1}})) // skipped
	for link, target := range map[string]string{"bundle.crt": bundle, "0a1b2c3d.0": "c.pem"} {
		if err := os.Symlink(target, filepath.Join(certs, link)); err != nil {
			t.Fatal(err)
		}
	}
	// A second name for the folder, as /etc/ssl/certs is for /etc/pki/tls/certs on Amazon Linux.
	alias := filepath.Join(dir, "alias")
	if err := os.Symlink(certs, alias); err != nil {
		t.Fatal(err)
	}
	trust, err := loadTrust([]string{filepath.Join(dir, "missing.pem"), bundle, filepath.Join(certs, "c.pem")}, []string{certs, alias, filepath.Join(dir, "no-such-folder")})
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, roots := range trust.bySubject {
		for _, r := range roots {
			cert, err := x509.ParseCertificate(r.pem.bytes())
			if err != nil {
				t.Fatal(err)
			}
			subjects = append(subjects, cert.Subject.CommonName)
		}
	}
	slices.Sort(subjects)
	if want := []string{"A", "B", "C"}; !slices.Equal(subjects, want) {
		t.Errorf("indexed %v; want %v, each once", subjects, want)
	}
}

func TestLoadTrustReadsABundleThatIsNotAFile(t *testing.T) {
	a := issue(t, nil, "A", time.Now().Add(time.Hour))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() { w.Write(pemOf(a)); w.Close() }()
	// SSL_CERT_FILE=<(...): a link to a pipe, which crypto/x509 reads.
	trust, err := loadTrust([]string{fmt.Sprintf("/dev/fd/%d", r.Fd())}, nil)
	if err != nil || len(trust.bySubject) != 1 {
		t.Errorf("loadTrust of a pipe = %v, %v; want its one certificate", trust, err)
	}
}

func TestLoadTrustFailsOnlyWhenItFoundNothingAndCouldNotRead(t *testing.T) {
	dir := t.TempDir()
	if trust, err := loadTrust([]string{filepath.Join(dir, "missing.pem")}, []string{filepath.Join(dir, "missing")}); err != nil || len(trust.bySubject) != 0 {
		t.Errorf("loadTrust of nothing = %v, %v; want an empty store", trust, err)
	}
	// A folder given as the bundle cannot be read as a file.
	if _, err := loadTrust([]string{dir}, nil); err == nil {
		t.Error("loadTrust of a folder as the bundle: no error")
	}
}

// useTrust makes the clients of this test trust the authorities given,
// as if they were the system's.
func useTrust(t *testing.T, trusted ...*authority) {
	t.Helper()
	if !indexesRoots {
		t.Skip("the platform verifies certificates here")
	}
	trust, err := loadTrust([]string{writeFile(t, filepath.Join(t.TempDir(), "bundle.pem"), pemOf(trusted...))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	saved := systemTrust
	systemTrust = func() (*trustStore, error) { return trust, nil }
	t.Cleanup(func() { systemTrust = saved })
}

// tlsServer serves over TLS with chain (the leaf first) on 127.0.0.1 and
// answers the protocol of the request: with HTTP/2 offered, or over
// HTTP/1.1 only and a connection per request.
func tlsServer(t *testing.T, http2 bool, chain ...*authority) *httptest.Server {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !http2 {
			w.Header().Set("Connection", "close")
		}
		io.WriteString(w, r.Proto)
	}))
	cert := tls.Certificate{PrivateKey: chain[0].key}
	for _, c := range chain {
		cert.Certificate = append(cert.Certificate, c.cert.Raw)
	}
	srv.EnableHTTP2 = http2
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func TestClientVerifiesTheHostItDials(t *testing.T) {
	p := newPKI(t)
	useTrust(t, p.trusted...)
	later := time.Now().Add(time.Hour)
	policy := &Policy{AllowedHosts: []string{"127.0.0.1"}}
	cases := []struct {
		name  string
		chain []*authority
		want  string // the protocol answered, or "" for a refused handshake
	}{
		{"a server with a chain to a trusted root answers over HTTP/2", []*authority{issue(t, p.intermediate, "leaf", later, "127.0.0.1"), p.intermediate}, "HTTP/2.0"},
		{"a server whose certificate names another host is refused", []*authority{issue(t, p.root, "leaf", later, "upstream.test")}, ""},
		{"a server with an untrusted root of a trusted subject is refused", []*authority{issue(t, p.impostor, "leaf", later, "127.0.0.1")}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := tlsServer(t, true, tc.chain...)
			c := policy.Client(5 * time.Second)
			resp, err := c.Get(srv.URL)
			if tc.want == "" {
				var verr *tls.CertificateVerificationError
				if !errors.As(err, &verr) {
					t.Fatalf("GET = %v; want a certificate verification error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != tc.want {
				t.Fatalf("answered over %s; want %s", body, tc.want)
			}
		})
	}
}

func TestClientOffersHTTP2OnlyWhenNetHTTPHasIt(t *testing.T) {
	p := newPKI(t)
	useTrust(t, p.trusted...)
	srv := tlsServer(t, true, issue(t, p.root, "leaf", time.Now().Add(time.Hour), "127.0.0.1"))
	for _, tc := range []struct{ godebug, want string }{{"", "HTTP/2.0"}, {"http2client=0", "HTTP/1.1"}} {
		t.Setenv("GODEBUG", tc.godebug)
		resp, err := (&Policy{AllowedHosts: []string{"127.0.0.1"}}).Client(5 * time.Second).Get(srv.URL)
		if err != nil {
			t.Fatalf("GODEBUG=%s: %v", tc.godebug, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != tc.want {
			t.Errorf("GODEBUG=%s: answered over %s; want %s", tc.godebug, body, tc.want)
		}
	}
}

func TestClientVerifiesAResumedSessionAgain(t *testing.T) {
	p := newPKI(t)
	useTrust(t, p.trusted...)
	srv := tlsServer(t, false, issue(t, p.root, "leaf", time.Now().Add(time.Hour), "127.0.0.1"))
	c := (&Policy{AllowedHosts: []string{"127.0.0.1"}}).Client(5 * time.Second)
	for i, want := range []bool{false, true} {
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.TLS.DidResume != want {
			t.Fatalf("connection %d resumed %v; want %v", i+1, resp.TLS.DidResume, want)
		}
	}
	useTrust(t) // the root is no longer trusted
	var verr *tls.CertificateVerificationError
	if _, err := c.Get(srv.URL); !errors.As(err, &verr) {
		t.Errorf("GET on a resumed session after the root was dropped = %v; want a certificate verification error", err)
	}
}

// pemReference is what pemCertificates must yield: the blocks of data
// that x509.CertPool.AppendCertsFromPEM considers, as pem.Decode reads them.
func pemReference(data []byte) [][]byte {
	var out [][]byte
	for {
		var block *pem.Block
		if block, data = pem.Decode(data); block == nil {
			return out
		}
		if block.Type == "CERTIFICATE" && len(block.Headers) == 0 {
			out = append(out, block.Bytes)
		}
	}
}

// pemSamples are PEM files laid out as bundles lay them out and otherwise.
func pemSamples(t testing.TB) map[string][]byte {
	a := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("first certificate's bytes, of some length to wrap the base64 lines")})
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("second")})
	trusted := pem.EncodeToMemory(&pem.Block{Type: "TRUSTED CERTIFICATE", Bytes: []byte("trusted")})
	headers := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED"}, Bytes: []byte("with headers")})
	crlf := bytes.ReplaceAll(a, []byte("\n"), []byte("\r\n"))
	samples := map[string][]byte{
		"two blocks":                         append(append([]byte{}, a...), b...),
		"CRLF line ends":                     crlf,
		"comments between blocks":            []byte("# Root A\n" + string(a) + "\n# Root B\n" + string(b)),
		"other types and headers":            []byte(string(trusted) + string(headers) + string(b)),
		"a BEGIN line with trailing spaces":  bytes.Replace(a, []byte("-----\n"), []byte("----- \t\n"), 1),
		"an END line with trailing junk":     bytes.Replace(a, []byte("CERTIFICATE-----\n"), []byte("CERTIFICATE-----junk\n"), 2),
		"a BEGIN that does not start a line": []byte("text " + string(a) + string(b)),
		"a BEGIN without an END":             []byte("-----BEGIN CERTIFICATE-----\nAAAA\n" + string(b)),
		"spaces in the base64":               bytes.Replace(a, []byte("\n"), []byte(" \n"), 3),
		"a blank line in the base64":         bytes.Replace(a, []byte("\n"), []byte("\n\n"), 2),
		"base64 that does not decode":        []byte("-----BEGIN CERTIFICATE-----\nA=AA\n-----END CERTIFICATE-----\n" + string(b)),
		"no line end after the last END":     bytes.TrimSuffix(append(append([]byte{}, a...), b...), []byte("\n")),
		"an END of another type inside":      []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END FOO-----\n" + string(b)),
		"a lone END before the blocks":       []byte("\n-----END CERTIFICATE-----\n" + string(a)),
		"an END line ending in a lone CR":    append(bytes.TrimSuffix(a, []byte("\n")), '\r'),
		"an END line with a CR and junk":     bytes.Replace(a, []byte("CERTIFICATE-----\n"), []byte("CERTIFICATE-----\rjunk\n"), 2),
		"an END line with a CR and a space":  bytes.Replace(a, []byte("CERTIFICATE-----\n"), []byte("CERTIFICATE-----\r \n"), 2),
		"nothing":                            nil,
	}
	for _, f := range linuxCertFiles { // this machine's bundle, if it has one
		if data, err := os.ReadFile(f); err == nil {
			samples["the system bundle "+f] = data
			break
		}
	}
	return samples
}

// decoded is the DER of the blocks pemCertificates yields that decode:
// what pem.Decode returns.
func decoded(data []byte) [][]byte {
	var out [][]byte
	for c := range pemCertificates(data) {
		if der := c.bytes(); der != nil {
			out = append(out, der)
		}
	}
	return out
}

func TestPEMCertificatesYieldsWhatPEMDecodeReturns(t *testing.T) {
	for name, data := range pemSamples(t) {
		t.Run(name, func(t *testing.T) {
			if got, want := decoded(data), pemReference(data); !slices.EqualFunc(got, want, bytes.Equal) {
				t.Errorf("pemCertificates yields %q; pem.Decode returns %q", got, want)
			}
		})
	}
}

func FuzzPEMCertificatesYieldsWhatPEMDecodeReturns(f *testing.F) {
	for _, data := range pemSamples(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := decoded(data), pemReference(data); !slices.EqualFunc(got, want, bytes.Equal) {
			t.Errorf("pemCertificates(%q) yields %q; pem.Decode returns %q", data, got, want)
		}
	})
}

func TestPEMCertificatesLeavesABundlesBlocksUndecoded(t *testing.T) {
	data := pemSamples(t)["CRLF line ends"]
	text, next, ok := plainBlock(data, 0)
	c := pemCertificate{base64: text}
	if !ok || string(data[next:]) != "\r\n" || !bytes.Equal(c.bytes(), pemReference(data)[0]) {
		t.Errorf("plainBlock = %q, %d, %v; want the block's base64, the END line's end, true", text, next, ok)
	}
}

func TestASubjectIsReadFromTheStartOfABlockThatHoldsIt(t *testing.T) {
	later := time.Now().Add(time.Hour)
	long := issue(t, nil, strings.Repeat("a long name ", 5), later)
	// A subject that ends past the bytes decoded first: it is decoded whole.
	longer := issue(t, nil, strings.Repeat("a longer name ", 70), later)
	data := pemOf(issue(t, nil, "short", later), long, longer)
	for name, d := range pemSamples(t) {
		if strings.HasPrefix(name, "the system bundle") {
			data = append(data, d...)
		}
	}
	want := pemReference(data)
	i := 0
	for c := range pemCertificates(data) {
		subject, got, ok := c.subject()
		cert, err := x509.ParseCertificate(want[i])
		if err != nil {
			t.Fatal(err)
		}
		if !ok || subject != string(cert.RawSubject) || !bytes.Equal(got.bytes(), want[i]) {
			t.Errorf("certificate %d (%.40s): subject = %.32x, %v; crypto/x509 reads %.32x", i, cert.Subject, subject, ok, cert.RawSubject)
		}
		if i++; i == 3 && got.base64 != nil {
			t.Errorf("the certificate whose subject is %d bytes long was not decoded whole", len(cert.RawSubject))
		}
	}
	if i != len(want) {
		t.Errorf("pemCertificates yields %d blocks; want %d", i, len(want))
	}
}

// BenchmarkLoadingTheSystemBundle compares indexing this machine's CA
// bundle with parsing it, as crypto/x509 does at a process's first
// handshake.
func BenchmarkLoadingTheSystemBundle(b *testing.B) {
	var file string
	var data []byte
	for _, f := range linuxCertFiles {
		if d, err := os.ReadFile(f); err == nil {
			file, data = f, d
			break
		}
	}
	if file == "" {
		b.Skip("no system bundle")
	}
	b.Run("indexed", func(b *testing.B) {
		for b.Loop() {
			if _, err := loadTrust([]string{file}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("crypto/x509", func(b *testing.B) {
		for b.Loop() {
			if !x509.NewCertPool().AppendCertsFromPEM(data) {
				b.Fatal("no certificate")
			}
		}
	})
}

// certificateSamples are DER certificates: this machine's roots, if it has
// a bundle, and a few made here, whole and cut short.
func certificateSamples(t testing.TB) [][]byte {
	var out [][]byte
	for name, data := range pemSamples(t) {
		if strings.HasPrefix(name, "the system bundle") {
			out = append(out, pemReference(data)...)
		}
	}
	tt, ok := t.(*testing.T)
	if !ok {
		return out
	}
	p := newPKI(tt)
	for _, a := range []*authority{p.root, p.intermediate, issue(tt, p.intermediate, "leaf", time.Now().Add(time.Hour), "upstream.test")} {
		out = append(out, a.cert.Raw, a.cert.Raw[:len(a.cert.Raw)/2])
	}
	return out
}

func TestRawSubjectIsWhatCryptoX509Reads(t *testing.T) {
	for i, der := range certificateSamples(t) {
		subject, ok := rawSubject(der)
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			continue // a certificate that does not parse is never trusted, whatever its index says
		}
		if !ok || !bytes.Equal(subject, cert.RawSubject) {
			t.Errorf("certificate %d (%s): rawSubject = %x, %v; crypto/x509 reads %x", i, cert.Subject, subject, ok, cert.RawSubject)
		}
	}
}

func FuzzRawSubjectIsWhatCryptoX509Reads(f *testing.F) {
	for _, der := range certificateSamples(f) {
		f.Add(der)
	}
	f.Fuzz(func(t *testing.T, der []byte) {
		subject, ok := rawSubject(der)
		if cert, err := x509.ParseCertificate(der); err == nil && (!ok || !bytes.Equal(subject, cert.RawSubject)) {
			t.Errorf("rawSubject = %x, %v; crypto/x509 reads %x", subject, ok, cert.RawSubject)
		}
	})
}
