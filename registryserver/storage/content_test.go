package storage_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/jigkit/jig/registryserver/storage"
)

func TestCopyContent(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		in      string
		size    int64
		want    string
		wantErr error // nil: success; errAny: any error
	}{
		{"unknown size", context.Background(), "hello", -1, "hello", nil},
		{"exact size", context.Background(), "hello", 5, "hello", nil},
		{"empty", context.Background(), "", 0, "", nil},
		{"shorter than declared", context.Background(), "hell", 5, "", io.ErrUnexpectedEOF},
		{"longer than declared", context.Background(), "hello!", 5, "", errAny},
		{"cancelled", cancelled, "hello", -1, "", context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			n, err := storage.CopyContent(tt.ctx, &buf, strings.NewReader(tt.in), tt.size)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("CopyContent: got error %v, want none", err)
			case tt.wantErr == errAny && err == nil, tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Fatalf("CopyContent: got error %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && (buf.String() != tt.want || n != int64(len(tt.want))) {
				t.Errorf("CopyContent: got %q (%d bytes), want %q", buf.String(), n, tt.want)
			}
		})
	}
}

var errAny = errors.New("any error")
