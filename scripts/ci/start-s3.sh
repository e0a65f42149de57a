#!/usr/bin/env bash
# start-s3.sh: start a local S3-compatible server (versitygw, posix backend)
# for jig's S3 tests and print the environment the tests read.
#
#   eval "$(scripts/ci/start-s3.sh)"        # start (or reuse) and export
#   scripts/ci/start-s3.sh stop             # stop it and remove its data
#
# Idempotent: a server already started by this script and still answering
# is reused. Installs versitygw with `go install` when it is not on PATH or
# in $(go env GOPATH)/bin. Only the export lines go to stdout; progress goes
# to stderr.
#
# Settings (environment): JIG_S3_PORT (default 17070), JIG_S3_STATE (state
# folder, default ${TMPDIR:-/tmp}/jig-s3-$UID), VERSITYGW_VERSION (v1.8.0).
set -euo pipefail

port="${JIG_S3_PORT:-17070}"
state="${JIG_S3_STATE:-${TMPDIR:-/tmp}/jig-s3-$(id -u)}"
version="${VERSITYGW_VERSION:-v1.8.0}"
access="jig-test-access"
secret="jig-test-secret-key"
region="us-east-1"
buckets=(jig-test jig-test-top)
endpoint="http://127.0.0.1:${port}"
empty_sha=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

log() { echo "start-s3: $*" >&2; }

s3curl() { # method path [curl args...]
  local method=$1 path=$2
  shift 2
  curl -sS --max-time 10 -o /dev/null -w '%{http_code}' \
    --aws-sigv4 "aws:amz:${region}:s3" --user "${access}:${secret}" \
    -H "x-amz-content-sha256: ${empty_sha}" -X "$method" "$@" "${endpoint}${path}"
}

answers() { # any HTTP answer at all means the server is up
  local code
  code=$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "${endpoint}/" 2>/dev/null) || true
  [[ "$code" != "000" && -n "$code" ]]
}

running() {
  [[ -f "$state/pid" ]] && kill -0 "$(cat "$state/pid")" 2>/dev/null
}

if [[ "${1:-}" == "stop" ]]; then
  if running; then
    kill "$(cat "$state/pid")" && log "stopped versitygw (pid $(cat "$state/pid"))"
  fi
  rm -rf "$state"
  exit 0
fi

command -v curl >/dev/null || { log "curl is needed (apt-get install curl)"; exit 1; }

if ! running; then
  if answers; then
    log "port ${port} is taken by another program; set JIG_S3_PORT to a free port"
    exit 1
  fi
  vgw=$(command -v versitygw || true)
  if [[ -z "$vgw" ]]; then
    gobin=$(go env GOBIN)
    vgw="${gobin:-$(go env GOPATH)/bin}/versitygw"
    if [[ ! -x "$vgw" ]]; then
      log "installing versitygw ${version} (go install, about 2 minutes on 2 cores)"
      go install "github.com/versity/versitygw/cmd/versitygw@${version}" >&2
    fi
  fi
  rm -rf "$state"
  mkdir -p "$state/data"
  # Object metadata (ETags) lives in extended attributes, so JIG_S3_STATE must
  # be on a file system with user xattrs (ext4, xfs, btrfs; tmpfs since Linux
  # 6.6). Not --sidecar: in versitygw 1.8.0 a sidecar ETag becomes visible
  # before the object's new content, so If-Match updates can be lost (jig's
  # PutIfCompareAndSwap conformance test catches it).
  ROOT_ACCESS_KEY="$access" ROOT_SECRET_KEY="$secret" nohup "$vgw" \
    --port "127.0.0.1:${port}" --region "$region" --quiet \
    posix "$state/data" >"$state/versitygw.log" 2>&1 &
  echo $! >"$state/pid"
  log "started versitygw (pid $(cat "$state/pid")) on ${endpoint}, log in $state/versitygw.log"
fi

for _ in $(seq 1 100); do
  answers && break
  if ! running; then
    log "versitygw exited:"
    cat "$state/versitygw.log" >&2
    grep -q xattr "$state/versitygw.log" &&
      log "set JIG_S3_STATE to a folder on a file system with user extended attributes (ext4, xfs)"
    exit 1
  fi
  sleep 0.1
done
answers || { log "versitygw does not answer on ${endpoint}"; exit 1; }

for b in "${buckets[@]}"; do
  code=$(s3curl PUT "/$b")
  case "$code" in
    200 | 409) ;; # created, or already ours
    *) log "creating bucket $b: HTTP $code"; exit 1 ;;
  esac
done

cat <<EXPORTS
export JIG_TEST_S3_ENDPOINT=${endpoint}
export JIG_TEST_S3_BUCKET=${buckets[0]}
export JIG_TEST_S3_BUCKET2=${buckets[1]}
export JIG_TEST_S3_ACCESS_KEY=${access}
export JIG_TEST_S3_SECRET_KEY=${secret}
export JIG_TEST_S3_REGION=${region}
EXPORTS
