// Package testenv finds the external services that integration tests use:
// a Redis server (JIG_TEST_REDIS_URL), a redis-server binary the test
// starts itself (JIG_TEST_REDIS_SERVER or redis-server on PATH) and an S3
// server (JIG_TEST_S3_*, as printed by scripts/ci/start-s3.sh).
//
// It also holds the fixtures several packages' tests share (fixtures.go):
// a seeded in-memory storage, a directory snapshot for "byte-identical"
// assertions, a never-ending response body, JSON encoding that fails the
// test.
//
// It starts a built jig-server and waits until it answers /health
// (server.go: [StartServer], [RunServer]), the one way the tests that
// drive the binaries (cmd/jig, test/e2e) start one.
//
// It starts a Gitea server for the forge tests (gitea.go: [StartGitea]),
// from the binary JIG_TEST_GITEA names (scripts/ci/build-gitea.sh builds
// and caches it), on a fresh PostgreSQL database.
//
// It is test support, not API: only _test.go files import it.
//
// Every function that needs a service follows one rule. When it is not configured,
// the test is skipped with a message saying how to provide it, except
// under CI=true, where the test fails instead, so that CI can never pass
// by skipping. A half-configured service (JIG_TEST_S3_ENDPOINT set but
// JIG_TEST_S3_BUCKET not) always fails.
//
// Locally:
//
//	redis-server --port 6399 --save '' --daemonize yes
//	export JIG_TEST_REDIS_URL=redis://127.0.0.1:6399/0
//	eval "$(scripts/ci/start-s3.sh)"   # exports JIG_TEST_S3_*
package testenv
