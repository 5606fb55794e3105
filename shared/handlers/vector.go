package handlers

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

func vectorService(d lambdafn.Deps) *vector.Service {
	return vector.New(d.Table, d.Blobs, d.Embedder, &vector.Options{Logger: d.Logger, Progress: lambdafn.ReportProgress})
}

// VectorStorage builds the optimizer_vs-storage function.
func VectorStorage(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("optimizer_vs-storage"), d, vectorService(d).Storage)
}

// VectorStoreCreate builds the vector_store_create function.
func VectorStoreCreate(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("vector_store_create"), d, vectorService(d).CreateStore)
}

// VectorStoreGet builds the vector_store_get function.
func VectorStoreGet(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("vector_store_get"), d, vectorService(d).GetStore)
}

// VectorStoreList builds the vector_store_list function.
func VectorStoreList(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("vector_store_list"), d, vectorService(d).ListStores)
}

// VectorStoreDelete builds the vector_store_delete function.
func VectorStoreDelete(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("vector_store_delete"), d, vectorService(d).DeleteStore)
}

// VectorDocumentList builds the vector_document_list function.
func VectorDocumentList(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("vector_document_list"), d, vectorService(d).ListDocuments)
}

// VectorDocumentDelete builds the vector_document_delete function.
func VectorDocumentDelete(d lambdafn.Deps) lambda.Handler {
	return lambdafn.Tool(tool("vector_document_delete"), d, vectorService(d).DeleteDocument)
}
