#!/bin/sh
# dist.sh: static release binaries of git-secure for linux, darwin and
# windows on amd64 and arm64, with SHA256SUMS, into DIR (default dist/).
# Every binary is built with cgo off (git-secure needs none), -trimpath and
# the version from git, so two builds of one commit are byte for byte equal.
# The CI action (action.yml) downloads one of them and checks it against
# SHA256SUMS.
set -eu
dir=${1:-dist}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
go=${GO:-go}
tags=${TAGS:-urfave_cli_no_docs}
ldflags="-s -w -buildid= -X github.com/git-secure/git-secure/internal/cli.Version=$version"
rm -rf "$dir"
mkdir -p "$dir"
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
	os=${target%/*}
	arch=${target#*/}
	ext=
	[ "$os" = windows ] && ext=.exe
	out="$dir/git-secure-$os-$arch$ext"
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch $go build -trimpath -tags "$tags" -ldflags "$ldflags" -o "$out" ./cmd/git-secure
	echo "built $out"
done
printf '%s\n' "$version" >"$dir/VERSION"
# Relative names, as "sha256sum -c SHA256SUMS" run inside DIR expects.
(cd "$dir" && if command -v sha256sum >/dev/null; then sha256sum git-secure-*; else shasum -a 256 git-secure-*; fi >SHA256SUMS)
echo "git-secure $version: $(ls "$dir"/git-secure-* | wc -l | tr -d ' ') binaries and $dir/SHA256SUMS"
