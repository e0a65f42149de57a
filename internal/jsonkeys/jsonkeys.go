// Package jsonkeys finds keys that appear twice in one JSON object.
//
// encoding/json keeps the last of two equal keys (and matches struct
// fields case-insensitively), other readers keep the first: a document
// with a repeated key means different things to different readers. For
// configuration that grants access (auth.json) or sends secrets
// (webhooks.json), jig-server refuses such a document instead of guessing.
package jsonkeys

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// maxDepth bounds the nesting the check follows; deeper documents are
// refused (no configuration file nests anywhere near this).
const maxDepth = 64

// DuplicateError reports a key that appears twice in one object.
type DuplicateError struct {
	// Pointer is the JSON pointer of the object holding the key ("" for
	// the top level).
	Pointer string
	// Key is the key as written the second time; First as written the
	// first time (they differ in case only, or not at all).
	Key, First string
}

// Error names the key and where it is.
func (e *DuplicateError) Error() string {
	where := "at the top level"
	if e.Pointer != "" {
		where = "in " + e.Pointer
	}
	if e.Key != e.First {
		return fmt.Sprintf("the key %q appears twice %s (also as %q, which JSON readers may take for the same key); keep one of them", e.Key, where, e.First)
	}
	return fmt.Sprintf("the key %q appears twice %s; keep one of them", e.Key, where)
}

// Check returns a [*DuplicateError] for the first object of data that has
// two keys equal when compared case-insensitively (as encoding/json
// matches struct fields), and nil when there is none. It does not check
// that data is valid JSON beyond what it reads: a syntax error ends the
// check with nil, and the parser that follows reports it.
func Check(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := walk(dec, "", 0)
	if _, ok := err.(*DuplicateError); ok {
		return err
	}
	if err == errTooDeep {
		return fmt.Errorf("objects and arrays are nested more than %d levels deep", maxDepth)
	}
	return nil
}

var errTooDeep = fmt.Errorf("too deep")

// walk reads one value and everything in it.
func walk(dec *json.Decoder, ptr string, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth++; depth > maxDepth {
		return errTooDeep
	}
	switch d {
	case '{':
		seen := map[string]string{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			k, _ := kt.(string)
			// encoding/json matches fields with Unicode case folding,
			// under which "ſ" is "s" and the Kelvin sign is "k": upper
			// then lower case folds them the same way.
			fold := strings.ToLower(strings.ToUpper(k))
			if first, dup := seen[fold]; dup {
				return &DuplicateError{Pointer: ptr, Key: k, First: first}
			}
			seen[fold] = k
			if err := walk(dec, ptr+"/"+escape(k), depth); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if err := walk(dec, ptr+"/"+strconv.Itoa(i), depth); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

// escape writes a key as a JSON pointer token (RFC 6901).
func escape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
