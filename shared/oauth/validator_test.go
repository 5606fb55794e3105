package oauth

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/tenant"
)

const testResource = "https://switchboard.example/mcp"

var epoch = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// claimsAt returns a valid token's claims for iss at now, with changes.
func claimsAt(iss string, now time.Time, changes map[string]any) map[string]any {
	c := map[string]any{
		"iss": iss, "aud": testResource, "sub": "alice@example.com", "tenant": "acme",
		"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "scope": "switchboard:read switchboard:memory",
		"client_id": "sbc_1",
	}
	for k, v := range changes {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func TestValidatorAcceptsAndRefuses(t *testing.T) {
	iss := newTestIssuer(t)
	clock := &fakeClock{t: epoch}
	v, err := NewValidator(ValidatorOptions{Issuer: iss.url, Resource: testResource, Now: clock.Now,
		Scopes: DefaultScopes("memory", "vector")})
	if err != nil {
		t.Fatal(err)
	}
	pubDER, _ := x509.MarshalPKIXPublicKey(&iss.rsa.PublicKey)
	now := epoch
	rs := func(changes map[string]any) string {
		return signToken(t, "RS256", "rsa1", claimsAt(iss.url, now, changes), iss.rsa, nil, nil)
	}
	tests := []struct {
		name  string
		token string
		want  string // "" accepts; otherwise a fragment of the error
	}{
		{"an RS256 token for this resource is accepted", rs(nil), ""},
		{"an ES256 token is accepted", signToken(t, "ES256", "ec1", claimsAt(iss.url, now, nil), nil, iss.ec, nil), ""},
		{"an audience array naming this resource is accepted", rs(map[string]any{"aud": []string{"other", testResource}}), ""},
		{"a token expired within the skew is accepted", rs(map[string]any{"exp": now.Add(-30 * time.Second).Unix()}), ""},
		{"an expired token is refused", rs(map[string]any{"exp": now.Add(-2 * time.Minute).Unix()}), "expired"},
		{"a token without expiry is refused", rs(map[string]any{"exp": nil}), "no expiry"},
		{"a token not yet valid is refused", rs(map[string]any{"nbf": now.Add(5 * time.Minute).Unix()}), "not valid before"},
		{"a token issued in the future is refused", rs(map[string]any{"iat": now.Add(5 * time.Minute).Unix()}), "future"},
		{"a token for another resource is refused", rs(map[string]any{"aud": "https://other.example/mcp"}), "not for"},
		{"a token without audience is refused", rs(map[string]any{"aud": nil}), "not for"},
		{"a token of another issuer is refused", rs(map[string]any{"iss": "https://evil.example"}), "issued by"},
		{"an unsigned token (alg none) is refused", signToken(t, "none", "rsa1", claimsAt(iss.url, now, nil), nil, nil, nil), `"none" is not accepted`},
		{"an HS256 token keyed with the public key is refused", signToken(t, "HS256", "rsa1", claimsAt(iss.url, now, nil), nil, nil, pubDER), `"HS256" is not accepted`},
		{"an algorithm off the allow-list is refused", signToken(t, "RS384", "rsa1", claimsAt(iss.url, now, nil), iss.rsa, nil, nil), `"RS384" is not accepted`},
		{"a tampered payload is refused", tamper(rs(nil)), "signature"},
		{"a token of an unknown key is refused", signToken(t, "RS256", "rsa9", claimsAt(iss.url, now, nil), iss.rsa, nil, nil), "unknown key"},
		{"an EC signature under an RSA key id is refused", signToken(t, "ES256", "rsa1", claimsAt(iss.url, now, nil), nil, iss.ec, nil), "RSA key"},
		{"a token without tenant is refused", rs(map[string]any{"tenant": nil}), "claim tenant"},
		{"a tenant that is not a tenant id is refused", rs(map[string]any{"tenant": "Acme#1"}), "claim tenant"},
		{"a principal with control characters is refused", rs(map[string]any{"sub": "eve\x1b[2J"}), "claim sub"},
		{"a token that is not a JWT is refused", "sb_not-a-jwt", "three"},
		{"a token with critical extensions is refused", critToken(t, iss), "crit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := v.Validate(context.Background(), tc.token)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if g.Caller.Tenant != "acme" || g.Caller.Principal != "alice@example.com" || g.ClientID != "sbc_1" {
					t.Errorf("grant = %+v", g)
				}
				return
			}
			if !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want ErrInvalidToken mentioning %q", err, tc.want)
			}
		})
	}
}

