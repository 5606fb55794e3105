package text_test

import (
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/text"
)

func ExamplePassages() {
	doc := "# Methods\n\nWe measured recall. Then we measured precision.\n\n# Results\n\nFusion wins."
	passages, err := text.Passages(doc, text.PassageOptions{Size: 60, Overlap: 30})
	if err != nil {
		panic(err)
	}
	for _, p := range passages {
		fmt.Printf("%d [%d:%d] %q\n", p.Index, p.Start, p.End, p.Text)
	}
	// Output:
	// 0 [0:58] "# Methods\n\nWe measured recall. Then we measured precision."
	// 1 [31:83] "Then we measured precision.\n\n# Results\n\nFusion wins."
}

func ExampleHash64Hex() {
	fmt.Println(text.Hash64Hex("foobar"))
	// Output: 85944171f73967e8
}
