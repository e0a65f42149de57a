#!/usr/bin/env bash
# build-gitea.sh: build a Gitea server for jig's forge tests (jig fleet
# against a real forge) and print the path of the binary on stdout.
#
#   export JIG_TEST_GITEA="$(scripts/ci/build-gitea.sh)"
#
# Cached: the binary lands in ${XDG_CACHE_HOME:-$HOME/.cache}/jig-ci/gitea-<version>/
# and a second run prints its path at once. The build goes to a temporary
# name first and is renamed into place only when complete, so an interrupted
# build (Ctrl-C, kill -9) never leaves a half-written binary behind, nor
# half-copied templates.
#
# `go install code.gitea.io/gitea@<version>` is refused (its go.mod has
# replace directives), so the script downloads the module with
# `go mod download -json` and runs `go build` inside that directory.
# Built without cgo: the tests point Gitea at the PostgreSQL CI already
# runs (JIG_TEST_DATABASE_URL), so SQLite (cgo) is not needed. Without the
# bindata tag Gitea reads its templates and options from files: they are
# copied next to the binary (the test helper sets STATIC_ROOT_PATH to the
# binary's directory).
#
# Settings (environment): GITEA_VERSION (default v1.26.0).
# Takes about 8 minutes on 2 loaded cores the first time.
set -euo pipefail

version="${GITEA_VERSION:-v1.26.0}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/jig-ci/gitea-${version}"
bin="$cache/gitea"

log() { echo "build-gitea: $*" >&2; }

dir=$(go mod download -json "code.gitea.io/gitea@${version}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
if [[ -z "$dir" || ! -d "$dir" ]]; then
  log "go mod download did not name a module directory for code.gitea.io/gitea@${version}"
  exit 1
fi

mkdir -p "$cache"
if [[ ! -x "$bin" ]]; then
  tmp="$cache/gitea.partial.$$"
  trap 'rm -f "$tmp"' EXIT
  log "building Gitea ${version} in $dir (cached in $cache; about 8 minutes the first time)"
  start=$(date +%s)
  (cd "$dir" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath \
    -ldflags "-s -w -X main.Version=${version#v}" \
    -o "$tmp" .)
  mv -f "$tmp" "$bin"
  trap - EXIT
  log "built $bin in $(( $(date +%s) - start )) s"
fi
# The templates and options Gitea reads at run time (no bindata), each
# copied whole under a temporary name and renamed into place.
for d in options templates; do
  if [[ ! -d "$cache/$d" ]]; then
    rm -rf "$cache/$d.partial"
    cp -R "$dir/$d" "$cache/$d.partial"
    chmod -R u+w "$cache/$d.partial"
    mv "$cache/$d.partial" "$cache/$d"
  fi
done
echo "$bin"
