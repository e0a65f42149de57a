package postgres_test

import (
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/postgres"
	"github.com/jigkit/jig/registryserver/state/statetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	statetest.Run(t, func(t *testing.T) state.Store {
		st, err := postgres.Open(t.Context(), testenv.Postgres(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}

// TestErrorsHideThePassword opens a database that does not answer with
// a password in its URL.
func TestErrorsHideThePassword(t *testing.T) {
	t.Parallel()
	for _, url := range []string{
		"postgres://jig:s3cret-pw@127.0.0.1:1/db?connect_timeout=2",
		"host=127.0.0.1 port=1 password=s3cret-pw connect_timeout=2",
		"postgres://jig:s3cret-pw@[::1/db",
	} {
		_, err := postgres.Open(t.Context(), url)
		if err == nil {
			t.Fatalf("Open(%q) succeeded", url)
		}
		if strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("Open's error shows the password: %v", err)
		}
	}
}
