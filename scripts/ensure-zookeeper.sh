#!/usr/bin/env bash
# Make sure a ZooKeeper server (Debian package `zookeeper`), a `java`,
# slf4j-simple (server logs for the test harness) and the Netty jars (the
# connection factory that serves TLS, for the secure-ZooKeeper tests) are
# installed. Idempotent; prints nothing when everything is already present.
set -euo pipefail

ZK_JAR=/usr/share/java/zookeeper.jar
SLF4J_SIMPLE=/usr/share/java/slf4j-simple.jar
# The jars e2e_secure_test.go puts on the class path (zkNettyJars).
NETTY_JARS=(buffer codec common handler resolver transport transport-native-unix-common transport-native-epoll)

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=(sudo)
	else
		echo "ensure-zookeeper: not root and no sudo; cannot install packages" >&2
	fi
fi

updated=0
apt_install() {
	if [ "$updated" -eq 0 ]; then
		echo "ensure-zookeeper: apt-get update"
		"${SUDO[@]}" apt-get update -qq
		updated=1
	fi
	echo "ensure-zookeeper: installing $*"
	"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "$@"
}

if [ ! -f "$ZK_JAR" ]; then
	apt_install zookeeper
fi

if ! command -v java >/dev/null 2>&1; then
	apt_install default-jre-headless
fi

# TLS: libzookeeper-java depends on libnetty-java today; check anyway, the
# secure tests fail without it.
netty_missing() {
	local j
	for j in "${NETTY_JARS[@]}"; do
		[ -f "/usr/share/java/netty-$j.jar" ] || return 0
	done
	return 1
}
if netty_missing; then
	apt_install libnetty-java
fi

# Optional: a logging backend so the servers write readable logs.
if [ ! -f "$SLF4J_SIMPLE" ]; then
	apt_install libslf4j-java || echo "ensure-zookeeper: libslf4j-java not installed (server logs will be empty)" >&2
fi

if [ ! -f "$ZK_JAR" ]; then
	echo "ensure-zookeeper: $ZK_JAR still missing" >&2
	exit 1
fi
if ! command -v java >/dev/null 2>&1; then
	echo "ensure-zookeeper: java still missing" >&2
	exit 1
fi
if netty_missing; then
	echo "ensure-zookeeper: the Netty jars (libnetty-java) are still missing from /usr/share/java" >&2
	exit 1
fi
