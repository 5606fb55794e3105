package kms_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awskms "github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/switchboard-dev/switchboard/shared/seal"
	"github.com/switchboard-dev/switchboard/shared/seal/kms"
	"github.com/switchboard-dev/switchboard/shared/seal/sealtest"
)

func TestSealer(t *testing.T) {
	client, cfg := sealtest.KMSClient(t), sealtest.KMSConfig(t)
	t.Logf("sealing with the local KMS at %s", *cfg.BaseEndpoint)
	sealtest.Run(t, func(t *testing.T) seal.Sealer {
		s, err := kms.New(cfg, sealtest.NewKMSKey(t, client))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestNewRefusesAKeyThatIsNotAKeyARN(t *testing.T) {
	for _, key := range []string{
		"",
		"alias/switchboard",
		"1234abcd-12ab-34cd-56ef-1234567890ab",
		"arn:aws:kms:us-east-1:111122223333:alias/switchboard",
		"arn:aws:s3:::bucket/key/x",
	} {
		if _, err := kms.New(aws.Config{}, key); err == nil || !strings.Contains(err.Error(), "not a KMS key ARN") {
			t.Errorf("New(%q) = %v, want a refusal saying it is not a KMS key ARN", key, err)
		}
	}
}

func TestOpenStopsAtTheCallersDeadline(t *testing.T) {
	client := sealtest.KMSClient(t)
	s, err := kms.New(sealtest.KMSConfig(t), sealtest.NewKMSKey(t, client))
	if err != nil {
		t.Fatal(err)
	}
	ec := map[string]string{"tenant": "t1"}
	sealed, err := s.Seal(t.Context(), []byte("token"), ec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Open(ctx, sealed, ec); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestKMSItselfBindsTheDataKeyToTheContext(t *testing.T) {
	client := sealtest.KMSClient(t)
	keyARN := sealtest.NewKMSKey(t, client)
	s, err := kms.New(sealtest.KMSConfig(t), keyARN)
	if err != nil {
		t.Fatal(err)
	}
	ec := map[string]string{"tenant": "t1", "connector": "github"}
	sealed, err := s.Seal(t.Context(), []byte("token"), ec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := seal.Parse(sealed)
	if err != nil {
		t.Fatal(err)
	}
	if p.KeyID != keyARN {
		t.Errorf("the sealed secret names key %s, want %s", p.KeyID, keyARN)
	}
	decrypt := func(ec map[string]string) error {
		_, err := client.Decrypt(t.Context(), &awskms.DecryptInput{CiphertextBlob: p.WrappedKey, KeyId: aws.String(keyARN), EncryptionContext: ec})
		return err
	}
	if err := decrypt(ec); err != nil {
		t.Fatalf("KMS refused the data key under its own context: %v", err)
	}
	var invalid *types.InvalidCiphertextException
	if err := decrypt(map[string]string{"tenant": "t2", "connector": "github"}); !errors.As(err, &invalid) {
		t.Errorf("KMS decrypting the data key under another tenant: %v, want InvalidCiphertextException", err)
	}
}
