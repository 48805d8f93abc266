# ballot: static binaries, no cgo.
#
#   make build   ./ballot for this machine
#   make cross   dist/ballot-linux-* for every supported Linux target
#   make docs    dist/doc: the man page ballot.1 and the bash and zsh
#                completions, generated from the parameter table by ./ballot
#   make dist    dist/ballot-VERSION-linux-*.tar.gz for every target, and
#                dist/SHA256SUMS: byte-identical from any clean checkout
#   make deb     dist/ballot_VERSION_ARCH.deb (dpkg-deb), after make dist
#   make test    the whole test suite (scripts/test.sh; installs ZooKeeper if missing)
#   make demo    two candidates, one ZooKeeper, a failover (scripts/demo.sh)
#   make bench   the benchmark: real 3-member ZooKeeper, ~14 min, writes BENCHMARKS.md
#   make clean   remove ./ballot and dist/

GO      ?= go
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# Size (issue 35: at most 6.5 MiB with TLS, 4.5 MiB with TAGS=ballot_notls,
# linux/amd64); the measurements are in BENCHMARKS.md ("Where the bytes go").
#   -gcflags=all=-l  no inlining, in the libraries too (it was ballot's own
#                    packages only). Nothing ballot runs is a hot loop: it
#                    waits on ZooKeeper, its children and timers; the
#                    handover's steps inside ballot take as long either way.
#   $(INLINED)       ...except the packages an idle leader runs at each lease
#                    renewal: with no inlining at all the leader and its
#                    keeper used 9 ms more CPU a minute than before (+15 %,
#                    schedstat, eleven runs side by side); with these kept,
#                    4 ms more (four runs). The two flags: 430 KB smaller
#                    with TLS, 98 KB without (no inlining at all: 70 KB and
#                    61 KB more).
#   -funcalign=16    amd64 only: functions start on 16 bytes, as on 386 and
#                    arm64 and as gcc and clang align them (the linker's
#                    amd64 default is 32; 16 and 32 are the values its tests
#                    check): 70 KB smaller with TLS, 53 KB without; no
#                    measurable cost.
# Not flags: stdlite.go writes out what ballot used of flag, text/tabwriter,
# os/user, net/url (without TLS; crypto/x509 links it with) and hash/fnv,
# each linked for one small use: 33 KB smaller with TLS, 56 KB without.
# internal/jsonlite and internal/slog replace encoding/json and log/slog
# (whose default handler links encoding/json): 246 KB smaller with TLS,
# 250 KB without.
# internal/gronx (gronx without its package-level regexps) and redact.go's
# scanners keep regexp, regexp/syntax and their Unicode tables out: 242 KB
# smaller with TLS and without, 6,512,802 and 4,628,642 bytes (were
# 6,754,466 and 4,870,306).
# TLS to ZooKeeper (crypto/tls, for --zookeeper-tls) is 1.8 MiB of the rest.
INLINED := runtime sync internal/sync time net internal/poll syscall github.com/go-zookeeper/zk
# TAGS=ballot_notls: a build without TLS to ZooKeeper
# (internal/zookeeper/tls_off.go), e.g. make cross TAGS=ballot_notls for small appliances.
TAGS    ?=
# A profiling build (heapprof.go) must never ship; TAGS may come from the
# environment. Checked before anything is built.
ifneq ($(filter dist deb,$(MAKECMDGOALS)),)
ifneq ($(findstring ballot_pprof,$(TAGS)),)
$(error TAGS="$(TAGS)": make dist and make deb refuse ballot_pprof (a profiling build is never shipped); allowed: none, or ballot_notls)
endif
endif
# $$arch: the target's GOARCH, set by each rule before $(GOBUILD).
GOBUILD  = CGO_ENABLED=0 $(GO) build -trimpath -tags "$(TAGS)" -gcflags=all=-l \
           $(foreach p,$(INLINED),-gcflags=$(p)=) \
           -ldflags "$(LDFLAGS) $$(test "$$arch" = amd64 && echo -funcalign=16)"

# name:GOARCH:extra environment
TARGETS := amd64:amd64: \
           arm64:arm64: \
           armv6:arm:GOARM=6 \
           armv7:arm:GOARM=7 \
           386:386: \
           mips:mips:GOMIPS=softfloat \
           mipsle:mipsle:GOMIPS=softfloat \
           riscv64:riscv64:

.PHONY: build cross docs dist deb test demo bench clean

build:
	arch=$$($(GO) env GOARCH); $(GOBUILD) -o ballot .

