package oauth

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	_ "crypto/sha256" // the hashes of RS256, PS256, ES256
	_ "crypto/sha512" // the hashes of RS384, RS512, PS384, PS512, ES384, ES512
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// The JSON Web Signature algorithms a [Validator] can verify. Symmetric
// algorithms (HS256, ...) and "none" are not among them: a resource server
// holds only public keys, and a token naming HS256 with a public key as its
// secret, or no signature at all, must never pass.
var SupportedAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"}

// DefaultAlgorithms is the allow-list when [ValidatorOptions.Algorithms] is
// empty: what Cognito, Entra ID, Auth0, Okta, Keycloak and this package's
// facade sign with.
var DefaultAlgorithms = []string{"RS256", "ES256"}

// MaxTokenBytes bounds a JWT this package reads.
const MaxTokenBytes = 16 << 10

// maxKeys bounds the keys of one JWK set.
const maxKeys = 64

// JWK is a public JSON Web Key (RFC 7517) as JWK sets publish them: RSA (n,
// e) or EC (crv, x, y).
type JWK struct {
	Kty string `json:"kty"`
	Kid string `json:"kid,omitempty"`
	Use string `json:"use,omitempty"`
	Alg string `json:"alg,omitempty"`
	N   string `json:"n,omitempty"`
	E   string `json:"e,omitempty"`
	Crv string `json:"crv,omitempty"`
	X   string `json:"x,omitempty"`
	Y   string `json:"y,omitempty"`
}

// JWKS is a JSON Web Key Set, the document at an issuer's jwks_uri.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// publicKey is a parsed verification key.
type publicKey struct {
	alg string // the JWK's alg, if it named one
	key crypto.PublicKey
}

// parseJWKS returns the signing keys of set by kid. Keys meant for
// encryption, of unknown types, without a kid or that do not parse are left
// out: a provider may publish keys this package does not use.
func parseJWKS(set JWKS) map[string]publicKey {
	keys := map[string]publicKey{}
	for i, k := range set.Keys {
		if i == maxKeys {
			break
		}
		if k.Kid == "" || (k.Use != "" && k.Use != "sig") {
			continue
		}
		pub, err := k.publicKey()
		if err != nil {
			continue
		}
		keys[k.Kid] = publicKey{alg: k.Alg, key: pub}
	}
	return keys
}

// publicKey returns the key k describes.
func (k JWK) publicKey() (crypto.PublicKey, error) {
	switch k.Kty {
	case "RSA":
		n, err1 := b64(k.N)
		e, err2 := b64(k.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return nil, errors.New("oauth: RSA key with a malformed n or e")
		}
		exp := int(new(big.Int).SetBytes(e).Int64())
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: exp}
		if pub.N.BitLen() < 2048 || exp < 3 || exp%2 == 0 {
			return nil, errors.New("oauth: RSA key shorter than 2048 bits or with an unusable exponent")
		}
		return pub, nil
	case "EC":
		curve := curves[k.Crv]
		x, err1 := b64(k.X)
		y, err2 := b64(k.Y)
		size := 0
		if curve != nil {
			size = (curve.Params().BitSize + 7) / 8
		}
		if curve == nil || err1 != nil || err2 != nil || len(x) != size || len(y) != size {
			return nil, errors.New("oauth: EC key with an unsupported curve or malformed coordinates")
		}
		return ecdsa.ParseUncompressedPublicKey(curve, slices.Concat([]byte{4}, x, y))
	}
	return nil, fmt.Errorf("oauth: key type %q is not supported", k.Kty)
}

var curves = map[string]elliptic.Curve{"P-256": elliptic.P256(), "P-384": elliptic.P384(), "P-521": elliptic.P521()}

// ecJWK returns the public JWK of key, for signing with ES256.
func ecJWK(kid string, key *ecdsa.PublicKey) (JWK, error) {
	raw, err := key.Bytes()
	if err != nil || key.Curve != elliptic.P256() {
		return JWK{}, errors.New("oauth: a signing key must be an ECDSA P-256 key")
	}
	enc := base64.RawURLEncoding.EncodeToString
	return JWK{Kty: "EC", Kid: kid, Use: "sig", Alg: "ES256", Crv: "P-256", X: enc(raw[1:33]), Y: enc(raw[33:])}, nil
}

// algorithm is how one JWS alg verifies.
type algorithm struct {
	hash crypto.Hash
	kind string // "RS", "PS" or "ES"
	crv  elliptic.Curve
}

