package servercli

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryserver/storage/s3"
)

func TestS3Config(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cli     StorageSettings
		want    s3.Config
		wantErr []string
	}{
		{
			name: "s3 with static keys",
			cli:  StorageSettings{StorageBackend: "s3", S3Endpoint: "http://127.0.0.1:7070", S3Bucket: "b", S3Region: "us-east-1", S3AccessKeyID: "k", S3SecretAccessKey: "s", S3Prefix: "jig/"},
			want: s3.Config{Endpoint: "http://127.0.0.1:7070", Bucket: "b", Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s", Prefix: "jig/"},
		},
		{
			name: "s3 on AWS with an IAM role",
			cli:  StorageSettings{StorageBackend: "s3", S3Bucket: "b", S3Region: "eu-west-1"},
			want: s3.Config{Bucket: "b", Region: "eu-west-1"},
		},
		{
			name: "r2 names",
			cli:  StorageSettings{StorageBackend: "r2", R2AccountID: "acct", S3Bucket: "b", S3AccessKeyID: "k", S3SecretAccessKey: "s"},
			want: s3.Config{Endpoint: "https://acct.r2.cloudflarestorage.com", Region: "auto", Bucket: "b", AccessKeyID: "k", SecretAccessKey: "s"},
		},
		{
			name:    "no bucket",
			cli:     StorageSettings{StorageBackend: "s3", S3Endpoint: "http://x"},
			wantErr: []string{"S3_BUCKET"},
		},
		{
			name:    "r2 without anything",
			cli:     StorageSettings{StorageBackend: "r2"},
			wantErr: []string{"S3_BUCKET (or R2_BUCKET_NAME)", "R2_ACCOUNT_ID", "R2_ACCESS_KEY_ID", "R2_SECRET_ACCESS_KEY"},
		},
		{
			name:    "secret without key id",
			cli:     StorageSettings{StorageBackend: "s3", S3Bucket: "b", S3SecretAccessKey: "hunter2"},
			wantErr: []string{"S3_ACCESS_KEY_ID"},
		},
		{
			name:    "key id without secret",
			cli:     StorageSettings{StorageBackend: "s3", S3Bucket: "b", S3AccessKeyID: "k"},
			wantErr: []string{"S3_SECRET_ACCESS_KEY"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.cli.s3Config()
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("s3Config() = %+v, want an error naming %q", got, tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("s3Config() error = %q, want it to name %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("s3Config() error %q contains the secret", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("s3Config(): %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b func(context.Context, string) (func(), error)) bool { return a == nil && b == nil })); diff != "" {
				t.Errorf("s3Config() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMainS3MissingSettings(t *testing.T) {
	t.Parallel()
	var out, errOut strings.Builder
	code := Main(t.Context(), []string{"--port", "0", "--host", "127.0.0.1", "--storage-backend", "s3"}, &out, &errOut)
	if code != ExitError || !strings.Contains(out.String()+errOut.String(), "S3_BUCKET") {
		t.Errorf("STORAGE_BACKEND=s3 without a bucket: exit %d, output %q %q; want 1 and an error naming S3_BUCKET", code, out.String(), errOut.String())
	}
}

// TestMainS3 serves from the S3 server scripts/ci/start-s3.sh starts.
func TestMainS3(t *testing.T) {
	t.Parallel()
	env := testenv.S3(t)
	cfg := s3.Config{
		Endpoint: env.Endpoint, Bucket: env.Bucket2(t), Region: env.Region,
		AccessKeyID: env.AccessKey, SecretAccessKey: env.SecretKey,
	}
	st, err := s3.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	const key = "@servercli-s3/probe/versions.json"
	if err := st.Put(t.Context(), key, strings.NewReader(`{"versions":["1.0.0"]}`), -1); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Delete(context.Background(), key) })

	base, stop, out := start(t, "--storage-backend", "s3", "--state-dir", t.TempDir(),
		"--s3-endpoint", cfg.Endpoint, "--s3-bucket", cfg.Bucket, "--s3-region", cfg.Region,
		"--s3-access-key-id", cfg.AccessKeyID, "--s3-secret-access-key", cfg.SecretAccessKey)
	code, body := get(t, base+"/registries/@servercli-s3/probe/versions", nil)
	if code != http.StatusOK || !strings.Contains(body, "1.0.0") {
		t.Errorf("GET versions from S3 = %d %s, want 200 listing 1.0.0", code, body)
	}
	if exit := stop(); exit != ExitOK {
		t.Errorf("exit code after shutdown = %d, want 0; output:\n%s", exit, out)
	}
	if strings.Contains(out.String(), cfg.SecretAccessKey) {
		t.Errorf("the server's log contains the S3 secret key")
	}
}