# The targets build side by side: each go build is mostly start-up and a
# link, and the compiled packages come from the build cache (6.8 s one
# after the other here, 4.3 s together); a failure still fails the rule.
cross:
	@mkdir -p dist
	@pids=; for t in $(TARGETS); do \
		name=$${t%%:*}; rest=$${t#*:}; arch=$${rest%%:*}; extra=$${rest#*:}; \
		echo "dist/ballot-linux-$$name"; \
		env GOOS=linux GOARCH=$$arch $$extra $(GOBUILD) -o dist/ballot-linux-$$name . & pids="$$pids $$!"; \
	done; \
	fail=0; for p in $$pids; do wait $$p || fail=1; done; exit $$fail

# The man page and completions come from the binary for this machine
# (ballot help --man, ballot completion): the same table as --help.
docs: build
	@mkdir -p dist/doc/completions
	./ballot help --man > dist/doc/ballot.1
	./ballot completion bash > dist/doc/completions/ballot
	./ballot completion zsh > dist/doc/completions/_ballot

# A release archive per target: the binary, LICENSE and
# THIRD_PARTY_LICENSES (go-zookeeper's, gronx's and Go's, whose code the
# binary holds), README.md and docs/
# (the README links its pages), the example config, the man page, the
# completions and contrib/. The same bytes from
# any clean checkout of a commit: the build is reproducible (-trimpath, no
# cgo), the man page carries no date, and tar and gzip record no time but
# the commit's, no owner and no name.
EPOCH := $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
TAR   := tar --sort=name --mtime=@$(EPOCH) --owner=0 --group=0 --numeric-owner \
         --mode=u+rwX,go+rX,go-w --format=gnu
dist: docs
	@rm -rf dist/stage dist/ballot-*.tar.gz dist/SHA256SUMS
	@set -e; for t in $(TARGETS); do \
		name=$${t%%:*}; rest=$${t#*:}; arch=$${rest%%:*}; extra=$${rest#*:}; \
		pkg=ballot-$(VERSION)-linux-$$name; dir=dist/stage/$$pkg; \
		mkdir -p $$dir/completions; \
		env GOOS=linux GOARCH=$$arch $$extra $(GOBUILD) -o $$dir/ballot . ; \
		cp LICENSE THIRD_PARTY_LICENSES README.md ballot.json.example dist/doc/ballot.1 $$dir/; \
		cp dist/doc/completions/ballot dist/doc/completions/_ballot $$dir/completions/; \
		cp -R contrib docs $$dir/; \
		$(TAR) -C dist/stage -cf - $$pkg | gzip -n -9 > dist/$$pkg.tar.gz; \
		echo dist/$$pkg.tar.gz; \
	done
	cd dist && sha256sum ballot-*.tar.gz > SHA256SUMS
	cd dist && sha256sum -c SHA256SUMS

# A .deb per target, built with dpkg-deb alone from dist/stage: the binary,
# the man page, the completions, the systemd template units (not enabled:
# nothing starts on install), the examples, and the README and docs/
# under /usr/share/doc/ballot (its copyright: LICENSE, then
# THIRD_PARTY_LICENSES); no maintainer scripts. The
# Debian version is the git version without its "v" (0~git<hash> untagged).
DEBVERSION := $(shell echo $(VERSION) | sed 's/-/+/g; /^v[0-9]/!s/^/0~git/; s/^v//')
deb: dist
	@rm -rf dist/deb dist/*.deb
	@set -e; for t in $(TARGETS); do \
		name=$${t%%:*}; \
		case $$name in armv6) da=armel;; armv7) da=armhf;; 386) da=i386;; mipsle) da=mipsel;; *) da=$$name;; esac; \
		src=dist/stage/ballot-$(VERSION)-linux-$$name; root=dist/deb/$$da; \
		mkdir -p $$root/DEBIAN $$root/usr/bin $$root/usr/share/man/man1 \
			$$root/usr/share/bash-completion/completions $$root/usr/share/zsh/vendor-completions \
			$$root/lib/systemd/system $$root/usr/share/doc/ballot/examples/init.d; \
		cp $$src/ballot $$root/usr/bin/; \
		gzip -n -9 < $$src/ballot.1 > $$root/usr/share/man/man1/ballot.1.gz; \
		cp $$src/completions/ballot $$root/usr/share/bash-completion/completions/; \
		cp $$src/completions/_ballot $$root/usr/share/zsh/vendor-completions/; \
		cp $$src/contrib/*.service $$root/lib/systemd/system/; \
		cp $$src/contrib/*.env $$src/ballot.json.example $$root/usr/share/doc/ballot/examples/; \
		cp $$src/contrib/init.d/ballot $$root/usr/share/doc/ballot/examples/init.d/; \
		gzip -n -9 < $$src/README.md > $$root/usr/share/doc/ballot/README.md.gz; \
		mkdir -p $$root/usr/share/doc/ballot/docs; \
		for f in $$src/docs/*.md; do gzip -n -9 < $$f > $$root/usr/share/doc/ballot/docs/$${f##*/}.gz; done; \
		{ cat $$src/LICENSE; printf '\n'; cat $$src/THIRD_PARTY_LICENSES; } > $$root/usr/share/doc/ballot/copyright; \
		size=$$(du -sk --exclude=DEBIAN $$root | cut -f1); \
		printf '%s\n' "Package: ballot" "Version: $(DEBVERSION)" "Architecture: $$da" \
			"Maintainer: ballot developers <ballot@invalid>" "Installed-Size: $$size" \
			"Section: admin" "Priority: optional" \
			"Description: run a command on one machine of a fleet, by ZooKeeper leader election" \
			" ballot runs a command on only one machine of a fleet at a time: flock or" \
			" lockrun for a cluster, with run once, run cron and monitoring readers." \
			> $$root/DEBIAN/control; \
		chmod -R u+rwX,go+rX,go-w $$root; \
		find $$root -exec touch -h -d @$(EPOCH) {} +; \
		SOURCE_DATE_EPOCH=$(EPOCH) dpkg-deb --root-owner-group -Zxz --build $$root dist/ballot_$(DEBVERSION)_$$da.deb >/dev/null; \
		echo dist/ballot_$(DEBVERSION)_$$da.deb; \
	done
	cd dist && sha256sum ballot-*.tar.gz ballot_*.deb > SHA256SUMS
	cd dist && sha256sum -c SHA256SUMS

test:
	scripts/test.sh

demo:
	scripts/demo.sh

# bench_test.go (build tag bench, so never part of `make test`); it runs
# `make cross` itself and measures the linux binary for this machine.
bench:
	$(GO) test -tags bench -run '^TestBench' -count=1 -v -timeout 45m .

clean:
	rm -rf ballot dist
