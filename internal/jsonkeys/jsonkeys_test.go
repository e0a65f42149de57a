package jsonkeys_test

import (
	"encoding/json"
	"errors"
	"fmt"
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
		{`{"@t":[{"tokenSha256":"a","token\u017fha256":"b"}]}`, "appears twice in /@t/0"},
		{`{"@t":[{"mark":"a","mar\u212a":"b"}]}`, "appears twice in /@t/0"},
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

// FuzzCheck: a key written twice in an object, at any depth, is always
// found, and a document that went through a Go map (which cannot hold a
// key twice) never is.
func FuzzCheck(f *testing.F) {
	f.Add("@team", `[{"token":"a"}]`)
	f.Add("token", `"x"`)
	f.Add("a/b~c", `{"x":[1,2]}`)
	f.Fuzz(func(t *testing.T, key, value string) {
		var v any
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			return
		}
		k, _ := json.Marshal(key)
		val, _ := json.Marshal(v)
		doc := `{"outer":[{` + string(k) + `:` + string(val) + `,` + string(k) + `:` + string(val) + `}]}`
		var de *jsonkeys.DuplicateError
		if err := jsonkeys.Check([]byte(doc)); !errors.As(err, &de) || de.Pointer != "/outer/0" {
			if !strings.Contains(fmt.Sprint(err), "nested more than") {
				t.Fatalf("Check(%s) = %v, want a duplicate in /outer/0", doc, err)
			}
		}
		once, _ := json.Marshal(map[string]any{key: v})
		if err := jsonkeys.Check(once); err != nil && !strings.Contains(err.Error(), "nested more than") {
			// Keys that differ only in case are separate in a map but
			// one to encoding/json: only then may a map's output be
			// flagged, and this one holds a single key.
			t.Fatalf("Check(%s) = %v, want nil", once, err)
		}
	})
}
