package netguard

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// trustStore is the certificate authorities a client trusts, indexed by
// subject and parsed only when a chain names one as its issuer. The first
// TLS handshake of a process that trusts the system's roots otherwise
// parses every certificate of the system's bundle (some 140, about 2 ms of
// a connector function's cold start here), and on Linux crypto/x509 parses
// a bundle once more for each certificate folder that links to it. Verification is
// crypto/tls's own: a chain can end only at a root whose subject is the
// issuer of one of the certificates the server sent, so verifying against
// those roots alone finds the chains that verifying against all would.
type trustStore struct {
	bySubject map[string][][]byte // DER certificates by raw subject

	mu     sync.Mutex
	parsed map[string]*x509.Certificate // by DER, once parsed; nil if it did not parse
}

// systemTrust is the system's roots, found where crypto/x509 finds them on
// Linux, loaded once by the first client that needs them.
var systemTrust = sync.OnceValues(func() (*trustStore, error) {
	files := linuxCertFiles
	if f := os.Getenv("SSL_CERT_FILE"); f != "" {
		files = []string{f}
	}
	dirs := linuxCertDirs
	if d := os.Getenv("SSL_CERT_DIR"); d != "" {
		dirs = strings.Split(d, ":") // OpenSSL's separator, as crypto/x509's
	}
	return loadTrust(files, dirs)
})

// indexesRoots reports whether clients verify against [systemTrust]: on
// Linux, where crypto/x509 reads the roots from files, as it does; elsewhere
// the platform verifies.
var indexesRoots = runtime.GOOS == "linux"

// PreloadRoots starts loading the system's roots in the background, once
// per process: a caller about to make its first TLS connection starts it
// first, so that the load overlaps what it does before dialing.
func PreloadRoots() {
	if indexesRoots {
		preload()
	}
}

var preload = sync.OnceFunc(func() { go systemTrust() })

// The files and folders crypto/x509 reads on Linux (root_linux.go): the
// first bundle of the list that exists, then every file of every folder.
var (
	linuxCertFiles = []string{
		"/etc/ssl/certs/ca-certificates.crt",
		"/etc/pki/tls/certs/ca-bundle.crt",
		"/etc/ssl/ca-bundle.pem",
		"/etc/pki/tls/cacert.pem",
		"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
		"/etc/ssl/cert.pem",
	}
	linuxCertDirs = []string{"/etc/ssl/certs", "/etc/pki/tls/certs"}
)

// loadTrust reads the first of files that exists and every file of dirs,
// as crypto/x509's loadSystemRoots does, but reads a file reached twice
// (through a link, or a folder that links to another) once and indexes a
// certificate found twice once. It fails, as loadSystemRoots does, only if
// it found no certificate and a file or folder could not be read.
func loadTrust(files, dirs []string) (*trustStore, error) {
	t := &trustStore{bySubject: map[string][][]byte{}, parsed: map[string]*x509.Certificate{}}
	l := trustLoader{t: t}
	var firstErr error
	noteErr := func(err error) {
		if firstErr == nil && !errors.Is(err, fs.ErrNotExist) {
			firstErr = err
		}
	}
	for _, f := range files {
		err := l.readFile(f)
		if err == nil {
			break
		}
		noteErr(err)
	}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			noteErr(err)
			continue
		}
		for _, e := range entries {
			if !isSameDirSymlink(dir, e) {
				l.readFile(filepath.Join(dir, e.Name())) // as crypto/x509, a file that cannot be read is skipped
			}
		}
	}
	if l.count == 0 && firstErr != nil {
		return nil, fmt.Errorf("netguard: loading the system's trusted certificates: %w", firstErr)
	}
	return t, nil
}

// trustLoader fills a trustStore, remembering what it has read.
type trustLoader struct {
	t     *trustStore
	files []os.FileInfo // the files read
	count int           // certificates indexed
}

