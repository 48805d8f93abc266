# ballot: static binaries, no cgo.
#
#   make build   ./ballot for this machine
#   make cross   dist/ballot-linux-* for every supported Linux target
#   make docs    dist/doc: the man page ballot.1 and the bash and zsh
#                completions, generated from the parameter table by ./ballot
#   make test    the whole test suite (scripts/test.sh; installs ZooKeeper if missing)
#   make demo    two candidates, one ZooKeeper, a failover (scripts/demo.sh)
#   make bench   the benchmark: real 3-member ZooKeeper, ~14 min, writes BENCHMARKS.md
#   make clean   remove ./ballot and dist/

GO      ?= go
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# -gcflags=-l: no inlining in ballot's own package (not the runtime or the
# libraries): none of its code is hot, and it saves about 60 KiB. Most of
# the linux/amd64 binary's 6.7 MiB is the Go runtime and crypto/tls (2.2
# MiB of it, for --zookeeper-tls; see BENCHMARKS.md).
# TAGS=ballot_notls: a build without TLS to ZooKeeper, 2.2 MiB smaller
# (tls_off.go), e.g. make cross TAGS=ballot_notls for small appliances.
TAGS    ?=
GOBUILD := CGO_ENABLED=0 $(GO) build -trimpath -tags "$(TAGS)" -gcflags=-l -ldflags "$(LDFLAGS)"

# name:GOARCH:extra environment
TARGETS := amd64:amd64: \
           arm64:arm64: \
           armv6:arm:GOARM=6 \
           armv7:arm:GOARM=7 \
           386:386: \
           mips:mips:GOMIPS=softfloat \
           mipsle:mipsle:GOMIPS=softfloat \
           riscv64:riscv64:

.PHONY: build cross docs test demo bench clean

build:
	$(GOBUILD) -o ballot .

cross:
	@mkdir -p dist
	@set -e; for t in $(TARGETS); do \
		name=$${t%%:*}; rest=$${t#*:}; arch=$${rest%%:*}; extra=$${rest#*:}; \
		echo "dist/ballot-linux-$$name"; \
		env GOOS=linux GOARCH=$$arch $$extra $(GOBUILD) -o dist/ballot-linux-$$name . ; \
	done

# The man page and completions come from the binary for this machine
# (ballot help --man, ballot completion): the same table as --help.
docs: build
	@mkdir -p dist/doc/completions
	./ballot help --man > dist/doc/ballot.1
	./ballot completion bash > dist/doc/completions/ballot
	./ballot completion zsh > dist/doc/completions/_ballot

test:
	scripts/test.sh

demo:
	scripts/demo.sh

# bench_test.go (build tag bench, so never part of `make test`); it runs
# `make cross` itself and measures the linux binary for this machine.
bench:
	$(GO) test -tags bench -run '^TestBench' -count=1 -v -timeout 30m .

clean:
	rm -rf ballot dist
