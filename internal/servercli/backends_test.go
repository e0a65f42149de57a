package servercli

import (
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestStorageBackendTable checks that the table of storage backends, the
// enum and help text of --storage-backend, and the configuration table of docs/server.md
// table name the same backends.
func TestStorageBackendTable(t *testing.T) {
	t.Parallel()
	var names []string
	for _, b := range storageBackends {
		names = append(names, b.name)
		if b.kind != "disk" && b.kind != "s3" {
			t.Errorf("backend %q: kind %q, want disk or s3", b.name, b.kind)
		}
		if b.help == "" || b.validate == nil || b.open == nil {
			t.Errorf("backend %q: want a help phrase, a validate and an open function", b.name)
		}
	}

	var cli CLI
	parser, err := newParser(&cli, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var enum, help, def string
	for _, f := range parser.Model.Flags {
		if f.Name == "storage-backend" {
			enum, help, def = f.Enum, f.Help, f.Default
		}
	}
	if got := strings.Split(enum, ","); !slices.Equal(got, names) {
		t.Errorf("--storage-backend enum = %q, want the table's %q", got, names)
	}
	if def != names[0] {
		t.Errorf("--storage-backend default = %q, want the table's first backend %q", def, names[0])
	}
	for _, b := range storageBackends {
		if want := b.name + " (" + b.help + ")"; !strings.Contains(help, want) {
			t.Errorf("--storage-backend help %q does not show %q", help, want)
		}
	}

	readme, err := os.ReadFile("../../docs/server.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `STORAGE_BACKEND` \\| `([a-z0-9]+)` \\| (.*) \\|$").FindStringSubmatch(string(readme))
	if row == nil {
		t.Fatal("docs/server.md has no configuration row for STORAGE_BACKEND")
	}
	if row[1] != names[0] {
		t.Errorf("docs/server.md: STORAGE_BACKEND default %q, want %q", row[1], names[0])
	}
	var documented []string
	for _, m := range regexp.MustCompile("`([a-z0-9]+)`").FindAllStringSubmatch(row[2], -1) {
		documented = append(documented, m[1])
	}
	slices.Sort(documented)
	sorted := slices.Sorted(slices.Values(names))
	if !slices.Equal(documented, sorted) {
		t.Errorf("docs/server.md: STORAGE_BACKEND lists %q, want the table's %q", documented, sorted)
	}
}

// TestStorageBackendValidate checks that each backend's settings are
// checked when the flags are parsed, before anything is opened.
func TestStorageBackendValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		wantErr string // "" for none
	}{
		{"disk", []string{"--storage-backend", "disk", "--storage-root", "./data"}, ""},
		{"local without a root", []string{"--storage-backend", "local", "--storage-root", " "}, "--storage-root/STORAGE_ROOT is empty"},
		{"disk without a root", []string{"--storage-root", ""}, "--storage-root/STORAGE_ROOT is empty"},
		{"s3 ignores the root", []string{"--storage-backend", "s3", "--storage-root", "", "--s3-bucket", "b", "--state-dir", "/var/lib/jig"}, ""},
		{"s3 without a state database", []string{"--storage-backend", "s3", "--s3-bucket", "b"}, "set STATE_DIR"},
		{"s3 with PostgreSQL", []string{"--storage-backend", "s3", "--s3-bucket", "b", "--database-url", "postgres://db/jig"}, ""},
		{"a database URL that is not PostgreSQL", []string{"--database-url", "mysql://db/jig"}, "must be a PostgreSQL URL"},
		{"s3 without a bucket", []string{"--storage-backend", "s3"}, "STORAGE_BACKEND=s3 needs S3_BUCKET"},
		{"r2 without an account", []string{"--storage-backend", "r2", "--s3-bucket", "b", "--s3-access-key-id", "k", "--s3-secret-access-key", "s"}, "R2_ACCOUNT_ID"},
		{"r2", []string{"--storage-backend", "r2", "--s3-bucket", "b", "--r2-account-id", "a", "--s3-access-key-id", "k", "--s3-secret-access-key", "s", "--state-dir", "/var/lib/jig"}, ""},
		{"unknown", []string{"--storage-backend", "gcs"}, "must be one of \"disk\",\"local\",\"s3\",\"r2\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var cli CLI
			parser, err := newParser(&cli, io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			_, err = parser.Parse(tt.args)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Parse(%q): %v, want no error", tt.args, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Parse(%q) error = %v, want one containing %q", tt.args, err, tt.wantErr)
			}
		})
	}
}
