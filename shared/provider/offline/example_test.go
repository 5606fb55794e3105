package offline_test

import (
	"context"
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
)

func ExampleNewGenerator() {
	gen := offline.NewGenerator()
	ctx := context.Background()
	docs := []string{"Vector indexes trade accuracy for speed. You can set a target accuracy when you create the index."}
	history := []provider.Turn{{Role: "user", Content: "How do vector indexes work?"}}

	q, _ := gen.Generate(ctx, provider.GenerateRequest{Task: provider.TaskRephrase, Question: "Can I tune it?", History: history})
	fmt.Println(q.Text)
	g, _ := gen.Generate(ctx, provider.GenerateRequest{Task: provider.TaskGrade, Question: q.Text, Documents: docs})
	fmt.Println(g.Text)
	a, _ := gen.Generate(ctx, provider.GenerateRequest{Task: provider.TaskAnswer, Question: "How do I set the accuracy of a vector index?", Documents: docs})
	fmt.Println(a.Text)
	fmt.Println(a.Provider, a.Model)
	// Output:
	// Can I tune it? vector indexes work
	// yes
	// Vector indexes trade accuracy for speed. You can set a target accuracy when you create the index. [1]
	// offline extractive-v1
}
