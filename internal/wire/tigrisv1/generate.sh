#!/usr/bin/env bash
# generate.sh ROOT: generates this package's Go code from
# api/proto/tigrisdata/v1/*.proto into ROOT/internal/wire/tigrisv1 (ROOT is
# the module's root for go generate, a temporary directory for the
# staleness test, generate_test.go).
#
# The generated files name the versions of protoc and of the plugins that
# wrote them, so all three are pinned: protoc is Debian 12's
# protobuf-compiler (with libprotobuf-dev for the well-known types, such as
# google/protobuf/timestamp.proto), and the plugins are installed from the
# module proxy at the versions below (protoc-gen-go at go.mod's
# google.golang.org/protobuf, which generate_test.go checks).
set -euo pipefail
PROTOC_VERSION=3.21.12
PROTOC_GEN_GO=v1.36.12
PROTOC_GEN_GO_GRPC=v1.5.1

root=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
module_root=$(cd "$here/../../.." && pwd)
protos=api/proto

if ! command -v protoc >/dev/null; then
	echo "generate.sh: protoc not found; apt-get install protobuf-compiler libprotobuf-dev" >&2
	exit 2
fi
if [ "$(protoc --version)" != "libprotoc $PROTOC_VERSION" ]; then
	echo "generate.sh: $(protoc --version), want libprotoc $PROTOC_VERSION (Debian 12's protobuf-compiler)" >&2
	exit 2
fi
include=/usr/include
if [ ! -f "$include/google/protobuf/timestamp.proto" ]; then
	echo "generate.sh: $include/google/protobuf/timestamp.proto not found; apt-get install libprotobuf-dev" >&2
	exit 2
fi

# The plugins go to a directory of their own, so that no other version on
# PATH is picked up; go install takes them from the module cache once
# fetched.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
GOFLAGS= GOBIN="$bin" go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO"
GOFLAGS= GOBIN="$bin" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC"

mkdir -p "$root/internal/wire/tigrisv1"
cd "$module_root/$protos"
PATH="$bin:$PATH" protoc -I . -I "$include" \
	--go_out="$root" --go_opt=module=github.com/foliodb/folio \
	--go-grpc_out="$root" --go-grpc_opt=module=github.com/foliodb/folio \
	tigrisdata/v1/*.proto
