package mcpserver

import (
	"strings"
	"testing"
)

func TestParseResource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		uri, id, file, wantErr string
	}{
		{uri: "jig://@main/quality/eslint@1.0.0", id: "@main/quality/eslint@1.0.0"},
		{uri: "jig://@main/quality/eslint@1.0.0/templates/a.js", id: "@main/quality/eslint@1.0.0", file: "templates/a.js"},
		{uri: "jig://@main/quality/eslint", wantErr: "has no version"},
		{uri: "jig://@main/quality/eslint@1.0.0/", wantErr: "file path after the version is empty"},
		{uri: "jig://main/x@1.0.0", wantErr: "want jig://@ns/path@version"},
		{uri: "https://@main/x@1.0.0", wantErr: "want jig://@ns/path@version"},
		{uri: "jig://@main/../x@1.0.0", wantErr: "resource"},
		{uri: "jig://@presets/node@1.0.0", wantErr: "a preset takes no @version"},
	}
	for _, tt := range tests {
		id, file, err := parseResource(tt.uri)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseResource(%q) = %v, %q, %v; want error containing %q", tt.uri, id, file, err, tt.wantErr)
			}
			continue
		}
		if err != nil || id.String() != tt.id || file != tt.file {
			t.Errorf("parseResource(%q) = %v, %q, %v; want %s, %q", tt.uri, id, file, err, tt.id, tt.file)
		}
	}
}
