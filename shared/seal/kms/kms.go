// Package kms is the [seal.Sealer] of AWS: each secret's data key comes from
// AWS KMS GenerateDataKey (AES_256) under one symmetric KMS key, is stored
// only as the ciphertext blob KMS returns, and is recovered with Decrypt; the
// encryption context goes to both calls, so KMS refuses a data key asked for
// under another context, and a key policy can condition on it
// (kms:EncryptionContext:tenant). The sealed format is shared/seal's.
//
// The two calls are made through shared/awsjson, KMS's JSON protocol signed
// with the SDK's signer: the SDK's KMS client would add its package
// initialisers (0.9 ms) to the cold start of every function that opens
// connectors' credentials.
//
// Nothing is cached: every Seal is one GenerateDataKey call and every Open
// one Decrypt call, and the plaintext data key is cleared when the call
// returns. Callers that open the same secret often (a connector's warm
// session) keep what they opened for as long as they need it.
package kms

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"

	"github.com/switchboard-dev/switchboard/shared/awsjson"
	"github.com/switchboard-dev/switchboard/shared/seal"
)

// New returns the sealer whose data keys the symmetric KMS key keyARN wraps,
// calling KMS as cfg configures it (region, credentials, endpoint). It takes
// the key's ARN (arn:aws:kms:<region>:<account>:key/<id>), not an alias: the
// sealed format records the key, and Open refuses a secret another key
// sealed before it calls KMS. It does no I/O.
func New(cfg aws.Config, keyARN string) (*seal.Envelope, error) {
	a, err := arn.Parse(keyARN)
	if err != nil || a.Service != "kms" || !strings.HasPrefix(a.Resource, "key/") || len(keyARN) > seal.MaxKeyIDBytes {
		return nil, fmt.Errorf("kms: the key %q is not a KMS key ARN, such as arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab", keyARN)
	}
	return seal.New(&wrapper{cfg: cfg, keyARN: keyARN}), nil
}

// wrapper is the [seal.KeyWrapper] of one KMS key.
type wrapper struct {
	cfg    aws.Config
	keyARN string
}

// maxAnswer bounds a KMS answer: a key id, a data key and its ciphertext
// blob, in base64.
const maxAnswer = 64 << 10

// Backend implements the [seal.KeyWrapper] interface.
func (w *wrapper) Backend() seal.Backend { return seal.BackendKMS }

// NewDataKey implements the [seal.KeyWrapper] interface.
func (w *wrapper) NewDataKey(ctx context.Context, ec map[string]string) (key, wrapped []byte, keyID string, err error) {
	in := map[string]any{"KeyId": w.keyARN, "KeySpec": "AES_256", "EncryptionContext": ec}
	var out struct {
		KeyId          string
		Plaintext      []byte
		CiphertextBlob []byte
	}
	err = awsjson.Retry(ctx, func() (bool, error) {
		return awsjson.Call(ctx, &w.cfg, awsjson.KMS, "GenerateDataKey", in, &out, maxAnswer)
	})
	if err != nil {
		clear(out.Plaintext)
		return nil, nil, "", fmt.Errorf("generate data key with %s: %w", w.keyARN, err)
	}
	if out.KeyId != w.keyARN || len(out.Plaintext) != 32 || len(out.CiphertextBlob) == 0 {
		clear(out.Plaintext)
		return nil, nil, "", fmt.Errorf("generate data key with %s: KMS answered for key %s with a %d-byte key", w.keyARN, printable(out.KeyId), len(out.Plaintext))
	}
	return out.Plaintext, out.CiphertextBlob, w.keyARN, nil
}

// UnwrapDataKey implements the [seal.KeyWrapper] interface.
func (w *wrapper) UnwrapDataKey(ctx context.Context, keyID string, wrapped []byte, ec map[string]string) ([]byte, error) {
	if keyID != w.keyARN {
		return nil, fmt.Errorf("%w: it names another KMS key, %s; this sealer uses %s", seal.ErrForeignKey, printable(keyID), w.keyARN)
	}
	in := map[string]any{"CiphertextBlob": wrapped, "KeyId": w.keyARN, "EncryptionAlgorithm": "SYMMETRIC_DEFAULT", "EncryptionContext": ec}
	var out struct {
		KeyId     string
		Plaintext []byte
	}
	err := awsjson.Retry(ctx, func() (bool, error) {
		return awsjson.Call(ctx, &w.cfg, awsjson.KMS, "Decrypt", in, &out, maxAnswer)
	})
	switch {
	case awsjson.IsCode(err, "InvalidCiphertextException"):
		return nil, fmt.Errorf("%w (KMS: the data key does not decrypt under this context)", seal.ErrAltered)
	case awsjson.IsCode(err, "IncorrectKeyException"):
		return nil, fmt.Errorf("%w (KMS: another key encrypted the data key)", seal.ErrForeignKey)
	case err != nil:
		clear(out.Plaintext)
		return nil, fmt.Errorf("decrypt with %s: %w", w.keyARN, err)
	}
	if out.KeyId != w.keyARN {
		clear(out.Plaintext)
		return nil, fmt.Errorf("%w: KMS decrypted it with key %s", seal.ErrForeignKey, printable(out.KeyId))
	}
	return out.Plaintext, nil
}

// printable returns a key id read from a sealed secret or an answer as an
// error may show it: quoted, and cut short if long.
func printable(keyID string) string {
	if len(keyID) > 100 {
		keyID = keyID[:100] + "..."
	}
	return fmt.Sprintf("%q", keyID)
}
