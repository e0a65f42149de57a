package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// JSONTypeError returns, for an error of json.Unmarshal reading the file
// name that is about a value of the wrong type, that error in the file's
// words: `jig.json: "items" holds a number where a string is expected`
// (no Go types). It returns nil for any other error.
func JSONTypeError(name string, err error) error {
	var ute *json.UnmarshalTypeError
	if !errors.As(err, &ute) {
		return nil
	}
	got, want := JSONValueKind(ute.Value), "another kind of value"
	if ute.Type != nil {
		want = typeKind(ute.Type)
	}
	if ute.Field == "" {
		return fmt.Errorf("%s holds %s where %s is expected", name, got, want)
	}
	return fmt.Errorf("%s: %q holds %s where %s is expected", name, ute.Field, got, want)
}

// JSONValueKind names the kind of JSON value an [json.UnmarshalTypeError]
// reports ("string", "number 1e400", "object", "array", "bool").
func JSONValueKind(v string) string {
	switch {
	case v == "object", v == "array":
		return "an " + v
	case v == "bool":
		return "true or false"
	case v == "number":
		return "a number"
	case strings.HasPrefix(v, "number "):
		return "the number " + strings.TrimPrefix(v, "number ")
	case v == "":
		return "another kind of value"
	}
	return "a " + v
}

// typeKind names what a Go type reads from JSON.
func typeKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another kind of value"
}