func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	claims, _ := b64(parts[1])
	forged := strings.Replace(string(claims), `"acme"`, `"evil"`, 1)
	return parts[0] + "." + base64url(forged) + "." + parts[2]
}

func critToken(t *testing.T, iss *testIssuer) string {
	tok := signToken(t, "RS256", "rsa1", claimsAt(iss.url, epoch, nil), iss.rsa, nil, nil)
	parts := strings.Split(tok, ".")
	return base64url(`{"alg":"RS256","kid":"rsa1","crit":["exp"]}`) + "." + parts[1] + "." + parts[2]
}

func base64url(s string) string { return strings.TrimRight(b64enc([]byte(s)), "=") }

func TestValidatorGrant(t *testing.T) {
	iss := newTestIssuer(t)
	v, err := NewValidator(ValidatorOptions{Issuer: iss.url, Resource: testResource, Now: func() time.Time { return epoch },
		Scopes: DefaultScopes("memory", "vector"), TenantClaim: "custom:tenant", PrincipalClaim: "email"})
	if err != nil {
		t.Fatal(err)
	}
	tok := signToken(t, "RS256", "rsa1", claimsAt(iss.url, epoch, map[string]any{
		"custom:tenant": "globex", "email": "bob@globex.example", "scope": nil, "scp": []string{"switchboard:read", "switchboard:memory"},
	}), iss.rsa, nil, nil)
	g, err := v.Validate(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	want := tenant.Caller{Tenant: "globex", Principal: "bob@globex.example", Scopes: []string{"switchboard:read", "switchboard:memory"}}
	if diff := cmp.Diff(want, g.Caller); diff != "" {
		t.Errorf("caller mismatch (-want +got):\n%s", diff)
	}
	if !g.Access.Allows("vector", false) || g.Access.Allows("vector", true) || !g.Access.Allows("memory", true) {
		t.Errorf("access = %s, want read of everything and changes to memory", g.Access)
	}
	if !g.Expires.Equal(epoch.Add(time.Hour)) {
		t.Errorf("expires = %v", g.Expires)
	}
}

func TestValidatorDefaultTenant(t *testing.T) {
	iss := newTestIssuer(t)
	v, _ := NewValidator(ValidatorOptions{Issuer: iss.url, Resource: testResource, Now: func() time.Time { return epoch }, DefaultTenant: "solo"})
	g, err := v.Validate(context.Background(), signToken(t, "RS256", "rsa1", claimsAt(iss.url, epoch, map[string]any{"tenant": nil}), iss.rsa, nil, nil))
	if err != nil || g.Caller.Tenant != "solo" {
		t.Fatalf("grant %+v, err %v; want tenant solo", g, err)
	}
}

// TestValidatorKeyRotation checks that a key the issuer adds is picked up,
// that a flood of tokens naming unknown keys fetches the key set at most
// once per interval, and that a withdrawn key stops working once the set is
// old.
func TestValidatorKeyRotation(t *testing.T) {
	iss := newTestIssuer(t)
	_, _, newKey := testKeys()
	clock := &fakeClock{t: epoch}
	v, _ := NewValidator(ValidatorOptions{Issuer: iss.url, Resource: testResource, Now: clock.Now})
	ctx := context.Background()
	valid := func(kid string) error {
		key := iss.ec
		if kid == "ec2" {
			key = newKey
		}
		_, err := v.Validate(ctx, signToken(t, "ES256", kid, claimsAt(iss.url, clock.Now(), nil), nil, key, nil))
		return err
	}
	if err := valid("ec1"); err != nil {
		t.Fatal(err)
	}
	if n := iss.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for the first token, want 1", n)
	}

	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := valid(fmt.Sprintf("bogus%d", i)); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("unknown kid: %v", err)
			}
		}()
	}
	wg.Wait()
	if n := iss.fetches.Load(); n != 1 {
		t.Errorf("%d fetches after a flood of unknown kids within the interval, want still 1", n)
	}

	ecOld, _ := ecJWK("ec1", &iss.ec.PublicKey)
	ecNew, _ := ecJWK("ec2", &newKey.PublicKey)
	iss.setKeys(ecOld, ecNew)
	if err := valid("ec2"); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("a new key within the interval of the last fetch: %v, want refused", err)
	}
	clock.Add(DefaultRefetchInterval)
	if err := valid("ec2"); err != nil {
		t.Errorf("a rotated-in key after the interval: %v", err)
	}
	if n := iss.fetches.Load(); n != 2 {
		t.Errorf("%d fetches, want 2", n)
	}

	iss.setKeys(ecNew)
	clock.Add(DefaultKeysMaxAge)
	if err := valid("ec1"); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("a withdrawn key after the set aged: %v, want refused", err)
	}
	if err := valid("ec2"); err != nil {
		t.Errorf("the remaining key: %v", err)
	}
}