// readFile indexes the certificates of the PEM file at path, unless that
// file (reached by another path, through a link) was read already.
func (l *trustLoader) readFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if slices.ContainsFunc(l.files, func(read os.FileInfo) bool { return os.SameFile(read, fi) }) {
		return nil
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	l.files = append(l.files, fi)
	l.add(data)
	return nil
}

// add indexes the certificates of PEM data whose subject reads.
func (l *trustLoader) add(data []byte) {
	for der := range pemCertificates(data) {
		subject, ok := rawSubject(der)
		if !ok {
			continue
		}
		// A certificate found twice shares its subject, whose few
		// certificates are compared.
		same := l.t.bySubject[string(subject)]
		if slices.ContainsFunc(same, func(c []byte) bool { return bytes.Equal(c, der) }) {
			continue
		}
		l.count++
		l.t.bySubject[string(subject)] = append(same, der)
	}
}

// pemCertificates yields the DER of each block of data that
// x509.CertPool.AppendCertsFromPEM considers: those pem.Decode returns with
// type CERTIFICATE and no headers. A block laid out as bundles lay them out
// (the BEGIN line, lines of base64, the END line) is decoded here, in one
// pass; pem.Decode, which scans each block three times, reads any other.
func pemCertificates(data []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for len(data) > 0 {
			i := bytes.Index(data, pemBegin)
			if i < 0 {
				return
			}
			if der, next, ok := plainBlock(data, i); ok {
				data = data[next:]
				if !yield(der) {
					return
				}
				continue
			}
			var block *pem.Block
			if block, data = pem.Decode(data); block == nil {
				return
			}
			if block.Type == "CERTIFICATE" && len(block.Headers) == 0 && !yield(block.Bytes) {
				return
			}
		}
	}
}

var (
	pemBegin = []byte("-----BEGIN CERTIFICATE-----")
	pemEnd   = []byte("\n-----END CERTIFICATE-----")
)

// plainBlock decodes the block whose BEGIN line starts at data[i], if it is
// one that pem.Decode would return as it is: the BEGIN line starts a line
// and ends there, the END line is the first after it and ends a line, and
// between them are only base64 and line ends (no headers, no spaces). It
// returns the block's DER and where the rest of data starts.
func plainBlock(data []byte, i int) (der []byte, next int, ok bool) {
	if i > 0 && data[i-1] != '\n' {
		return nil, 0, false
	}
	body := data[i+len(pemBegin):]
	switch {
	case bytes.HasPrefix(body, []byte("\n")):
		body = body[1:]
	case bytes.HasPrefix(body, []byte("\r\n")):
		body = body[2:]
	default:
		return nil, 0, false
	}
	end := bytes.Index(body, pemEnd)
	if end < 0 {
		return nil, 0, false
	}
	after := body[end+len(pemEnd):]
	if len(after) > 0 && after[0] != '\n' && !bytes.HasPrefix(after, []byte("\r\n")) {
		return nil, 0, false
	}
	body = body[:end]
	der = make([]byte, base64.StdEncoding.DecodedLen(len(body)))
	// It skips line ends, as pem.Decode's does, and fails on anything else
	// that is not base64: headers, spaces, another BEGIN line.
	n, err := base64.StdEncoding.Decode(der, body)
	if err != nil {
		return nil, 0, false
	}
	return der[:n], len(data) - len(after), true
}

// rawSubject returns the DER of a certificate's subject (what
// x509.Certificate.RawSubject holds, and what chain building matches an
// issuer against) without parsing the rest of it: Certificate ::=
// SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL, serialNumber
// INTEGER, signature, issuer, validity, subject (SEQUENCEs) ... } ... }.
func rawSubject(der []byte) ([]byte, bool) {
	tag, cert, _, _, ok := derElement(der)
	if !ok || tag != 0x30 {
		return nil, false
	}
	tag, tbs, _, _, ok := derElement(cert)
	if !ok || tag != 0x30 {
		return nil, false
	}
	if len(tbs) > 0 && tbs[0] == 0xa0 { // the version
		if _, _, _, tbs, ok = derElement(tbs); !ok {
			return nil, false
		}
	}
	for _, want := range []byte{0x02, 0x30, 0x30, 0x30} { // serial, signature, issuer, validity
		if tag, _, _, tbs, ok = derElement(tbs); !ok || tag != want {
			return nil, false
		}
	}
	tag, _, subject, _, ok := derElement(tbs)
	return subject, ok && tag == 0x30
}

