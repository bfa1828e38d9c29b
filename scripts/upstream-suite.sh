#!/usr/bin/env bash
# Runs the original Tigris server's own HTTP test suite, at its last tag
# (v1.0.0-beta.122, test/v1/server: 139 tests written with httpexpect),
# against a real `folio serve` built from this checkout, and prints a
# summary: counts, and per failed test its first failure. It is the
# yardstick of the final (2023) API, issues 36 to 38; docs/testing.md,
# "The original's final suite", records a run. Not part of `make test`:
#
#   make upstream-suite                    # or scripts/upstream-suite.sh
#   RUN='TestImport|TestRead_Sorted' make upstream-suite   # a few tests
#
# Environment:
#   TIGRIS_REPO      bare git repository of the original server
#                    (default /work/.mirror/tigrisdata-archive+tigris/repo)
#   TIGRIS_API_REPO  bare git repository of its API definitions, the
#                    submodule api/proto (tigrisdata-archive/tigris-api;
#                    default /work/.mirror/tigrisdata-archive+tigris-api/repo)
#   TAG              the original's tag (default v1.0.0-beta.122)
#   RUN              -test.run pattern (default: every test)
#   OUT              where the run's files go (default a new directory in
#                    the cache): test2json events, the server's log, the
#                    summary
#   FOLIO_SERVE_ARGS further flags of `folio serve` (e.g. --engine postgres
#                    --postgres-url ...); the data directory is a fresh
#                    temporary one
#   UPSTREAM_CACHE   cache directory (default ~/.cache/folio-upstream-suite)
#
# The original's code is never copied into this repository: the tag's tree
# is extracted at run time into the cache, made to compile there (below:
# each step says why it is needed) and compiled once into a test binary;
# later runs reuse the binary and only rebuild folio.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
GO=${GO:-go}
TIGRIS_REPO=${TIGRIS_REPO:-/work/.mirror/tigrisdata-archive+tigris/repo}
TIGRIS_API_REPO=${TIGRIS_API_REPO:-/work/.mirror/tigrisdata-archive+tigris-api/repo}
TAG=${TAG:-v1.0.0-beta.122}
RUN=${RUN:-}
CACHE=${UPSTREAM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/folio-upstream-suite}

# The original's module pins these; the generated code must match their
# runtimes (protoc-gen-go at go.mod's google.golang.org/protobuf v1.30.0,
# protoc-gen-go-grpc v1.3.0 for grpc v1.55.0, the gateway at go.mod's
# grpc-gateway v2.15.2). protoc is Debian's protobuf-compiler, as for
# Folio's own definitions (internal/wire/tigrisv1/generate.sh).
PROTOC_GEN_GO=v1.30.0
PROTOC_GEN_GO_GRPC=v1.3.0
PROTOC_GEN_GATEWAY=v2.15.2

log() { echo "== $*" >&2; }
die() { echo "upstream-suite: $*" >&2; exit 1; }

command -v protoc >/dev/null || die "protoc not found: apt-get install protobuf-compiler libprotobuf-dev"
[ -f /usr/include/google/protobuf/timestamp.proto ] || die "google/protobuf/timestamp.proto not found: apt-get install libprotobuf-dev"
git -C "$TIGRIS_REPO" rev-parse -q --verify "$TAG^{commit}" >/dev/null ||
	die "no tag $TAG in $TIGRIS_REPO (a bare clone of the original server, tigrisdata-archive/tigris)"