func TestValidatorIssuerUnreachable(t *testing.T) {
	v, _ := NewValidator(ValidatorOptions{Issuer: "http://127.0.0.1:1", Resource: testResource, Now: func() time.Time { return epoch }})
	iss := newTestIssuer(t)
	_, err := v.Validate(context.Background(), signToken(t, "RS256", "rsa1", claimsAt("http://127.0.0.1:1", epoch, nil), iss.rsa, nil, nil))
	if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrInvalidToken) {
		t.Fatalf("err = %v, want ErrUnavailable only", err)
	}
	if _, status := ChallengeFor(testResource, err); status != 503 {
		t.Errorf("status %d, want 503", status)
	}
}

func TestNewValidatorRefuses(t *testing.T) {
	tests := []struct {
		name string
		opts ValidatorOptions
	}{
		{"no issuer", ValidatorOptions{Resource: testResource}},
		{"a resource over plain http", ValidatorOptions{Issuer: "https://i.example", Resource: "http://switchboard.example/mcp"}},
		{"an HMAC algorithm", ValidatorOptions{Issuer: "https://i.example", Resource: testResource, Algorithms: []string{"HS256"}}},
		{"alg none", ValidatorOptions{Issuer: "https://i.example", Resource: testResource, Algorithms: []string{"none"}}},
		{"an issuer over plain http", ValidatorOptions{Issuer: "http://i.example", Resource: testResource}},
		{"a default tenant that is not a tenant id", ValidatorOptions{Issuer: "https://i.example", Resource: testResource, DefaultTenant: "A B"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewValidator(tc.opts); err == nil {
				t.Error("accepted")
			}
		})
	}
}

func TestChallenge(t *testing.T) {
	ch, status := ChallengeFor(testResource, fmt.Errorf("%w: token expired at x", ErrInvalidToken))
	want := `Bearer resource_metadata="https://switchboard.example/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="invalid access token: token expired at x"`
	if status != 401 || ch.String() != want {
		t.Errorf("got %d %s\nwant 401 %s", status, ch, want)
	}
	got := InsufficientScope(testResource, `switchboard:"x"`).String()
	if !strings.Contains(got, `error="insufficient_scope"`) || !strings.Contains(got, `scope="switchboard:\"x\""`) {
		t.Errorf("insufficient scope challenge %s", got)
	}
}
