#!/usr/bin/env bash
# Builds Folio's release archives into $OUT (default dist/): a static
# binary for each platform in PLATFORMS, packed with the README and the
# licence-free docs as folio_<version>_<os>_<arch>.tar.gz (.zip for
# Windows), the source of the whole module (the Go client included) as
# folio_<version>_source.tar.gz, and SHA256SUMS over them.
#
#   VERSION=1.2.0 scripts/release.sh            # every platform
#   PLATFORMS=linux/amd64 scripts/release.sh    # one
#
# The version defaults to `git describe` (a tag, or the commit). The
# binary prints it with the commit and date: `folio version`.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
OUT=${OUT:-dist}
PLATFORMS=${PLATFORMS:-linux/amd64 linux/arm64 darwin/arm64 darwin/amd64 windows/amd64}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)}
COMMIT=$(git rev-parse HEAD 2>/dev/null || true)
COMMIT_TIME=$(TZ=UTC git show -s --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd HEAD 2>/dev/null || true)
COMMIT_MODIFIED=false
if [ -n "$COMMIT" ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	COMMIT_MODIFIED=true
fi
VERSION=${VERSION#v}

rm -rf "$OUT"
mkdir -p "$OUT"
for p in $PLATFORMS; do
	os=${p%/*} arch=${p#*/}
	name=folio_${VERSION}_${os}_${arch}
	dir=$OUT/$name
	mkdir -p "$dir"
	exe=folio
	[ "$os" = windows ] && exe=folio.exe
	echo "building $name"
	# Static (no cgo: every dependency is Go), reproducible paths, and the
	# commit recorded for `folio version` (-buildvcs: some machines turn it
	# off in GOFLAGS).
	# The commit is also passed by hand, for where Go finds no repository
	# (a git worktree): Go's own record, when there is one, wins.
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch $GO build -trimpath -buildvcs=true \
		-ldflags "-s -w -X main.version=$VERSION -X main.commit=$COMMIT -X main.commitTime=$COMMIT_TIME -X main.commitModified=$COMMIT_MODIFIED" -o "$dir/$exe" ./cmd/folio
	cp README.md "$dir/"
	cp -r docs "$dir/docs"
	if [ "$os" = windows ]; then
		(cd "$OUT" && python3 -c 'import shutil,sys; shutil.make_archive(sys.argv[1], "zip", ".", sys.argv[1])' "$name")
	else
		tar -C "$OUT" -czf "$OUT/$name.tar.gz" "$name"
	fi
	rm -rf "$dir"
done
echo "packing the source"
git archive --format=tar.gz --prefix="folio-$VERSION/" -o "$OUT/folio_${VERSION}_source.tar.gz" HEAD
(cd "$OUT" && sha256sum -- *.tar.gz *.zip 2>/dev/null >SHA256SUMS || sha256sum -- *.tar.gz >SHA256SUMS)
ls -l "$OUT"
