// Package kms is the [seal.Sealer] of AWS: each secret's data key comes from
// AWS KMS GenerateDataKey (AES_256) under one symmetric KMS key, is stored
// only as the ciphertext blob KMS returns, and is recovered with Decrypt; the
// encryption context goes to both calls, so KMS refuses a data key asked for
// under another context, and a key policy can condition on it
// (kms:EncryptionContext:tenant). The sealed format is shared/seal's.
//
// Nothing is cached: every Seal is one GenerateDataKey call and every Open
// one Decrypt call, and the plaintext data key is cleared when the call
// returns. Callers that open the same secret often (a connector's warm
// session) keep what they opened for as long as they need it.
package kms

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	awskms "github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/switchboard-dev/switchboard/shared/seal"
)

// API is the part of the AWS KMS client this package calls; *kms.Client of
// aws-sdk-go-v2 satisfies it.
type API interface {
	GenerateDataKey(ctx context.Context, in *awskms.GenerateDataKeyInput, optFns ...func(*awskms.Options)) (*awskms.GenerateDataKeyOutput, error)
	Decrypt(ctx context.Context, in *awskms.DecryptInput, optFns ...func(*awskms.Options)) (*awskms.DecryptOutput, error)
}

// New returns the sealer whose data keys the symmetric KMS key keyARN wraps.
// It takes the key's ARN (arn:aws:kms:<region>:<account>:key/<id>), not an
// alias: the sealed format records the key, and Open refuses a secret another
// key sealed before it calls KMS. It does no I/O.
func New(client API, keyARN string) (*seal.Envelope, error) {
	a, err := arn.Parse(keyARN)
	if err != nil || a.Service != "kms" || !strings.HasPrefix(a.Resource, "key/") || len(keyARN) > seal.MaxKeyIDBytes {
		return nil, fmt.Errorf("kms: the key %q is not a KMS key ARN, such as arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab", keyARN)
	}
	return seal.New(&wrapper{client: client, keyARN: keyARN}), nil
}

// wrapper is the [seal.KeyWrapper] of one KMS key.
type wrapper struct {
	client API
	keyARN string
}

// Backend implements the [seal.KeyWrapper] interface.
func (w *wrapper) Backend() seal.Backend { return seal.BackendKMS }

// NewDataKey implements the [seal.KeyWrapper] interface.
func (w *wrapper) NewDataKey(ctx context.Context, ec map[string]string) (key, wrapped []byte, keyID string, err error) {
	out, err := w.client.GenerateDataKey(ctx, &awskms.GenerateDataKeyInput{
		KeyId:             aws.String(w.keyARN),
		KeySpec:           types.DataKeySpecAes256,
		EncryptionContext: ec,
	})
	if err != nil {
		return nil, nil, "", fmt.Errorf("generate data key with %s: %w", w.keyARN, err)
	}
	if aws.ToString(out.KeyId) != w.keyARN {
		clear(out.Plaintext)
		return nil, nil, "", fmt.Errorf("generate data key with %s: KMS answered for key %s", w.keyARN, aws.ToString(out.KeyId))
	}
	return out.Plaintext, out.CiphertextBlob, w.keyARN, nil
}

// UnwrapDataKey implements the [seal.KeyWrapper] interface.
func (w *wrapper) UnwrapDataKey(ctx context.Context, keyID string, wrapped []byte, ec map[string]string) ([]byte, error) {
	if keyID != w.keyARN {
		return nil, fmt.Errorf("%w: it names another KMS key, %s; this sealer uses %s", seal.ErrForeignKey, printable(keyID), w.keyARN)
	}
	out, err := w.client.Decrypt(ctx, &awskms.DecryptInput{
		CiphertextBlob:      wrapped,
		KeyId:               aws.String(w.keyARN),
		EncryptionAlgorithm: types.EncryptionAlgorithmSpecSymmetricDefault,
		EncryptionContext:   ec,
	})
	var invalid *types.InvalidCiphertextException
	var incorrect *types.IncorrectKeyException
	switch {
	case errors.As(err, &invalid):
		return nil, fmt.Errorf("%w (KMS: the data key does not decrypt under this context)", seal.ErrAltered)
	case errors.As(err, &incorrect):
		return nil, fmt.Errorf("%w (KMS: another key encrypted the data key)", seal.ErrForeignKey)
	case err != nil:
		return nil, fmt.Errorf("decrypt with %s: %w", w.keyARN, err)
	}
	if aws.ToString(out.KeyId) != w.keyARN {
		clear(out.Plaintext)
		return nil, fmt.Errorf("%w: KMS decrypted it with key %s", seal.ErrForeignKey, aws.ToString(out.KeyId))
	}
	return out.Plaintext, nil
}

// printable returns a key id read from a sealed secret as an error may show
// it: quoted, and cut short if long.
func printable(keyID string) string {
	if len(keyID) > 100 {
		keyID = keyID[:100] + "..."
	}
	return fmt.Sprintf("%q", keyID)
}
