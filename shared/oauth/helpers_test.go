package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testIssuer is an issuer's metadata and key set on an HTTP server, with
// keys the test signs tokens with.
type testIssuer struct {
	url     string
	rsa     *rsa.PrivateKey
	ec      *ecdsa.PrivateKey
	fetches atomic.Int64

	mu   sync.Mutex
	jwks JWKS
}

// Keys are generated once: RSA generation is slow under -race.
var (
	keysOnce sync.Once
	rsaKey   *rsa.PrivateKey
	ecKey    *ecdsa.PrivateKey
	ecKey2   *ecdsa.PrivateKey
)

func testKeys() (*rsa.PrivateKey, *ecdsa.PrivateKey, *ecdsa.PrivateKey) {
	keysOnce.Do(func() {
		rsaKey, _ = rsa.GenerateKey(rand.Reader, 2048)
		ecKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		ecKey2, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	})
	return rsaKey, ecKey, ecKey2
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	r, e, _ := testKeys()
	iss := &testIssuer{rsa: r, ec: e}
	ecPub, _ := ecJWK("ec1", &e.PublicKey)
	iss.jwks = JWKS{Keys: []JWK{rsaJWK("rsa1", &r.PublicKey), ecPub}}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss.url = srv.URL
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": iss.url, "jwks_uri": iss.url + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		iss.fetches.Add(1)
		iss.mu.Lock()
		defer iss.mu.Unlock()
		json.NewEncoder(w).Encode(iss.jwks)
	})
	return iss
}

// setKeys replaces the issuer's published keys.
func (i *testIssuer) setKeys(keys ...JWK) {
	i.mu.Lock()
	i.jwks = JWKS{Keys: keys}
	i.mu.Unlock()
}

func rsaJWK(kid string, pub *rsa.PublicKey) JWK {
	enc := base64.RawURLEncoding.EncodeToString
	return JWK{Kty: "RSA", Kid: kid, Use: "sig", N: enc(pub.N.Bytes()), E: enc(big.NewInt(int64(pub.E)).Bytes())}
}

// signToken signs claims under alg with kid: RS256/RS384 with the RSA key,
// ES256 with key (the issuer's EC key if nil), HS256 with secret, "none"
// with nothing.
func signToken(t *testing.T, alg, kid string, claims any, rsaKey *rsa.PrivateKey, key *ecdsa.PrivateKey, secret []byte) string {
	t.Helper()
	if alg == "ES256" {
		tok, err := signES256(key, kid, "at+jwt", claims)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	hb, _ := json.Marshal(map[string]string{"alg": alg, "kid": kid, "typ": "at+jwt"})
	pb, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding.EncodeToString
	signed := enc(hb) + "." + enc(pb)
	var sig []byte
	switch alg {
	case "RS256", "RS384":
		h := crypto.SHA256
		if alg == "RS384" {
			h = crypto.SHA384
		}
		d := h.New()
		d.Write([]byte(signed))
		var err error
		if sig, err = rsa.SignPKCS1v15(rand.Reader, rsaKey, h, d.Sum(nil)); err != nil {
			t.Fatal(err)
		}
	case "HS256":
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(signed))
		sig = m.Sum(nil)
	case "none":
	}
	return signed + "." + enc(sig)
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func b64enc(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
