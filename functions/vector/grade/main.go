// Command grade is the Lambda function vector/grade, the RAG pipeline's last step; see [handlers.VectorGrade].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.VectorGrade) }
