package seal_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/switchboard-dev/switchboard/shared/seal"
	"github.com/switchboard-dev/switchboard/shared/seal/localkey"
)

// A connector's credential is sealed for one tenant and connector, and opens
// for them alone. On AWS, kms.New(client, keyARN) gives the same Sealer.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "seal-example")
	defer os.RemoveAll(dir)

	s, err := localkey.LoadKeyFile(filepath.Join(dir, "seal-keys.json"))
	if err != nil {
		fmt.Println(err)
		return
	}
	ec := map[string]string{"tenant": "t1", "connector": "github"}
	sealed, _ := s.Seal(ctx, []byte("Bearer ghp_example"), ec)

	token, err := s.Open(ctx, sealed, ec)
	fmt.Printf("%s %v\n", token, err)

	_, err = s.Open(ctx, sealed, map[string]string{"tenant": "t2", "connector": "github"})
	fmt.Println(errors.Is(err, seal.ErrAltered), err)

	p, _ := seal.Parse(sealed)
	fmt.Println(p.Backend, p.KeyID[:3])
	// Output:
	// Bearer ghp_example <nil>
	// true seal: open: localkey: the sealed secret was altered, or is opened under another encryption context
	// localkey k1:
}

// The encryption context is encoded without ambiguity: moving bytes between
// a name and its value gives another context.
func ExampleCanonicalContext() {
	a := seal.CanonicalContext(map[string]string{"a": "bc"})
	b := seal.CanonicalContext(map[string]string{"ab": "c"})
	fmt.Printf("%q\n%q\n", a, b)
	// Output:
	// "\x00\x01a\x00\x02bc"
	// "\x00\x02ab\x00\x01c"
}