// derElement splits off the DER element b starts with: its tag, its
// contents, the whole element and what follows it.
func derElement(b []byte) (tag byte, contents, whole, rest []byte, ok bool) {
	if len(b) < 2 {
		return 0, nil, nil, nil, false
	}
	n, header := int(b[1]), 2
	if n >= 0x80 { // the long form: the length in the next n&0x7f bytes
		k := n & 0x7f
		if k == 0 || k > 3 || len(b) < 2+k {
			return 0, nil, nil, nil, false
		}
		n = 0
		for _, c := range b[2 : 2+k] {
			n = n<<8 | int(c)
		}
		header += k
	}
	if len(b)-header < n {
		return 0, nil, nil, nil, false
	}
	return b[0], b[header : header+n], b[:header+n], b[header+n:], true
}

// isSameDirSymlink reports whether e, in dir, is a link to a file of the
// same folder (such as OpenSSL's hash links): crypto/x509 skips those.
func isSameDirSymlink(dir string, e fs.DirEntry) bool {
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	target, err := os.Readlink(filepath.Join(dir, e.Name()))
	return err == nil && !strings.Contains(target, "/")
}

// roots returns a pool of the trusted certificates that issued any of
// certs, parsed now if they were not before.
func (t *trustStore) roots(certs []*x509.Certificate) *x509.CertPool {
	pool := x509.NewCertPool()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range certs {
		for _, der := range t.bySubject[string(c.RawIssuer)] {
			root, seen := t.parsed[string(der)]
			if !seen {
				root, _ = x509.ParseCertificate(der) // as AppendCertsFromPEM, one that does not parse is left out
				t.parsed[string(der)] = root
			}
			if root != nil {
				pool.AddCert(root)
			}
		}
	}
	return pool
}

// verify checks the chain a server at host sent as crypto/tls does with
// RootCAs unset: the leaf is valid now for host and for server
// authentication, through the intermediates the server sent, up to a
// trusted root.
func (t *trustStore) verify(host string, certs []*x509.Certificate) error {
	if len(certs) == 0 {
		return errors.New("tls: the server sent no certificate")
	}
	opts := x509.VerifyOptions{DNSName: host, Roots: t.roots(certs), Intermediates: x509.NewCertPool()}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := certs[0].Verify(opts); err != nil {
		return &tls.CertificateVerificationError{UnverifiedCertificates: certs, Err: err}
	}
	return nil
}

// dialTLS returns the transport's DialTLSContext: dial connects (and checks
// the address), then the handshake verifies the server's chain for the
// host dialed against the system's roots ([trustStore]), on new and resumed
// sessions alike. base is the configuration every connection starts from.
func dialTLS(dial func(ctx context.Context, network, addr string) (net.Conn, error), base *tls.Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("netguard: dial %s: %w", addr, err)
		}
		raw, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cfg := base.Clone()
		cfg.ServerName = host
		// crypto/tls still checks that the server holds the leaf's key;
		// VerifyConnection checks the chain, also when a session resumes.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			trust, err := systemTrust()
			if err != nil {
				return err
			}
			return trust.verify(host, cs.PeerCertificates)
		}
		hctx, cancel := context.WithTimeout(ctx, tlsHandshakeTimeout)
		defer cancel()
		conn := tls.Client(raw, cfg)
		if err := conn.HandshakeContext(hctx); err != nil {
			raw.Close()
			return nil, err
		}
		return conn, nil
	}
}
