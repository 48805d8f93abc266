#!/usr/bin/env bash
# scripts/zk.sh PORT: a ZooKeeper of your own, standalone, on 127.0.0.1:PORT,
# in the foreground until Ctrl-C (or SIGTERM); its data lives in a fresh
# temporary directory, removed when it stops. For trying ballot out:
#   scripts/zk.sh 2181 &
#   ./ballot --zookeeper-servers 127.0.0.1:2181 info
# Installs Debian's zookeeper package first if it is missing (root or sudo).
set -euo pipefail

port=${1:-}
case $port in
'' | *[!0-9]*) echo "zk.sh: PORT \"$port\": want a port number, e.g. scripts/zk.sh 2181" >&2; exit 2 ;;
esac
if [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then
	echo "zk.sh: PORT $port: want 1 to 65535" >&2
	exit 2
fi
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
	echo "zk.sh: PORT $port: something already listens on 127.0.0.1:$port; choose another port" >&2
	exit 2
fi

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ ! -f /usr/share/java/zookeeper.jar ] || ! command -v java >/dev/null 2>&1; then
	"$repo/scripts/ensure-zookeeper.sh"
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/ballot-zk-$port.XXXXXX")
zk_pid=""
stop() {
	trap - EXIT INT TERM
	if [ -n "$zk_pid" ]; then
		kill -TERM "$zk_pid" 2>/dev/null || true
		wait "$zk_pid" 2>/dev/null || true
	fi
	rm -rf "$dir"
	echo "zk.sh: ZooKeeper on 127.0.0.1:$port stopped" >&2
}
trap stop EXIT
trap 'exit 0' INT TERM

mkdir -p "$dir/data"
cat >"$dir/zoo.cfg" <<CFG
tickTime=2000
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=srvr,mntr,ruok
CFG
java -Xmx256m -XX:+UseSerialGC -cp /usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar \
	org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg" >"$dir/server.log" 2>&1 </dev/null &
zk_pid=$!

# Ready once it answers srvr; its log if it dies first.
ready=0
for _ in $(seq 600); do
	if ! kill -0 "$zk_pid" 2>/dev/null; then
		echo "zk.sh: ZooKeeper did not start; its log:" >&2
		tail -n 20 "$dir/server.log" >&2
		zk_pid=""
		exit 1
	fi
	if timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf srvr >&3 && cat <&3' _ "$port" 2>/dev/null | grep -q '^Mode:'; then
		ready=1
		break
	fi
	sleep 0.1
done
if [ "$ready" -eq 0 ]; then
	echo "zk.sh: ZooKeeper does not answer on 127.0.0.1:$port; its log:" >&2
	tail -n 20 "$dir/server.log" >&2
	exit 1
fi
echo "zk.sh: ZooKeeper serving on 127.0.0.1:$port (data in $dir); Ctrl-C stops it" >&2
echo "zk.sh: try: ballot --zookeeper-servers 127.0.0.1:$port info" >&2
wait "$zk_pid" || true
zk_pid=""
