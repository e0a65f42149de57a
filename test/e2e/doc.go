// Package e2e holds end-to-end tests that run several jig-server processes
// against real services: two replicas sharing one S3-compatible bucket and
// one Redis (replicas_test.go). The package has no code of its own.
//
// The tests read the services from the environment and skip without them
// (they fail instead when CI=true):
//
//	eval "$(scripts/ci/start-s3.sh)"              # JIG_TEST_S3_*
//	export JIG_TEST_REDIS_URL=redis://127.0.0.1:6379/0
//	export JIG_TEST_REDIS_SERVER=/usr/bin/redis-server   # or redis-server on PATH
//	go test ./test/e2e/
package e2e
