package jsonschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Draft2020 is the only "$schema" a resource may name.
const Draft2020 = "https://json-schema.org/draft/2020-12/schema"

// keywords lists every keyword the validator implements, and annotations
// it accepts and ignores.
var keywords = []string{
	// identification and annotations
	"$schema", "$id", "$defs", "title", "description",
	// any instance
	"type", "enum", "const", "format", "$ref", "not", "anyOf", "oneOf",
	// objects
	"properties", "patternProperties", "additionalProperties", "required", "propertyNames",
	// arrays
	"items", "minItems",
	// strings
	"minLength", "pattern",
	// numbers
	"minimum",
}

// Keywords returns the keywords a schema may use, sorted.
func Keywords() []string {
	ks := append([]string(nil), keywords...)
	sort.Strings(ks)
	return ks
}

// Schema is a compiled schema. It is safe for concurrent use.
type Schema struct {
	loc string // resource URL + "#" + JSON pointer, for compile errors

	types     typeSet // 0: any type
	typeWant  string  // the "want" of a type message: "object", "integer or string"
	hasConst  bool
	constVal  string
	enum      []string
	enumMsg   string
	formatURI bool
	ref       *Schema

	required     []string
	properties   map[string]*Schema
	patternProps []patternProp
	additional   *Schema // nil: no schema for additional properties
	noAdditional bool    // "additionalProperties": false
	names        *Schema // "propertyNames": nil for none

	items    *Schema
	minItems int // -1: none

	minLength int // -1: none
	pattern   *regexp.Regexp

	minimum *big.Rat

	not   *Schema
	anyOf []*Schema
	oneOf []*Schema
}

type patternProp struct {
	re     *regexp.Regexp
	schema *Schema
}

// typeSet is a bit set of JSON types.
type typeSet uint8

const (
	typeNull typeSet = 1 << iota
	typeBoolean
	typeNumber
	typeInteger
	typeString
	typeArray
	typeObject
)

// typeOrder is the order in which the library names wanted types.
var typeOrder = []struct {
	t    typeSet
	name string
}{
	{typeNull, "null"}, {typeBoolean, "boolean"}, {typeNumber, "number"}, {typeInteger, "integer"},
	{typeString, "string"}, {typeArray, "array"}, {typeObject, "object"},
}

// Compiler compiles schemas from resources added to it. It never loads
// anything: every "$ref" must point into an added resource. A Compiler is
// not safe for concurrent use; the schemas it returns are.
type Compiler struct {
	docs  map[string]any
	cache map[string]*Schema
}

// NewCompiler returns a Compiler with no resources.
func NewCompiler() *Compiler {
	return &Compiler{docs: map[string]any{}, cache: map[string]*Schema{}}
}

