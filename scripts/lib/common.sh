# Shared helpers of the scripts under scripts/. Source it; it defines
# functions, SWITCHBOARD_ROOT (the repository root) and STARTED_PIDS.
# shellcheck shell=bash

# Sourced once, however many libraries source it.
[[ -z ${SWITCHBOARD_COMMON_SH:-} ]] || return 0
SWITCHBOARD_COMMON_SH=1

SWITCHBOARD_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# die prints its arguments on stderr and exits 1.
die() {
	echo "error: $*" >&2
	exit 1
}

# need exits with a message naming what to install unless every command named
# is on PATH.
need() {
	local cmd
	for cmd in "$@"; do
		command -v "$cmd" >/dev/null 2>&1 || die "$cmd is not installed; scripts/test needs: go, java (17+), node and npm, curl, jq, flock"
	done
}

# free_port prints a TCP port that nothing on 127.0.0.1 answers on now,
# picked at random below Linux's ephemeral range (32768 up), so it cannot be
# the local port of an outgoing connection. Something else may take it before
# the caller binds it; the service starters retry on another port then.
free_port() {
	local p
	for _ in $(seq 20); do
		p=$((20000 + RANDOM % 12000))
		# A refused connection means no listener on 127.0.0.1 or 0.0.0.0.
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	die "found no free TCP port on 127.0.0.1"
}

# wait_http URL PID SECONDS [curl flags...] waits until URL answers (any HTTP
# status, or a 2xx with -f among the flags), failing early if process PID
# has exited, and fails after SECONDS.
wait_http() {
	local url=$1 pid=$2 secs=$3
	shift 3
	local deadline=$((SECONDS + secs))
	until curl -s -o /dev/null --max-time 2 "$@" "$url"; do
		kill -0 "$pid" 2>/dev/null || return 1
		((SECONDS < deadline)) || return 1
		sleep 0.2
	done
}

# Processes started with start_bg are stopped by stop_started, which the
# caller runs from its EXIT trap.
STARTED_PIDS=()

# start_bg LOG CMD... starts CMD in the background with its output in LOG and
# sets BG_PID to its process id.
start_bg() {
	local log=$1
	shift
	"$@" >"$log" 2>&1 &
	BG_PID=$!
	STARTED_PIDS+=("$BG_PID")
}

# stop_pid PID stops one process started here: SIGTERM, then SIGKILL if it is
# still there after five seconds.
stop_pid() {
	local pid=$1
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# stop_started stops every process start_bg started, newest first.
stop_started() {
	local i
	for ((i = ${#STARTED_PIDS[@]} - 1; i >= 0; i--)); do
		stop_pid "${STARTED_PIDS[i]}"
	done
	STARTED_PIDS=()
}
