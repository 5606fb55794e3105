# Switchboard's developer targets, and the build targets of SAM's makefile builder.
#
#   make run        serve MCP locally at http://127.0.0.1:8080/mcp (embedded storage)
#   make test       the whole test suite (scripts/test)
#   make generate   regenerate template.yaml, events/, the build targets below and README's tool table
#   make build      every function's Lambda bootstrap, into bin/<function>/bootstrap
#   make deploy     build with SAM and deploy (guided: it asks, and remembers in samconfig.toml)
#
# `sam build` runs build-<LogicalID> for each function in template.yaml, with ARTIFACTS_DIR set.

GO ?= go

.PHONY: run test generate build deploy

run:
	$(GO) run ./functions/gateway

test:
	scripts/test

generate:
	$(GO) run ./scripts/generate

build:
	@for f in $(FUNCTIONS); do \
		echo "bin/$$f/bootstrap"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' -o bin/$$f/bootstrap ./functions/$$f || exit 1; \
	done

deploy:
	sam build && sam deploy --guided

# generated:begin (go run ./scripts/generate writes this part from the catalog; do not edit)
FUNCTIONS = \
	gateway \
	assistant/prompt_get \
	assistant/prompt_override_get \
	assistant/prompt_override_reset \
	assistant/prompt_override_set \
	assistant/settings_get \
	assistant/settings_update \
	career/atom_create \
	career/atom_get \
	career/atom_list \
	career/atom_update \
	career/index_build \
	career/index_run_list \
	career/ingest_resume \
	career/interaction_apply_event \
	career/interaction_create \
	career/interaction_get \
	career/match_opportunity \
	career/opportunity_create \
	career/opportunity_get \
	career/opportunity_list \
	career/opportunity_update \
	career/validate_match_report \
	chat/chat \
	connectors/create \
	connectors/delete \
	connectors/get \
	connectors/list \
	connectors/policy_list \
	connectors/policy_set \
	connectors/proxy \
	connectors/scheduled_sync \
	connectors/sync \
	connectors/tools_openai \
	connectors/update \
	connectors/verify \
	memory/add_message \
	memory/clear \
	memory/delete \
	memory/get_all_messages \
	memory/get_context \
	memory/get_old_messages \
	memory/get_or_create \
	memory/get_or_create_summary \
	memory/get_summary \
	memory/resource \
	memory/set_summary \
	operations/get_audit_trace \
	rag/basic \
	rag/basic_rerank \
	rag/crag \
	rag/graphrag \
	rag/health_check \
	rag/iris_global_graphrag \
	rag/pylate_colbert \
	vector/document_delete \
	vector/document_ingest \
	vector/document_list \
	vector/embed_texts \
	vector/grade \
	vector/indexer \
	vector/rephrase \
	vector/retriever \
	vector/search_group \
	vector/storage \
	vector/store_create \
	vector/store_delete \
	vector/store_get \
	vector/store_list \
	websearch/duckduckgo_search \
	websearch/web_search \
	keyring

build-GatewayFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/gateway

build-AssistantPromptGetFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/assistant/prompt_get

build-AssistantPromptOverrideGetFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/assistant/prompt_override_get

build-AssistantPromptOverrideResetFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/assistant/prompt_override_reset

build-AssistantPromptOverrideSetFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/assistant/prompt_override_set

build-AssistantSettingsGetFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/assistant/settings_get

build-AssistantSettingsUpdateFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/assistant/settings_update

build-CareerAtomCreateFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/career/atom_create

build-CareerAtomGetFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/career/atom_get

build-CareerAtomListFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/career/atom_list

build-CareerAtomUpdateFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/career/atom_update

build-CareerIndexBuildFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/career/index_build

build-CareerIndexRunListFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/career/index_run_list

build-CareerIngestResumeFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/career/ingest_resume

build-CareerInteractionApplyEventFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/career/interaction_apply_event

build-CareerInteractionCreateFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/career/interaction_create

build-CareerInteractionGetFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/career/interaction_get

build-CareerMatchOpportunityFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/career/match_opportunity

build-CareerOpportunityCreateFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/career/opportunity_create

build-CareerOpportunityGetFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/career/opportunity_get

build-CareerOpportunityListFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/career/opportunity_list

build-CareerOpportunityUpdateFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/career/opportunity_update

build-CareerValidateMatchReportFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/career/validate_match_report

build-ChatChatFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/chat/chat

build-ConnectorsCreateFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/connectors/create

build-ConnectorsDeleteFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/connectors/delete

build-ConnectorsGetFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/connectors/get

build-ConnectorsListFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/connectors/list

build-ConnectorsPolicyListFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/connectors/policy_list

build-ConnectorsPolicySetFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/connectors/policy_set

build-ConnectorsProxyFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/connectors/proxy

build-ConnectorsScheduledSyncFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/connectors/scheduled_sync

build-ConnectorsSyncFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/connectors/sync

build-ConnectorsToolsOpenaiFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/connectors/tools_openai

build-ConnectorsUpdateFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/connectors/update

build-ConnectorsVerifyFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/connectors/verify

build-MemoryAddMessageFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/memory/add_message

build-MemoryClearFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/memory/clear

build-MemoryDeleteFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/memory/delete

build-MemoryGetAllMessagesFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/memory/get_all_messages

build-MemoryGetContextFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/memory/get_context

build-MemoryGetOldMessagesFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/memory/get_old_messages

build-MemoryGetOrCreateFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/memory/get_or_create

build-MemoryGetOrCreateSummaryFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/memory/get_or_create_summary

build-MemoryGetSummaryFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/memory/get_summary

build-MemoryResourceFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/memory/resource

build-MemorySetSummaryFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/memory/set_summary

build-OperationsGetAuditTraceFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/operations/get_audit_trace

build-RagBasicFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/rag/basic

build-RagBasicRerankFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/rag/basic_rerank

build-RagCragFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/rag/crag

build-RagGraphragFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/rag/graphrag

build-RagHealthCheckFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/rag/health_check

build-RagIrisGlobalGraphragFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/rag/iris_global_graphrag

build-RagPylateColbertFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/rag/pylate_colbert

build-VectorDocumentDeleteFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/vector/document_delete

build-VectorDocumentIngestFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/vector/document_ingest

build-VectorDocumentListFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/vector/document_list

build-VectorEmbedTextsFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/vector/embed_texts

build-VectorGradeFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/vector/grade

build-VectorIndexerFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/vector/indexer

build-VectorRephraseFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/vector/rephrase

build-VectorRetrieverFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/vector/retriever

build-VectorSearchGroupFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/vector/search_group

build-VectorStorageFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/vector/storage

build-VectorStoreCreateFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/vector/store_create

build-VectorStoreDeleteFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/vector/store_delete

build-VectorStoreGetFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/vector/store_get

build-VectorStoreListFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/vector/store_list

build-WebsearchDuckduckgoSearchFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/websearch/duckduckgo_search

build-WebsearchWebSearchFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/websearch/web_search

build-KeyringFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/keyring
# generated:end
