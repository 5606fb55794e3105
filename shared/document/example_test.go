package document_test

import (
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/document"
)

func ExampleExtract() {
	doc, err := document.Extract("notes.md", []byte("# Plan\r\n\r\n\r\n- read   \r\n- write\r\n"))
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