// AddResource adds the JSON schema document data under url, the absolute
// URL "$ref"s name it by. A "$id" in the document, if any, must equal url.
func (c *Compiler) AddResource(url string, data []byte) error {
	doc, err := Decode(data)
	if err != nil {
		return fmt.Errorf("schema %s: %w", url, err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return fmt.Errorf("schema %s: not a JSON object", url)
	}
	if s, ok := obj["$schema"]; ok && s != Draft2020 {
		return fmt.Errorf("schema %s: $schema %v is not supported, only %s", url, s, Draft2020)
	}
	if id, ok := obj["$id"]; ok && id != url {
		return fmt.Errorf("schema %s: $id %v differs from the URL it was added under", url, id)
	}
	c.docs[url] = doc
	return nil
}

// Compile compiles the resource added under url, every subschema of it
// (those under "$defs" too, referenced or not) and every schema it refers
// to. An unknown keyword anywhere is an error.
func (c *Compiler) Compile(url string) (*Schema, error) {
	if _, ok := c.docs[url]; !ok {
		return nil, fmt.Errorf("no schema resource %s", url)
	}
	s, err := c.compileAt(url, "")
	if err != nil {
		return nil, err
	}
	if err := c.checkCycles(); err != nil {
		return nil, err
	}
	return s, nil
}

func (c *Compiler) compileAt(url, ptr string) (*Schema, error) {
	key := url + "#" + ptr
	if s, ok := c.cache[key]; ok {
		return s, nil
	}
	v, err := lookup(c.docs[url], ptr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: a schema must be a JSON object (boolean schemas are not supported)", key)
	}
	s := &Schema{loc: key, minItems: -1, minLength: -1}
	c.cache[key] = s // before the children, so that references may loop
	if err := c.fill(s, url, ptr, obj); err != nil {
		delete(c.cache, key)
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return s, nil
}

// fill compiles obj's keywords into s; names are visited sorted so that the
// first error reported is always the same.
func (c *Compiler) fill(s *Schema, url, ptr string, obj map[string]any) error {
	names := slices.Sorted(maps.Keys(obj))
	sub := func(tokens ...string) (*Schema, error) {
		p := ptr
		for _, t := range tokens {
			p += "/" + escape(t)
		}
		return c.compileAt(url, p)
	}
	for _, k := range names {
		v := obj[k]
		var err error
		switch k {
		case "$schema", "$id":
			if ptr != "" {
				err = errors.New("only allowed at the root of a resource")
			}
		case "title", "description":
			if _, ok := v.(string); !ok {
				err = errors.New("not a string")
			}
		case "$defs":
			var defs map[string]any
			if defs, err = object(v); err == nil {
				for _, d := range slices.Sorted(maps.Keys(defs)) {
					if _, err = sub(k, d); err != nil {
						break
					}
				}
			}
		case "type":
			s.types, s.typeWant, err = compileType(v)
		case "const":
			str, ok := v.(string)
			if !ok {
				err = errors.New("only a string is supported")
			}
			s.hasConst, s.constVal = true, str
		case "enum":
			s.enum, s.enumMsg, err = compileEnum(v)
		case "format":
			if v != "uri" {
				err = fmt.Errorf("format %v is not supported, only uri", v)
			}
			s.formatURI = true
		case "$ref":
			ref, ok := v.(string)
			if !ok {
				err = errors.New("not a string")
				break
			}
			s.ref, err = c.compileRef(url, ref)
		case "not":
			s.not, err = sub(k)
		case "anyOf", "oneOf":
			arr, ok := v.([]any)
			if !ok || len(arr) == 0 {
				err = errors.New("not a non-empty array")
				break
			}
			list := make([]*Schema, len(arr))
			for i := range arr {
				if list[i], err = sub(k, strconv.Itoa(i)); err != nil {
					break
				}
			}
			if k == "anyOf" {
				s.anyOf = list
			} else {
				s.oneOf = list
			}
		case "properties":
			var props map[string]any
			if props, err = object(v); err == nil {
				s.properties = make(map[string]*Schema, len(props))
				for _, p := range slices.Sorted(maps.Keys(props)) {
					if s.properties[p], err = sub(k, p); err != nil {
						break
					}
				}
			}
		case "patternProperties":
			var props map[string]any
			if props, err = object(v); err == nil {
				if len(props) > 1 {
					// The library ran several patterns in Go's map order.
					err = errors.New("more than one pattern is not supported")
					break
				}
				for _, p := range slices.Sorted(maps.Keys(props)) {
					var pp patternProp
					if pp.re, err = regexp.Compile(p); err != nil {
						break
					}
					if pp.schema, err = sub(k, p); err != nil {
						break
					}
					s.patternProps = append(s.patternProps, pp)
				}
			}
		case "additionalProperties":
			switch v := v.(type) {
			case bool:
				s.noAdditional = !v
			default:
				s.additional, err = sub(k)
			}
		case "required":
			s.required, err = stringList(v)
		case "propertyNames":
			s.names, err = sub(k)
		case "items":
			s.items, err = sub(k)
		case "minItems":
			s.minItems, err = nonNegative(v)
		case "minLength":
			s.minLength, err = nonNegative(v)
		case "pattern":
			str, ok := v.(string)
			if !ok {
				err = errors.New("not a string")
				break
			}
			s.pattern, err = regexp.Compile(str)
		case "minimum":
			n, ok := v.(json.Number)
			if !ok {
				err = errors.New("not a number")
				break
			}
			s.minimum, ok = new(big.Rat).SetString(string(n))
			if !ok {
				err = fmt.Errorf("bad number %s", n)
			}
		default:
			err = fmt.Errorf("keyword %q is not supported (supported: %s)", k, strings.Join(Keywords(), " "))
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

func compileType(v any) (typeSet, string, error) {
	var list []any
	switch v := v.(type) {
	case string:
		list = []any{v}
	case []any:
		list = v
	}
	if len(list) == 0 {
		return 0, "", errors.New("not a type name or a non-empty list of them")
	}
	var ts typeSet
	for _, n := range list {
		found := false
		for _, t := range typeOrder {
			if n == t.name {
				ts |= t.t
				found = true
			}
		}
		if !found {
			return 0, "", fmt.Errorf("unknown type %v", n)
		}
	}
	var want []string
	for _, t := range typeOrder {
		if ts&t.t != 0 {
			want = append(want, t.name)
		}
	}
	return ts, strings.Join(want, " or "), nil
}

func compileEnum(v any) ([]string, string, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return nil, "", errors.New("not a non-empty array")
	}
	vals := make([]string, len(arr))
	quoted := make([]string, len(arr))
	for i, e := range arr {
		if vals[i], ok = e.(string); !ok {
			return nil, "", errors.New("only strings are supported")
		}
		quoted[i] = quote(vals[i])
	}
	if len(vals) == 1 {
		return vals, "value must be " + quoted[0], nil
	}
	return vals, "value must be one of " + strings.Join(quoted, ", "), nil
}

// compileRef resolves ref against the resource at base: "#/pointer",
// "other.json#/pointer" (next to base) or an absolute URL.
func (c *Compiler) compileRef(base, ref string) (*Schema, error) {
	doc, frag, _ := strings.Cut(ref, "#")
	url := base
	switch {
	case doc == "":
	case strings.Contains(doc, "://"):
		url = doc
	case strings.ContainsAny(doc, "/?%") || doc == "." || doc == "..":
		return nil, fmt.Errorf("reference %q: only a file next to the schema or an absolute URL is supported", ref)
	default:
		url = base[:strings.LastIndexByte(base, '/')+1] + doc
	}
	if _, ok := c.docs[url]; !ok {
		return nil, fmt.Errorf("reference %q: no schema resource %s", ref, url)
	}
	if frag != "" && (frag[0] != '/' || strings.Contains(frag, "%")) {
		return nil, fmt.Errorf("reference %q: only JSON pointer fragments without %%-escapes are supported", ref)
	}
	return c.compileAt(url, frag)
}

// checkCycles refuses a loop of "$ref", "not", "anyOf" and "oneOf" edges
// among the compiled schemas: it would validate the same value forever.
// (The other keywords descend into a smaller value, so they end.)
func (c *Compiler) checkCycles() error {
	const visiting, done = 1, 2
	state := map[*Schema]int{}
	var visit func(s *Schema) error
	visit = func(s *Schema) error {
		switch state[s] {
		case visiting:
			return fmt.Errorf("%s: reference cycle", s.loc)
		case done:
			return nil
		}
		state[s] = visiting
		for _, n := range append([]*Schema{s.ref, s.not}, append(s.anyOf, s.oneOf...)...) {
			if n != nil {
				if err := visit(n); err != nil {
					return err
				}
			}
		}
		state[s] = done
		return nil
	}
	keys := make([]string, 0, len(c.cache))
	for k := range c.cache {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := visit(c.cache[k]); err != nil {
			return err
		}
	}
	return nil
}

func lookup(doc any, ptr string) (any, error) {
	if ptr == "" {
		return doc, nil
	}
	v := doc
	for _, tok := range strings.Split(ptr, "/")[1:] {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, errors.New("no such location")
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, errors.New("no such location")
			}
			v = c[i]
		default:
			return nil, errors.New("no such location")
		}
	}
	return v, nil
}

func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

func object(v any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not an object")
	}
	return m, nil
}

func stringList(v any) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, errors.New("not an array")
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		if out[i], ok = e.(string); !ok {
			return nil, errors.New("not an array of strings")
		}
	}
	return out, nil
}

func nonNegative(v any) (int, error) {
	n, ok := v.(json.Number)
	if ok {
		if i, err := strconv.Atoi(string(n)); err == nil && i >= 0 {
			return i, nil
		}
	}
	return 0, errors.New("not a non-negative integer")
}
