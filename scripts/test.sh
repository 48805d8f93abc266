#!/usr/bin/env bash
# The whole test suite, on a fresh Debian machine (as root, or with sudo):
#
#   scripts/test.sh                 everything: ZooKeeper, gofmt, vet (also for
#                                   darwin and freebsd), tests, cross build
#   scripts/test.sh -run Config     extra arguments go to `go test` (and the cross build is skipped)
#
# Installs Debian's ZooKeeper if missing (scripts/ensure-zookeeper.sh), then
# fails on the first step that fails. .ci/run calls this script.
set -euo pipefail

cd "$(dirname "$0")/.."

# Each step says when it starts (seconds since the script began), so a slow
# run shows where its time went.
step() { printf '\n== %s == (at %ss)\n' "$*" "$SECONDS"; }

# go test -race needs cgo, hence a C compiler; the cross build needs make.
need=()
command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v make >/dev/null 2>&1 || need+=(make)
if [ "${#need[@]}" -gt 0 ]; then
	step "installing ${need[*]}"
	sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

step "ZooKeeper"
scripts/ensure-zookeeper.sh
echo "ok: /usr/share/java/zookeeper.jar and $(command -v java)"

step "go version"
go version

# go.mod and go.sum must be what go mod tidy makes of them (the real
# dependencies direct, nothing missing or stale). go mod tidy -diff (Go
# 1.23 and later) changes nothing and fails with the diff; with an older
# Go, tidy, compare with a copy and put the copy back.
step "go mod tidy"
if go help mod tidy 2>/dev/null | grep -q -- '-diff'; then
	go mod tidy -diff
else
	saved=$(mktemp -d)
	cp go.mod go.sum "$saved/"
	go mod tidy
	if ! cmp -s go.mod "$saved/go.mod" || ! cmp -s go.sum "$saved/go.sum"; then
		diff -u "$saved/go.mod" go.mod >&2 || true
		diff -u "$saved/go.sum" go.sum >&2 || true
		cp "$saved/go.mod" "$saved/go.sum" .
		rm -rf "$saved"
		echo "go.mod or go.sum is not tidy: run go mod tidy and commit the result" >&2
		exit 1
	fi
	rm -rf "$saved"
fi
echo "ok"

step "gofmt -l ."
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "these files need gofmt -w:" >&2
	echo "$unformatted" >&2
	exit 1
fi
echo "ok"

step "go vet ./..."
go vet ./...
echo "ok"

# bench_test.go and its files (tag bench) are otherwise never compiled here.
step "go vet -tags bench ."
go vet -tags bench .
echo "ok"

# The build without TLS (TAGS=ballot_notls, for small appliances) has
# files of its own: they must compile, and the internal packages' own tests
# (no ZooKeeper; seconds) must pass there too.
step "go vet -tags ballot_notls ./... and go test -tags ballot_notls ./internal/..."
go vet -tags ballot_notls ./...
go test -count=1 -tags ballot_notls ./internal/...
echo "ok"

# A packager may build ballot position-independent (-buildmode=pie): the
# pages a process at rest drops must not include the ones the loader
# relocated (internal/keeper's DropStartPages; a PIE ballot crashed at its
# first rest). About 20 s on a cold build cache, seconds after.
step "go test -buildmode=pie (DropStartPages) ./internal/keeper"
go test -count=1 -buildmode=pie -run 'TestPagesDroppable|TestDropStartPages' ./internal/keeper
echo "ok"

# Other systems must compile (go vet compiles the tests as well), for
# editors and vet on a developer's Mac, into a ballot that says it runs on
# Linux only (platform_other.go).
for goos in darwin freebsd; do
	step "GOOS=$goos go vet ./..."
	GOOS=$goos go vet ./...
	echo "ok"
done

# -parallel 6: the tests marked t.Parallel() mostly wait on ZooKeeper and
# timers (at -parallel 4 all four slots were taken for the whole parallel
# phase while the suite used about half a core), and their margins are
# seconds derived from T, not CPU scheduling (the timing-sensitive tests
# stay serial: they run alone, before the parallel ones). Not 8: with
# others' work beside it that saturated the 2 cores, and an ensemble's
# answers late by a second, more than a lease at T = 2 s rides through
# (0.44 T): TestEnsembleSafety's scenarios need the CPU left over.
step "go test -race -count=1 -timeout 15m -parallel 6 -v ./... $*"
go test -race -count=1 -timeout 15m -parallel 6 -v ./... "$@"

if [ "$#" -gt 0 ]; then
	step "cross build skipped (go test arguments given)"
	exit 0
fi

if [ -f Makefile ] && grep -q '^cross:' Makefile; then
	step "make cross"
	make cross
fi

step "all passed"
