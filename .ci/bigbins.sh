#!/usr/bin/env bash
# Downloads and extracts the big real binaries of BENCHMARKS.md, "Big
# binaries: Open and cold lookups" (Debian bookworm packages, no install),
# and prints the GOSYM_BIG_BINARIES value the benchmarks read:
#
#   export GOSYM_BIG_BINARIES=$(.ci/bigbins.sh)
#   go test ./gosym -run '^$' -bench 'BenchmarkBig' -benchmem
#
# Environment:
#   GOSYM_BIGBINS_DIR  where they go (default ${TMPDIR:-/tmp}/bigbins,
#                      outside the repository); kept between runs
#
# kubectl is Debian's kubernetes-client; the toolchain's go and compile
# are added from the installed Go. Needs apt-get and dpkg-deb.
set -euo pipefail
dir=${GOSYM_BIGBINS_DIR:-${TMPDIR:-/tmp}/bigbins}
mkdir -p "$dir/debs" "$dir/root"

# package:path-inside-the-package
bins=(
	shfmt:usr/bin/shfmt
	restic:usr/bin/restic
	kubernetes-client:usr/bin/kubectl
	hugo:usr/bin/hugo
	rclone:usr/bin/rclone
	docker.io:usr/sbin/dockerd
	etcd-server:usr/bin/etcd
	gh:usr/bin/gh
)

paths=()
for b in "${bins[@]}"; do
	pkg=${b%%:*} rel=${b#*:}
	out=$dir/$(basename "$rel")
	if [ ! -f "$out" ]; then
		deb=$(ls "$dir/debs/${pkg}"_*.deb 2>/dev/null | head -1 || true)
		if [ -z "$deb" ]; then
			(cd "$dir/debs" && apt-get download "$pkg" >&2)
			deb=$(ls "$dir/debs/${pkg}"_*.deb | head -1)
		fi
		rm -rf "$dir/root/$pkg"
		dpkg-deb -x "$deb" "$dir/root/$pkg"
		cp "$dir/root/$pkg/$rel" "$out"
	fi
	paths+=("$out")
done
paths+=("$(go env GOROOT)/bin/go" "$(go env GOTOOLDIR)/compile")
(IFS=:; echo "${paths[*]}")
