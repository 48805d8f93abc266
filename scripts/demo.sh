#!/usr/bin/env bash
# A two-minute look at ballot, in about 15 seconds:
#   a throwaway ZooKeeper on 127.0.0.1, two candidates (alice, bob) running
#   the same command, one leading; SIGTERM to the leader hands over at once;
#   SIGKILL to the leader's ballot: its command dies with it, and its keeper
#   ends its session, so the other takes over at once.
# Non-interactive; works from any directory, as root or not (root or sudo is
# needed only if ZooKeeper must be installed). Cleans up everything on exit.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ballot-demo.XXXXXX")
zk_pid=""
declare -A pids=() # run name -> ballot pid
SESSION_TIMEOUT=2s

say() { printf '\n== %s ==\n' "$*"; }
now_ms() { date +%s%3N; }

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for _ in $(seq 30); do
		local alive=0
		for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ "$alive" -eq 0 ] && break
		sleep 0.1
	done
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	if [ -n "$zk_pid" ]; then
		kill -KILL "$zk_pid" 2>/dev/null || true
		wait "$zk_pid" 2>/dev/null || true
	fi
	wait 2>/dev/null || true
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
	echo "demo: $*" >&2
	exit 1
}

# wait_for FILE PATTERN SECONDS: until a line of FILE matches PATTERN.
wait_for() {
	local deadline=$(($(now_ms) + ${3} * 1000))
	until grep -q -- "$2" "$1" 2>/dev/null; do
		[ "$(now_ms)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

# Processes whose command line contains $1 (the demo's child commands).
procs_matching() {
	local f
	for f in /proc/[0-9]*/cmdline; do
		# (braces: a process gone since the glob is no error of the demo's)
		{ tr '\0' ' ' <"$f"; } 2>/dev/null | grep -q -- "$1" && echo "${f//[^0-9]/}"
	done
	return 0
}

# --- ZooKeeper and ballot -----------------------------------------------------

if [ ! -f /usr/share/java/zookeeper.jar ] || ! command -v java >/dev/null 2>&1; then
	"$repo/scripts/ensure-zookeeper.sh"
fi

say "building ballot"
# Another user's checkout, or a HOME without a Go cache, must not stop the demo.
gocache=$(go env GOCACHE 2>/dev/null || true)
if [ -z "$gocache" ] || ! mkdir -p "$gocache" 2>/dev/null || [ ! -w "$gocache" ]; then
	export GOCACHE="$tmp/gocache"
fi
version=$(git -C "$repo" describe --tags --always --dirty 2>/dev/null || echo dev)
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
(cd "$repo" && CGO_ENABLED=0 go build -trimpath -buildvcs=false \
	-ldflags "-s -w -X main.version=$version -X main.commit=$commit" -o "$tmp/ballot" .)
"$tmp/ballot" version

srvr() { # srvr PORT: ZooKeeper's own status, empty if it does not answer
	timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf srvr >&3 && cat <&3' _ "$1" 2>/dev/null || true
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_zookeeper() {
	local port attempt
	for attempt in 1 2 3; do
		port=$((20000 + RANDOM % 40000))
		port_free "$port" || continue
		rm -rf "$tmp/zk" && mkdir -p "$tmp/zk/data"
		cat >"$tmp/zk/zoo.cfg" <<-EOF
			tickTime=200
			dataDir=$tmp/zk/data
			clientPort=$port
			clientPortAddress=127.0.0.1
			admin.enableServer=false
			4lw.commands.whitelist=srvr,mntr,ruok
			preAllocSize=1024
			forceSync=no
		EOF
		java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
			-cp /usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar \
			org.apache.zookeeper.server.quorum.QuorumPeerMain "$tmp/zk/zoo.cfg" \
			>"$tmp/zk/server.log" 2>&1 </dev/null &
		zk_pid=$!
		local deadline=$(($(now_ms) + 30000))
		while kill -0 "$zk_pid" 2>/dev/null && [ "$(now_ms)" -lt "$deadline" ]; do
			if srvr "$port" | grep -q '^Mode:'; then
				ZK_PORT=$port
				return 0
			fi
			sleep 0.1
		done
		echo "demo: ZooKeeper did not start on port $port (attempt $attempt); its log:" >&2
		tail -n 20 "$tmp/zk/server.log" >&2 || true
		kill -KILL "$zk_pid" 2>/dev/null || true
		wait "$zk_pid" 2>/dev/null || true
		zk_pid=""
	done
	fail "cannot start ZooKeeper"
}

say "starting a throwaway ZooKeeper (standalone, tickTime 200ms)"
t0=$(now_ms)
start_zookeeper
echo "serving on 127.0.0.1:$ZK_PORT after $(($(now_ms) - t0)) ms: ZooKeeper $(srvr "$ZK_PORT" | sed -n 's/^Zookeeper version: \([0-9.]*\).*/\1/p')"

# --- candidates -------------------------------------------------------------------

# prefix NAME LOGFILE: copy each line to the terminal, prefixed, and to LOGFILE.
# The date is cut from ballot's timestamps to keep lines short.
prefix() {
	local line
	while IFS= read -r line; do
		line=${line#[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T}
		printf '%-7s %s\n' "[$1]" "$line"
		printf '%s\n' "$line" >>"$2"
	done
}

# candidate NAME RUN: start a ballot for NAME; its log goes to $tmp/RUN.log.
candidate() {
	local name=$1 run=$2
	: >"$tmp/$run.log"
	"$tmp/ballot" --zookeeper-servers "127.0.0.1:$ZK_PORT" --zookeeper-base-path /ballot/demo \
		--zookeeper-session-timeout "$SESSION_TIMEOUT" \
		run once --candidate-id "$name" --stop-grace-period 2s -- \
		sh -c "while :; do echo \"$name is leading (token \$BALLOT_FENCING_TOKEN)\"; sleep 1; done" \
		</dev/null > >(prefix "$name" "$tmp/$run.log") 2>&1 &
	pids[$run]=$!
}

# stopped RUN: wait for that ballot to exit and print its exit code.
stopped() {
	local rc=0
	wait "${pids[$1]}" 2>/dev/null || rc=$?
	unset "pids[$1]"
	echo "(${1%-*}'s ballot exited with code $rc)"
}

say "starting alice, then bob, with: ballot --zookeeper-servers 127.0.0.1:$ZK_PORT --zookeeper-base-path /ballot/demo --zookeeper-session-timeout $SESSION_TIMEOUT run once --candidate-id NAME -- sh -c 'while :; do echo \"NAME is leading (token \$BALLOT_FENCING_TOKEN)\"; sleep 1; done'"
candidate alice alice-1
wait_for "$tmp/alice-1.log" " event=elected " 15 || fail "alice was not elected"
candidate bob bob-1
wait_for "$tmp/bob-1.log" " event=following " 15 || fail "bob does not follow alice"
sleep 2.2

say "alice leads, bob follows; stopping alice with SIGTERM"
t0=$(now_ms)
kill -TERM "${pids[alice-1]}"
wait_for "$tmp/bob-1.log" " event=elected " 10 || fail "bob did not take over"
handover=$(($(now_ms) - t0))
stopped alice-1
wait_for "$tmp/bob-1.log" "bob is leading" 5 || fail "bob's command does not run"
say "bob took over ${handover} ms after the SIGTERM; alice stands again and follows bob"
candidate alice alice-2
wait_for "$tmp/alice-2.log" " event=following " 10 || fail "alice does not follow bob"
sleep 2

say "SIGKILL to bob's ballot: his command dies with it, his keeper gives the baton back and ends his session: alice leads at once"
t0=$(now_ms)
# (the braces keep bash's own "Killed" job report out of the output)
{
	kill -KILL "${pids[bob-1]}"
	stopped bob-1
} 2>/dev/null
wait_for "$tmp/alice-2.log" " event=elected " 10 || fail "alice did not take over"
echo "(alice elected $(($(now_ms) - t0)) ms after the SIGKILL)"
sleep 0.3
left=$(procs_matching "bob is leading")
[ -z "$left" ] || fail "bob's command survived its ballot: pids $left"
echo "(no process of bob's command is left)"
wait_for "$tmp/alice-2.log" "alice is leading" 5 || fail "alice's command does not run"
sleep 1.2

say "stopping alice with SIGTERM"
kill -TERM "${pids[alice-2]}"
stopped alice-2

token() { sed -n 's/.* event=elected .*fencing_token=\([0-9]*\).*/\1/p' "$tmp/$1.log" | head -n 1; }
t1=$(token alice-1) t2=$(token bob-1) t3=$(token alice-2)
[ -n "$t1" ] && [ "$t1" -lt "$t2" ] && [ "$t2" -lt "$t3" ] || fail "fencing tokens do not grow: $t1 $t2 $t3"
say "done: fencing tokens alice $t1 < bob $t2 < alice $t3; cleaning up"
