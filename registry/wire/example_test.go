package wire_test

import (
	"encoding/json"
	"fmt"

	"github.com/jigkit/jig/registry/wire"
)

func Example() {
	body := []byte(`{"code":"VERSION_EXISTS","message":"Registry @acme/ui@1.0.0 already exists"}`)
	var e wire.Error
	if err := json.Unmarshal(body, &e); err != nil {
		panic(err)
	}
	switch e.Code {
	case wire.CodeVersionExists:
		fmt.Println("bump the version:", e.Message)
	default:
		fmt.Println("failed:", e.Message)
	}
	// Output:
	// bump the version: Registry @acme/ui@1.0.0 already exists
}

func ExampleUploadResult() {
	for _, r := range []wire.UploadResult{
		{Name: "ui", Version: "1.0.0", Namespace: "@acme", Message: "Registry uploaded successfully", Path: "@acme/ui/1.0.0"},
		{Name: "web", Version: "2.0.0", Message: "Preset published successfully", Path: "presets/web/2.0.0"},
	} {
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
	}
	// Output:
	// {"name":"ui","version":"1.0.0","namespace":"@acme","message":"Registry uploaded successfully","path":"@acme/ui/1.0.0"}
	// {"name":"web","version":"2.0.0","message":"Preset published successfully","path":"presets/web/2.0.0"}
}

func ExampleHealth() {
	b, _ := json.Marshal(wire.Health{
		Status: wire.StatusError,
		Checks: map[string]wire.HealthCheck{"storage": {Status: wire.StatusError, Error: "storage did not answer"}},
	})
	fmt.Println(string(b))
	// Output:
	// {"status":"error","checks":{"storage":{"status":"error","error":"storage did not answer"}}}
}

func ExampleCode_Auth() {
	for _, c := range []wire.Code{wire.CodeTokenExpired, wire.CodeVersionExists} {
		fmt.Println(c, c.Auth())
	}
	// Output:
	// TOKEN_EXPIRED true
	// VERSION_EXISTS false
}

func ExampleCode_Status() {
	for _, c := range []wire.Code{wire.CodeVersionExists, wire.CodeUploadFailed, wire.CodeTooManyUploads} {
		fmt.Println(c, c.Status())
	}
	// Output:
	// VERSION_EXISTS 409
	// UPLOAD_FAILED 400
	// TOO_MANY_UPLOADS 503
}

func ExampleCensusNotTaken_String() {
	fmt.Println(wire.CensusNotTaken{Target: "config/app.yaml", Side: wire.CensusSideOurs, Changes: 3})
	fmt.Println(wire.CensusNotTaken{Target: "b.txt", Side: wire.CensusSideBase, Changes: 1})
	// Output:
	// config/app.yaml: resolved with ours, 3 upstream changes not taken
	// b.txt: resolved with base, 1 upstream change not taken
}