work= src= testbin=
build_suite() {
	# Earlier builds (of another tag, script or toolchain) go.
	find "$CACHE" -mindepth 1 -maxdepth 1 -name 'build-*' ! -path "$work" -exec rm -rf {} +
	rm -rf "$work"
	mkdir -p "$src" "$work/bin"
	log "extracting $TAG into $src"
	git -C "$TIGRIS_REPO" archive "$TAG" | tar -x -C "$src"

	# 1. The API's generated Go code (api/server/v1/*.pb.go) is not in the
	# original's repository: its Makefile generates it from the submodule
	# api/proto (tigris-api) at the commit the tag records. The final Go
	# client's copy (v1.0.0) is a month older and lacks messages the
	# server's own code uses (projects' limits, usage, key types), so it
	# is generated here from that commit, as the original's Makefile did.
	local api_commit
	api_commit=$(git -C "$TIGRIS_REPO" ls-tree "$TAG" api/proto | awk '{print $3}')
	git -C "$TIGRIS_API_REPO" rev-parse -q --verify "$api_commit^{commit}" >/dev/null ||
		die "commit $api_commit (api/proto of $TAG) not in $TIGRIS_API_REPO (a bare clone of tigrisdata-archive/tigris-api)"
	mkdir -p "$src/api/proto"
	git -C "$TIGRIS_API_REPO" archive "$api_commit" | tar -x -C "$src/api/proto"
	log "installing protoc plugins into $work/bin"
	for plugin in "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO" \
		"google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC" \
		"github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@$PROTOC_GEN_GATEWAY"; do
		(cd "$work" && GOFLAGS= GOBIN="$work/bin" $GO install "$plugin")
	done
	log "generating api/server/v1 from tigris-api $api_commit"
	(
		cd "$src/api/proto"
		# The options of tigris-api's Makefile (target generate).
		for p in server/v1/*.proto; do
			PATH="$work/bin:$PATH" protoc -I. -I/usr/include \
				--go_out=.. --go_opt=paths=source_relative \
				--go-grpc_out=.. --go-grpc_opt=require_unimplemented_servers=false,paths=source_relative \
				--grpc-gateway_out=.. --grpc-gateway_opt=paths=source_relative,allow_delete_body=true \
				"$p"
		done
	)
	# The same for the server's internal data format (internal/data.proto),
	# which the test imports through the server's packages.
	(cd "$src" && PATH="$work/bin:$PATH" protoc -Iinternal -I/usr/include --go_out=internal --go_opt=paths=source_relative internal/data.proto)

	# 2. The test imports server packages (auth, cache, schema: for their
	# constants and helpers) that import FoundationDB's Go bindings, which
	# are cgo over libfdb_c; Debian packages neither the library nor its
	# headers, and the test never talks to FoundationDB. So the bindings
	# are replaced by a pure-Go copy whose calls panic
	# (upstream-suite/fdbstub.go). Build tags do not help: the imports are
	# unconditional.
	local fdb_mod fdb_dir
	fdb_mod=$(cd "$src" && $GO list -m -f '{{.Path}}@{{.Version}}' github.com/apple/foundationdb/bindings/go)
	fdb_dir=$(cd "$src" && $GO mod download -json "$fdb_mod" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
	[ -d "$fdb_dir" ] || die "go mod download $fdb_mod: no directory"
	cp -r "$fdb_dir" "$work/fdbstub"
	chmod -R u+w "$work/fdbstub"
	(cd "$work" && $GO run "$here/upstream-suite/fdbstub.go" "$work/fdbstub")
	# Its go.mod names no go version (so go would read it as 1.16, whose
	# module graphs are not pruned) and requires an x/xerrors it does not use.
	printf 'module github.com/apple/foundationdb/bindings/go\n\ngo 1.18\n' >"$work/fdbstub/go.mod"

	# 3. A replace makes go load the go.mod of every module in the graph,
	# and the module proxy refuses inet.af/netaddr (403); the test does not
	# import it (the server's IP filtering does), so an empty module stands
	# in for it.
	mkdir -p "$work/netaddr"
	printf 'module inet.af/netaddr\n\ngo 1.18\n' >"$work/netaddr/go.mod"
	(cd "$src" && $GO mod edit \
		-replace "github.com/apple/foundationdb/bindings/go=$work/fdbstub" \
		-replace "inet.af/netaddr=$work/netaddr")

	# 4. test/config hard-wires the server's URL (http://localhost:8081
	# unless ENVIRONMENT=test, then http://tigris_server:8081). Folio runs on
	# a free port instead, so GetBaseURL reads UPSTREAM_BASE_URL when set.
	# The second server (localhost:8082, with auth and TLS) is left as it
	# is: its tests fail to connect, see the summary.
	sed -i 's|return "http://localhost:8081"|return folioBaseURL()|' "$src/test/config/config.go"
	grep -q 'folioBaseURL()' "$src/test/config/config.go" || die "test/config/config.go: the URL to patch is not there"
	cat >"$src/test/config/folio_url.go" <<-'EOF'
		package config

		import "os"

		// folioBaseURL is added by Folio's scripts/upstream-suite.sh.
		func folioBaseURL() string {
			if u := os.Getenv("UPSTREAM_BASE_URL"); u != "" {
				return u
			}
			return "http://localhost:8081"
		}
	EOF

	# 5. Compile the suite (its files carry the build tag integration), once,
	# without cgo, niced and one package at a time: the machine is shared.
	log "compiling test/v1/server (a few minutes the first time)"
	(cd "$src" && CGO_ENABLED=0 nice -n 19 $GO test -p 1 -c -tags integration -o "$testbin" ./test/v1/server)
}

# The compiled suite depends on the tag, on how it is built (the function
# above, the stub generator) and on the go toolchain: a change to any makes
# a new build.
key=$( { echo "$TAG"; declare -f build_suite; cat "$here/upstream-suite/fdbstub.go"; $GO version; } | sha256sum | cut -c1-16)
work=$CACHE/build-$key
src=$work/src
testbin=$work/server.test
if [ ! -x "$testbin" ]; then
	build_suite
else
	log "reusing the compiled suite $testbin"
fi

OUT=${OUT:-$CACHE/runs/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

log "building folio from $root ($(git -C "$root" rev-parse --short HEAD))"
(cd "$root" && $GO build -o "$OUT/folio" ./cmd/folio)

data=$(mktemp -d)
pid=
proxy_pid=
cleanup() {
	if [ -n "$proxy_pid" ]; then
		kill -TERM "$proxy_pid" 2>/dev/null || true
		wait "$proxy_pid" 2>/dev/null || true
	fi
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$data"
}
trap cleanup EXIT

# A free port, chosen by the system and read from the start-up line (as
# tests/servetest does), rather than 8081, which a developer's own
# server may hold.
# shellcheck disable=SC2086
"$OUT/folio" serve --addr 127.0.0.1:0 --data-dir "$data/data" ${FOLIO_SERVE_ARGS:-} >"$OUT/folio.log" 2>&1 &
pid=$!
addr=
for _ in $(seq 1 600); do
	addr=$(sed -n 's/.*msg="\{0,1\}folio listening"\{0,1\}.*addr"\{0,1\}[=:]"\{0,1\}\([0-9.]*:[0-9]*\).*/\1/p' "$OUT/folio.log" | head -1)
	[ -n "$addr" ] && break
	kill -0 "$pid" 2>/dev/null || { cat "$OUT/folio.log" >&2; die "folio exited at start"; }
	sleep 0.1
done
[ -n "$addr" ] || { cat "$OUT/folio.log" >&2; die "folio did not say where it listens"; }
for _ in $(seq 1 300); do
	curl -fsS "http://$addr/v1/health" >/dev/null 2>&1 && break
	sleep 0.1
done
log "folio serve listening on $addr (log: $OUT/folio.log)"

# The suite talks to folio through a proxy that logs each exchange with
# its bodies (upstream-suite/proxy.go), so that the summary can say, for
# each failure, what was sent and what Folio answered.
(cd "$root" && $GO build -o "$OUT/proxy" "$here/upstream-suite/proxy.go")
"$OUT/proxy" -target "$addr" -log "$OUT/exchanges.jsonl" >"$OUT/proxy.addr" 2>"$OUT/proxy.log" &
proxy_pid=$!
proxy=
for _ in $(seq 1 100); do
	proxy=$(head -1 "$OUT/proxy.addr")
	[ -n "$proxy" ] && break
	sleep 0.1
done
[ -n "$proxy" ] || die "the proxy did not start: $(cat "$OUT/proxy.log")"

# One test at a time, each in a process of its own, after a mark in the
# proxy's log: the exchanges between two marks are one test's. (In one
# process, test2json's timestamps lag the test's requests by tens of
# milliseconds, too much to tell whose a request is.) The tests are
# independent: each makes and deletes projects of its own name.
# cwd is the test's directory: it reads ../../config/keys. The environment
# must not say ENVIRONMENT=test (the original's docker compose hosts).
run_test() { # run_test NAME PATTERN EVENTS
	curl -fsS -X POST "http://$proxy/upstream-suite/mark?test=$1" || die "the proxy did not take a mark"
	(cd "$src/test/v1/server" && env -u ENVIRONMENT UPSTREAM_BASE_URL="http://$proxy" \
		$GO tool test2json -t -p github.com/tigrisdata/tigris/test/v1/server \
		"$testbin" -test.v=test2json -test.count=1 -test.timeout=10m -test.run "$2") >>"$3" || true
}
anchored() { # ^A$/^B$ for A/B: -test.run's pattern for one test
	local out= part
	local IFS=/
	for part in $1; do
		out+="${out:+/}^$(printf '%s' "$part" | sed 's/[][\\.*^$+?(){}|]/\\&/g')\$"
	done
	printf '%s' "$out"
}
mapfile -t tests < <(cd "$src/test/v1/server" && "$testbin" -test.list "${RUN:-.}" | grep '^Test')
log "running ${#tests[@]} tests one by one (events: $OUT/events.json)"
: >"$OUT/events.json"
for t in "${tests[@]}"; do
	run_test "$t" "$(anchored "$t")" "$OUT/events.json"
done
# A failed test's first failed subtest, again alone (its results are not
# counted): the exchanges of the subtests after it would hide its own.
mapfile -t subtests < <($GO run "$here/upstream-suite/summary.go" -failed-subtests "$OUT/events.json")
if [ "${#subtests[@]}" -gt 0 ]; then
	log "running the ${#subtests[@]} first failed subtests again alone, for their exchanges"
	: >"$OUT/subtest-events.json"
	for t in "${subtests[@]}"; do
		run_test "$t" "$(anchored "$t")" "$OUT/subtest-events.json"
	done
fi

summary_args=(-tag "$TAG" -folio "$(git -C "$root" rev-parse --short HEAD)" -exchanges "$OUT/exchanges.jsonl")
$GO run "$here/upstream-suite/summary.go" "${summary_args[@]}" "$OUT/events.json" | tee "$OUT/summary.md"
log "files of this run: $OUT"
