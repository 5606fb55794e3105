# Starts the services the tests run against, each on a free port on
# 127.0.0.1, with its output in a log under the caller's WORK folder. Source
# it after tools.sh (DynamoDB Local comes from the npm cache), set WORK, and
# run stop_started from the EXIT trap: every process started here is
# registered there.
# shellcheck shell=bash

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# start_dynamodb starts DynamoDB Local in memory and sets DYNAMODB_URL.
start_dynamodb() {
	need java
	local port attempt log=$WORK/dynamodb.log
	for attempt in 1 2 3; do
		port=$(free_port)
		# DynamoDB Local has no option to bind one address: it listens on
		# every interface, for as long as this run lasts. It writes a
		# metadata file into its working folder, hence WORK, and would try
		# to send usage telemetry unless told not to.
		start_bg "$log" env -C "$WORK" java -Djava.library.path="$DYNAMODB_DIR/DynamoDBLocal_lib" \
			-jar "$DYNAMODB_DIR/DynamoDBLocal.jar" -inMemory -sharedDb -disableTelemetry -port "$port"
		DYNAMODB_PID=$BG_PID
		DYNAMODB_URL=http://127.0.0.1:$port
		# Any HTTP answer (400 to a bare GET) means it is serving.
		if wait_http "$DYNAMODB_URL" "$DYNAMODB_PID" 90; then
			return 0
		fi
		stop_pid "$DYNAMODB_PID"
		echo "DynamoDB Local did not start on port $port (attempt $attempt); its log:" >&2
		tail -n 20 "$log" >&2
	done
	die "DynamoDB Local did not start"
}

# start_kms starts the local KMS (LOCAL_KMS, from ensure_go_tools) with its
# keys in a folder under WORK, and sets KMS_URL. It starts with no key: each
# test creates its own.
start_kms() {
	local port attempt log=$WORK/kms.log
	for attempt in 1 2 3; do
		port=$(free_port)
		# Like DynamoDB Local it listens on every interface. The seed file
		# named does not exist: there is nothing to seed.
		start_bg "$log" env PORT="$port" KMS_REGION=us-east-1 KMS_DATA_PATH="$WORK/kms-data" \
			KMS_SEED_PATH="$WORK/kms-seed.yaml" "$LOCAL_KMS"
		KMS_PID=$BG_PID
		KMS_URL=http://127.0.0.1:$port
		# Any HTTP answer (405 to a bare GET) means it is serving.
		if wait_http "$KMS_URL" "$KMS_PID" 30; then
			return 0
		fi
		stop_pid "$KMS_PID"
		echo "the local KMS did not start on port $port (attempt $attempt); its log:" >&2
		tail -n 20 "$log" >&2
	done
	die "the local KMS did not start"
}

# start_everything MODE starts the MCP reference server
# @modelcontextprotocol/server-everything (EVERYTHING, from
# ensure_node_tools) over MODE, streamableHttp or sse, and sets
# EVERYTHING_URL: its endpoint (/mcp, or /sse for the legacy transport).
# It listens on every interface, as its CLI has no option to bind one.
start_everything() {
	local mode=$1 port attempt path=/mcp log=$WORK/everything-$1.log
	[[ $mode == sse ]] && path=/sse
	for attempt in 1 2 3; do
		port=$(free_port)
		start_bg "$log" env PORT="$port" "$NODE" "$EVERYTHING" "$mode"
		EVERYTHING_PID=$BG_PID
		EVERYTHING_URL=http://127.0.0.1:$port$path
		# Any HTTP answer means it is serving (the SSE stream is cut by --max-time).
		if wait_http "http://127.0.0.1:$port/" "$EVERYTHING_PID" 30; then
			return 0
		fi
		stop_pid "$EVERYTHING_PID"
		echo "server-everything ($mode) did not start on port $port (attempt $attempt); its log:" >&2
		tail -n 20 "$log" >&2
	done
	die "server-everything ($mode) did not start"
}