var algorithms = map[string]algorithm{
	"RS256": {crypto.SHA256, "RS", nil}, "RS384": {crypto.SHA384, "RS", nil}, "RS512": {crypto.SHA512, "RS", nil},
	"PS256": {crypto.SHA256, "PS", nil}, "PS384": {crypto.SHA384, "PS", nil}, "PS512": {crypto.SHA512, "PS", nil},
	"ES256": {crypto.SHA256, "ES", elliptic.P256()}, "ES384": {crypto.SHA384, "ES", elliptic.P384()},
	"ES512": {crypto.SHA512, "ES", elliptic.P521()},
}

// header is the protected header of a JWS.
type header struct {
	Alg  string          `json:"alg"`
	Kid  string          `json:"kid,omitempty"`
	Typ  string          `json:"typ,omitempty"`
	Crit json.RawMessage `json:"crit,omitempty"`
}

// jws is a compact JWS split into its parts, nothing verified yet.
type jws struct {
	header    header
	payload   []byte
	signed    string // header.payload, what the signature covers
	signature []byte
}

// parseJWS splits token, a compact JWS, and decodes its header and payload.
func parseJWS(token string) (jws, error) {
	if len(token) > MaxTokenBytes {
		return jws{}, fmt.Errorf("token is longer than %d bytes", MaxTokenBytes)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return jws{}, errors.New("token is not a signed JWT (three dot-separated parts)")
	}
	hb, err1 := b64(parts[0])
	payload, err2 := b64(parts[1])
	sig, err3 := b64(parts[2])
	if err := errors.Join(err1, err2, err3); err != nil {
		return jws{}, errors.New("token has a part that is not base64url")
	}
	var h header
	if err := json.Unmarshal(hb, &h); err != nil {
		return jws{}, errors.New("token header is not a JSON object")
	}
	if h.Crit != nil {
		return jws{}, errors.New("token header has critical extensions (crit), which this server does not understand")
	}
	return jws{header: h, payload: payload, signed: parts[0] + "." + parts[1], signature: sig}, nil
}

// verify checks t's signature with key under alg, which the caller has
// checked against its allow-list; the key must be of the type alg needs.
func (t jws) verify(key publicKey) error {
	alg, ok := algorithms[t.header.Alg]
	if !ok {
		return fmt.Errorf("algorithm %q is not supported", t.header.Alg)
	}
	if key.alg != "" && key.alg != t.header.Alg {
		return fmt.Errorf("key %q is for %s, not %s", t.header.Kid, key.alg, t.header.Alg)
	}
	h := alg.hash.New()
	h.Write([]byte(t.signed))
	digest := h.Sum(nil)
	switch pub := key.key.(type) {
	case *rsa.PublicKey:
		switch alg.kind {
		case "RS":
			if rsa.VerifyPKCS1v15(pub, alg.hash, digest, t.signature) == nil {
				return nil
			}
		case "PS":
			if rsa.VerifyPSS(pub, alg.hash, digest, t.signature, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash}) == nil {
				return nil
			}
		default:
			return fmt.Errorf("key %q is an RSA key, not one for %s", t.header.Kid, t.header.Alg)
		}
	case *ecdsa.PublicKey:
		if alg.kind != "ES" || pub.Curve != alg.crv {
			return fmt.Errorf("key %q is an EC key, not one for %s", t.header.Kid, t.header.Alg)
		}
		size := (pub.Curve.Params().BitSize + 7) / 8
		if len(t.signature) == 2*size {
			r := new(big.Int).SetBytes(t.signature[:size])
			s := new(big.Int).SetBytes(t.signature[size:])
			if ecdsa.Verify(pub, digest, r, s) {
				return nil
			}
		}
	default:
		return errors.New("key of an unsupported type")
	}
	return errors.New("token signature does not verify")
}

// signES256 returns the compact JWS of claims signed with key under kid,
// with typ typ.
func signES256(key *ecdsa.PrivateKey, kid, typ string, claims any) (string, error) {
	hb, err := json.Marshal(header{Alg: "ES256", Kid: kid, Typ: typ})
	if err != nil {
		return "", err
	}
	pb, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("oauth: encoding claims: %w", err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	signed := enc(hb) + "." + enc(pb)
	digest := crypto.SHA256.New()
	digest.Write([]byte(signed))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest.Sum(nil))
	if err != nil {
		return "", fmt.Errorf("oauth: signing token: %w", err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signed + "." + enc(sig), nil
}

// b64 decodes unpadded base64url, refusing padding and other alphabets.
func b64(s string) ([]byte, error) {
	return base64.RawURLEncoding.Strict().DecodeString(s)
}

// decodeClaims decodes a JWT payload into a map, keeping numbers exact.
func decodeClaims(payload []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var claims map[string]any
	if err := dec.Decode(&claims); err != nil || claims == nil {
		return nil, errors.New("token payload is not a JSON object")
	}
	if dec.More() {
		return nil, errors.New("token payload has data after its JSON object")
	}
	return claims, nil
}
