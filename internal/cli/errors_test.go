package cli

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jigkit/jig/registryclient"
)

func TestPrintError(t *testing.T) {
	t.Parallel()
	url := "http://r.example/registries/@team/tools/lint"
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "401", err: fmt.Errorf("resolving: %w", &registryclient.StatusError{StatusCode: 401, Code: "UNAUTHORIZED", Message: "Authentication token is required", Registry: "@team/tools/lint", URL: url}),
			want: "Error: 401 Unauthorized\nFailed to fetch registry @team/tools/lint (" + url + "): Authentication token is required\nSet a valid token with 'jig config set @team --token <token>'.\n"},
		{name: "403", err: &registryclient.StatusError{StatusCode: 403, Code: "FORBIDDEN_NAMESPACE", Message: "Namespace not allowed", Registry: "@secret", URL: "http://r.example/namespaces/@secret/registries"},
			want: "Error: 403 Forbidden\nAccess denied to registry @secret (http://r.example/namespaces/@secret/registries): Namespace not allowed\n"},
		{name: "404", err: &registryclient.StatusError{StatusCode: 404, Code: "NOT_FOUND", Message: "Resource not found", Registry: "@main/x", URL: "http://r.example/registries/@main/x"},
			want: "Error: 404 Not Found\nNot found: registry @main/x (http://r.example/registries/@main/x): Resource not found\n"},
		{name: "500", err: &registryclient.StatusError{StatusCode: 500, URL: "http://r.example/namespaces"},
			want: "Error: 500 Internal Server Error\nFailed to fetch http://r.example/namespaces\nRun 'jig doctor' to check the registry's health.\n"},
		{name: "429", err: &registryclient.RateLimitError{RetryAfter: time.Minute, Err: &registryclient.StatusError{StatusCode: 429, Registry: "@main", URL: "http://r.example/namespaces"}},
			want: "Error: 429 Too Many Requests\nRate limited while fetching registry @main (http://r.example/namespaces); try again in 1m0s.\n"},
		{name: "network", err: &registryclient.NetworkError{Method: "GET", URL: "http://127.0.0.1:1/namespaces", Err: errors.New("connection refused")},
			want: "Error: could not reach http://127.0.0.1:1/namespaces: connection refused\nRun 'jig doctor' to check your registry configuration and connectivity.\n"},
		{name: "other", err: errors.New("boom"), want: "Error: boom\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			printError(&b, newOutput(&b, &b, false, false), tt.err)
			if got := b.String(); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