# start_gateway BINARY starts a built gateway with an empty data folder and
# sets GATEWAY_URL (its MCP endpoint) and GATEWAY_LOG.
start_gateway() {
	local bin=$1 port attempt
	GATEWAY_LOG=$WORK/gateway.log
	for attempt in 1 2 3; do
		port=$(free_port)
		rm -rf "$WORK/gateway-data"
		start_bg "$GATEWAY_LOG" "$bin" --addr "127.0.0.1:$port" --data "$WORK/gateway-data"
		GATEWAY_PID=$BG_PID
		GATEWAY_URL=http://127.0.0.1:$port/mcp
		if wait_http "http://127.0.0.1:$port/health" "$GATEWAY_PID" 30 -f; then
			return 0
		fi
		stop_pid "$GATEWAY_PID"
		echo "the gateway did not start on port $port (attempt $attempt); its log:" >&2
		tail -n 20 "$GATEWAY_LOG" >&2
	done
	die "the gateway did not start"
}

# start_steps BINARY starts scripts/stepfunctions/serve (the real step
# handlers behind the Lambda Invoke API, on a port of its choosing, seeded
# from scripts/stepfunctions/seed.json) and sets STEPS_URL and STEPS_PID.
start_steps() {
	local bin=$1 log=$WORK/steps.log
	start_bg "$log" "$bin" --seed "$SWITCHBOARD_ROOT/scripts/stepfunctions/seed.json"
	STEPS_PID=$BG_PID
	for _ in $(seq 150); do
		STEPS_URL=$(sed -n 's/^serving the Lambda Invoke API at //p' "$log")
		[[ -z $STEPS_URL ]] || return 0
		kill -0 "$STEPS_PID" 2>/dev/null || break
		sleep 0.2
	done
	tail -n 20 "$log" >&2
	die "scripts/stepfunctions/serve did not start"
}

# start_stack BINARY starts scripts/stack (built) in the background with the
# conformance fixtures, on a free port whose origin it allows (the suite's
# DNS rebinding check sends it), anonymous requests acting for tenant
# conformance (the suite sends no key), rate limits raised for the suite,
# which calls faster than a host (they stay on: each call is admitted), and
# an API key for tenant ci; it reuses DynamoDB Local and the local KMS when SWITCHBOARD_TEST_DYNAMODB and
# SWITCHBOARD_TEST_KMS name them. It sets STACK_PID and STACK_LOG; wait_stack
# waits for it.
start_stack() {
	local bin=$1 port
	port=$(free_port)
	STACK_LOG=$WORK/stack.log
	start_bg "$STACK_LOG" "$bin" --addr "127.0.0.1:$port" --conformance --tenant ci --principal scripts-test \
		--parameter "AllowedOrigins=http://127.0.0.1:$port" --parameter AnonymousTenant=conformance \
		--parameter "RateLimits=tenant_rate=1000 tenant_burst=2000 principal_rate=1000 principal_burst=2000" \
		--logs "$WORK/stack-logs"
	STACK_PID=$BG_PID
}

# wait_stack waits until the stack start_stack started serves, and sets
# STACK_URL (its MCP endpoint, through the template's default front door, the
# streaming REST API: http://127.0.0.1:PORT/v1/mcp), STACK_KEY (the API key it made), STACK_S3 and
# STACK_BUCKET (its S3 stand-in and bucket).
wait_stack() {
	while ! grep -q '^Press Ctrl-C to stop' "$STACK_LOG"; do
		if ! kill -0 "$STACK_PID" 2>/dev/null; then
			tail -n 40 "$STACK_LOG" >&2
			die "scripts/stack did not start"
		fi
		sleep 1
	done
	STACK_URL=$(sed -n 's/^  MCP endpoint    \([^ ]*\).*/\1/p' "$STACK_LOG")
	STACK_KEY=$(sed -n 's/^  API key         \([^ ]*\).*/\1/p' "$STACK_LOG")
	STACK_S3=$(sed -n 's/^  S3 (gofakes3)   \([^,]*\),.*/\1/p' "$STACK_LOG")
	STACK_BUCKET=$(sed -n 's/^  S3 (gofakes3)   .*, bucket \([^ ]*\)/\1/p' "$STACK_LOG")
}
