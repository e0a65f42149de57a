package cacheref_test

import (
	"net/url"
	"testing"

	"github.com/jigkit/jig/internal/cacheref"
)

func TestParse(t *testing.T) {
	t.Parallel()
	base := url.QueryEscape("http://127.0.0.1:8080/reg")
	for _, tt := range []struct {
		ref  string
		want cacheref.Ref
		ok   bool
	}{
		{base + "/@main/runtimes/base/1.0.0", cacheref.Ref{Server: "http://127.0.0.1:8080/reg", Registry: "@main/runtimes/base@1.0.0", Content: "digest index"}, true},
		{base + "/signatures/@team/x/2.1.0", cacheref.Ref{Server: "http://127.0.0.1:8080/reg", Registry: "@team/x@2.1.0", Content: "signatures"}, true},
		{base + "/presets/small/1.0.0", cacheref.Ref{Server: "http://127.0.0.1:8080/reg", Registry: "@presets/small@1.0.0", Content: "preset"}, true},
		{"nothing", cacheref.Ref{}, false},
		{base + "/main/x/1.0.0", cacheref.Ref{Server: "http://127.0.0.1:8080/reg"}, false},
	} {
		got, ok := cacheref.Parse(tt.ref)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, %v", tt.ref, got, ok, tt.want, tt.ok)
		}
	}
}
