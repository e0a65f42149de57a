package s3

import (
	"strings"
	"testing"
)

func TestParseEndpoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		endpoint   string
		insecure   bool
		wantHost   string
		wantSecure bool
		wantErr    bool
	}{
		{"", false, "s3.amazonaws.com", true, false},
		{"127.0.0.1:7070", true, "127.0.0.1:7070", false, false},
		{"minio.internal:9000", false, "minio.internal:9000", true, false},
		{"http://127.0.0.1:7070", false, "127.0.0.1:7070", false, false},
		{"http://127.0.0.1:7070/", false, "127.0.0.1:7070", false, false},
		{"https://acct.r2.cloudflarestorage.com", false, "acct.r2.cloudflarestorage.com", true, false},
		{"https://acct.r2.cloudflarestorage.com", true, "", false, true},
		{"https://host/bucket", false, "", false, true},
		{"https://user:pass@host", false, "", false, true},
		{"ftp://host", false, "", false, true},
		{"host/path", false, "", false, true},
		{"http://", false, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.endpoint, func(t *testing.T) {
			t.Parallel()
			host, secure, err := parseEndpoint(tt.endpoint, tt.insecure)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseEndpoint(%q, %t) error = %v, want error %t", tt.endpoint, tt.insecure, err, tt.wantErr)
			}
			if err != nil {
				if tt.endpoint == "https://user:pass@host" && strings.Contains(err.Error(), "pass") {
					t.Errorf("error %q repeats the URL's password", err)
				}
				return
			}
			if host != tt.wantHost || secure != tt.wantSecure {
				t.Errorf("parseEndpoint(%q, %t) = %q, %t, want %q, %t", tt.endpoint, tt.insecure, host, secure, tt.wantHost, tt.wantSecure)
			}
		})
	}
}

// TestParseEndpointHidesSecrets: an endpoint refused for carrying a path,
// a query or credentials is named without its secrets.
func TestParseEndpointHidesSecrets(t *testing.T) {
	t.Parallel()
	for _, endpoint := range []string{
		"https://s3.example.com/?X-Amz-Signature=s3cret",
		"https://key:s3cret@s3.example.com",
		"ftp://s3.example.com/?token=s3cret",
	} {
		_, _, err := parseEndpoint(endpoint, false)
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("parseEndpoint(%q): got error %v, want one without the secret", endpoint, err)
		}
	}
}
