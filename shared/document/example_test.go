package document_test

import (
	"context"
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/document"
)

func ExampleExtract() {
	doc, err := document.Extract(context.Background(), "notes.md", []byte("# Plan\r\n\r\n\r\n- read   \r\n- write\r\n"))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s %q\n%s", doc.Format, doc.Title, doc.Markdown)
	// Output:
	// markdown "Plan"
	// # Plan
	//
	// - read
	// - write
}
