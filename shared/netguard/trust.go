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
	bySubject map[string][]*root // by raw subject

	mu sync.Mutex // guards each root's parsing
}

// root is a trusted certificate as a bundle holds it, parsed (and, if it
// came as base64, decoded) when a chain first names its subject.
type root struct {
	pem    pemCertificate
	parsed bool
	cert   *x509.Certificate // nil if it did not parse
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
// certificate found twice in the same layout once (one laid out otherwise,
// with CRLF line ends say, is indexed again; the pool built from the index
// holds it once). It fails, as loadSystemRoots does, only if it found no
// certificate and a file or folder could not be read.
func loadTrust(files, dirs []string) (*trustStore, error) {
	t := &trustStore{bySubject: map[string][]*root{}}
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
	data, err := readAll(f, fi)
	if err != nil {
		return err
	}
	l.files = append(l.files, fi)
	l.add(data)
	return nil
}

// readAll reads f, whose information is fi, in one allocation when fi
// gives its size: a bundle is some 200 KB, which io.ReadAll would copy
// through a series of growing buffers.
func readAll(f *os.File, fi os.FileInfo) ([]byte, error) {
	var buf bytes.Buffer
	if fi.Mode().IsRegular() && fi.Size() <= maxTrustFile {
		buf.Grow(int(fi.Size()) + bytes.MinRead) // ReadFrom reads into the room left, MinRead at least
	}
	_, err := buf.ReadFrom(f)
	return buf.Bytes(), err
}

// maxTrustFile is the largest file [readAll] sizes its buffer for from
// Stat: larger ones, which no system bundle is, grow as they are read.
const maxTrustFile = 16 << 20

// add indexes the certificates of PEM data whose subject reads.
func (l *trustLoader) add(data []byte) {
	for c := range pemCertificates(data) {
		subject, c, ok := c.subject()
		if !ok {
			continue
		}
		// A certificate found twice shares its subject, whose few
		// certificates are compared.
		same := l.t.bySubject[subject]
		if slices.ContainsFunc(same, func(r *root) bool { return r.pem.equal(c) }) {
			continue
		}
		l.count++
		l.t.bySubject[subject] = append(same, &root{pem: c})
	}
}

// pemCertificate is a CERTIFICATE block of a PEM file: its DER, or, for a
// block laid out as bundles lay them out, its base64, decoded only when the
// certificate is needed (most of a bundle's never are).
type pemCertificate struct {
	der    []byte
	base64 []byte // with its line ends; set if der is not decoded yet
}

// bytes returns the certificate's DER, or nil if its base64 does not
// decode (pem.Decode skips such a block).
func (c pemCertificate) bytes() []byte {
	if c.base64 == nil {
		return c.der
	}
	der := make([]byte, base64.StdEncoding.DecodedLen(len(c.base64)))
	n, err := base64.StdEncoding.Decode(der, c.base64) // it skips line ends, as pem.Decode's does
	if err != nil {
		return nil
	}
	return der[:n]
}

func (c pemCertificate) equal(o pemCertificate) bool {
	return bytes.Equal(c.der, o.der) && bytes.Equal(c.base64, o.base64)
}

// subject returns the raw subject of c, decoding as little of its base64
// as it takes: the subject ends within the first few hundred bytes of a
// certificate. It returns c decoded if the start did not hold the subject.
func (c pemCertificate) subject() (string, pemCertificate, bool) {
	if c.base64 != nil {
		text := c.base64[:min(len(c.base64), headText)]
		n := len(text) - bytes.Count(text, []byte("\n")) - bytes.Count(text, []byte("\r"))
		if len(text) == len(c.base64) && n%4 != 0 {
			return "", c, false // the whole is not base64
		}
		for ; n%4 != 0; text = text[:len(text)-1] { // whole quanta of the start
			if last := text[len(text)-1]; last != '\n' && last != '\r' {
				n--
			}
		}
		var head [headText / 4 * 3]byte
		m, err := base64.StdEncoding.Decode(head[:], text)
		if err != nil {
			return "", c, false // the whole fails to decode too
		}
		if subject, ok := rawSubject(head[:m]); ok {
			return string(subject), c, true
		}
		if c = (pemCertificate{der: c.bytes()}); c.der == nil {
			return "", c, false
		}
	}
	subject, ok := rawSubject(c.der)
	return string(subject), c, ok
}

// headText is how many base64 characters [pemCertificate.subject] decodes
// first: 384 bytes, which hold the subject of every root of Debian's bundle
// (whose subjects end at byte 83 to 244); a longer one is decoded whole.
const headText = 512

// pemCertificates yields each block of data that
// x509.CertPool.AppendCertsFromPEM considers: those pem.Decode returns with
// type CERTIFICATE and no headers, and, undecoded, blocks that pem.Decode
// would skip because their base64 does not decode. A block laid out as
// bundles lay them out (the BEGIN line, lines of base64, the END line) is
// read here and yielded as base64, in one pass; pem.Decode, which scans
// each block three times, reads any other.
func pemCertificates(data []byte) iter.Seq[pemCertificate] {
	return func(yield func(pemCertificate) bool) {
		for len(data) > 0 {
			i := bytes.Index(data, pemBegin)
			if i < 0 {
				return
			}
			if text, next, ok := plainBlock(data, i); ok {
				data = data[next:]
				if !yield(pemCertificate{base64: text}) {
					return
				}
				continue
			}
			var block *pem.Block
			if block, data = pem.Decode(data); block == nil {
				return
			}
			if block.Type == "CERTIFICATE" && len(block.Headers) == 0 && !yield(pemCertificate{der: block.Bytes}) {
				return
			}
		}
	}
}

var (
	pemBegin = []byte("-----BEGIN CERTIFICATE-----")
	pemEnd   = []byte("\n-----END CERTIFICATE-----")
)

// plainBlock reads the block whose BEGIN line starts at data[i], if it is
// one that pem.Decode reads as base64 decoding would: the BEGIN line starts
// a line and ends there, the END line is the first after it and ends a
// line, and between them are no dashes (another BEGIN or END line), spaces
// or tabs (which pem.Decode removes). It returns the block's base64 and
// where the rest of data starts. Anything else that is not base64 (a
// header, say) makes both fail: pem.Decode skips the block, and
// [pemCertificate.bytes] returns nil.
func plainBlock(data []byte, i int) (text []byte, next int, ok bool) {
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
	for _, c := range []byte("- \t") {
		if bytes.IndexByte(body, c) >= 0 {
			return nil, 0, false
		}
	}
	return body, len(data) - len(after), true
}

// rawSubject returns the DER of a certificate's subject (what
// x509.Certificate.RawSubject holds, and what chain building matches an
// issuer against) without parsing the rest of it: Certificate ::=
// SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL, serialNumber
// INTEGER, signature, issuer, validity, subject (SEQUENCEs) ... } ... }.
// der may be the certificate's start only, as long as it holds the subject.
func rawSubject(der []byte) ([]byte, bool) {
	tag, cert, ok := derOpen(der)
	if !ok || tag != 0x30 {
		return nil, false
	}
	tag, tbs, ok := derOpen(cert)
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
	header, n, ok := derHeader(b)
	if !ok || len(b)-header < n {
		return 0, nil, nil, nil, false
	}
	return b[0], b[header : header+n], b[:header+n], b[header+n:], true
}

// derOpen returns the tag and the contents of the DER element b starts
// with, as much of them as b holds.
func derOpen(b []byte) (tag byte, contents []byte, ok bool) {
	header, n, ok := derHeader(b)
	if !ok {
		return 0, nil, false
	}
	return b[0], b[header:min(header+n, len(b))], true
}

// derHeader reads the tag and length that start b: the header's length
// and the contents'.
func derHeader(b []byte) (header, n int, ok bool) {
	if len(b) < 2 {
		return 0, 0, false
	}
	n, header = int(b[1]), 2
	if n >= 0x80 { // the long form: the length in the next n&0x7f bytes
		k := n & 0x7f
		if k == 0 || k > 3 || len(b) < 2+k {
			return 0, 0, false
		}
		n = 0
		for _, c := range b[2 : 2+k] {
			n = n<<8 | int(c)
		}
		header += k
	}
	return header, n, true
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
		for _, r := range t.bySubject[string(c.RawIssuer)] {
			if !r.parsed {
				// As AppendCertsFromPEM, one that does not parse is left out.
				if der := r.pem.bytes(); der != nil {
					r.cert, _ = x509.ParseCertificate(der)
				}
				r.parsed, r.pem = true, pemCertificate{}
			}
			if r.cert != nil {
				pool.AddCert(r.cert)
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
