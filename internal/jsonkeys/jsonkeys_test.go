package jsonkeys_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/jsonkeys"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		doc  string
		want string // "" means no error
	}{
		{`{"@team":[{"tokenSha256":"ab"}],"@team":[]}`, `the key "@team" appears twice at the top level`},
		{`{"@team":[{"token":"a","token":"b"}]}`, `the key "token" appears twice in /@team/0`},
		{`{"@team":[{"publish":false,"Publish":true}]}`, `the key "Publish" appears twice in /@team/0 (also as "publish"`},
		{`{"webhooks":[{"url":"x"},{"url":"y","secret":"a","secret":"b"}]}`, `the key "secret" appears twice in /webhooks/1`},
		{`{"a/b":{"x":1,"x":2}}`, `in /a~1b`},
		{`{"\u0040team":[],"@team":[]}`, `the key "@team" appears twice`},
		{`{"@main":[],"@team":[{"token":"a"},{"token":"a"}]}`, ""},
		{`{"a":{"x":1},"b":{"x":1}}`, ""},
		{`[{"a":1},{"a":1}]`, ""},
		{`{"a":`, ""}, // syntax errors are the parser's
		{`"just a string"`, ""},
		{strings.Repeat("[", 65) + strings.Repeat("]", 65), "nested more than 64 levels"},
	}
	for _, tt := range tests {
		err := jsonkeys.Check([]byte(tt.doc))
		if tt.want == "" {
			if err != nil {
				t.Errorf("Check(%s) = %v, want nil", tt.doc, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Check(%s) = %v, want an error containing %q", tt.doc, err, tt.want)
		}
		var de *jsonkeys.DuplicateError
		if strings.Contains(tt.want, "twice") && !errors.As(err, &de) {
			t.Errorf("Check(%s) = %T, want *DuplicateError", tt.doc, err)
		}
	}
}
