package jsonschema

import (
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

const base = "https://example.test/schemas/"

func compile(t *testing.T, docs map[string]string, root string) (*Schema, error) {
	t.Helper()
	c := NewCompiler()
	for name, doc := range docs {
		if err := c.AddResource(base+name, []byte(doc)); err != nil {
			return nil, err
		}
	}
	return c.Compile(base + root)
}

// A schema may use only the keywords the validator implements; anything
// else, anywhere in the document, fails to compile instead of being
// ignored.
func TestCompileRefusesWhatItDoesNotImplement(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, schema, want string
	}{
		{"unknown keyword", `{"maxLength":3}`, `keyword "maxLength" is not supported`},
		{"typo", `{"type":"object","requried":["a"]}`, `keyword "requried" is not supported`},
		{"in a property", `{"properties":{"a":{"type":"string","maxItems":1}}}`, `#/properties/a: maxItems: keyword "maxItems"`},
		{"in an unreferenced def", `{"$defs":{"x":{"uniqueItems":true}}}`, `#/$defs/x: uniqueItems`},
		{"in items", `{"items":{"allOf":[]}}`, `#/items: allOf`},
		{"in anyOf", `{"anyOf":[{"if":{}}]}`, `#/anyOf/0: if`},
		{"in not", `{"not":{"exclusiveMinimum":1}}`, `#/not: exclusiveMinimum`},
		{"boolean schema", `{"properties":{"a":true}}`, "boolean schemas are not supported"},
		{"other format", `{"format":"email"}`, "format email is not supported"},
		{"number enum", `{"enum":[1,2]}`, "only strings are supported"},
		{"object const", `{"const":{}}`, "only a string is supported"},
		{"two patternProperties", `{"patternProperties":{"a":{},"b":{}}}`, "more than one pattern"},
		{"bad regexp", `{"pattern":"("}`, "missing closing )"},
		{"bad type", `{"type":"integr"}`, "unknown type integr"},
		{"negative minLength", `{"minLength":-1}`, "not a non-negative integer"},
		{"fractional minItems", `{"minItems":1.5}`, "not a non-negative integer"},
		{"dangling ref", `{"$ref":"#/$defs/nope"}`, "no such location"},
		{"ref to another host", `{"$ref":"https://elsewhere.test/x.json"}`, "no schema resource https://elsewhere.test/x.json"},
		{"ref with a path", `{"$ref":"../x.json"}`, "only a file next to the schema"},
		{"ref to an anchor", `{"$ref":"#node"}`, "only JSON pointer fragments"},
		{"ref cycle", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"anyOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`, "reference cycle"},
		{"other draft", `{"$schema":"http://json-schema.org/draft-07/schema#"}`, "is not supported, only"},
		{"wrong $id", `{"$id":"https://example.test/schemas/other.json"}`, "differs from the URL"},
		{"nested $schema", `{"properties":{"a":{"$schema":"x"}}}`, "only allowed at the root"},
		{"not an object", `[]`, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := compile(t, map[string]string{"s.json": tt.schema}, "s.json")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// Recursion through a property is fine: each step validates a smaller
// value.
func TestCompileRecursiveSchema(t *testing.T) {
	t.Parallel()
	s, err := compile(t, map[string]string{"tree.json": `{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}}},"additionalProperties":false}`}, "tree.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := Decode([]byte(`{"kids":[{"kids":[]},{"kids":[{"x":1}]}]}`))
	errs := s.Validate(doc)
	if len(errs) != 1 || strings.Join(errs[0].Location, "/") != "kids/1/kids/0" || errs[0].Message != "additional properties 'x' not allowed" {
		t.Errorf("got %+v, want one additional-properties error at kids/1/kids/0", errs)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	schemas := map[string]string{
		"a.json": `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://example.test/schemas/a.json",
			"title":"t","description":"d","type":"object","required":["n","m"],"additionalProperties":false,
			"properties":{"n":{"type":"integer","minimum":0},"m":{"$ref":"b.json#/$defs/m"},"s":{"type":["string","null"],"minLength":2,"pattern":"^[a-z]+$"},
			"e":{"enum":["x","y"]},"c":{"const":"k"},"u":{"format":"uri"},"l":{"type":"array","minItems":1,"items":{"not":{"const":"bad"}}},
			"o":{"anyOf":[{"required":["p"]},{"required":["q"]}]},"w":{"oneOf":[{"type":"string"},{"minLength":1}]},"v":{"oneOf":[{"type":"string"},{"type":"array","minItems":1}]},
			"pp":{"patternProperties":{"^x":{"type":"boolean"}},"additionalProperties":{"type":"number"}}}}`,
		"b.json": `{"$defs":{"m":{"type":"object"}}}`,
	}
	s, err := compile(t, schemas, "a.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, doc string
		want      []string // "location: keyword: message"
	}{
		{"valid", `{"n":0,"m":{},"s":"ab","e":"x","c":"k","u":"https://x","l":["a"],"o":{"q":1},"w":1,"pp":{"xa":true,"b":1.5}}`, nil},
		{"null is a string too", `{"n":1,"m":{},"s":null}`, nil},
		{"not an object", `[]`, []string{": type: got array, want object"}},
		{"missing two", `{}`, []string{": required: missing properties 'n', 'm'"}},
		{"missing one, extra sorted", `{"n":1,"z":1,"a'":2}`, []string{
			": required: missing property 'm'", `: additionalProperties: additional properties 'a\'', 'z' not allowed`}},
		{"type stops the rest", `{"n":1.5,"m":[],"s":1}`, []string{
			"m: type: got array, want object", "n: type: got number, want integer", "s: type: got number, want null or string"}},
		{"integers", `{"n":2.0,"m":{}}`, nil},
		{"minimum", `{"n":-1234567,"m":{}}`, []string{"n: minimum: minimum: got -1.234567×10⁰⁶, want 0"}},
		{"string keywords", `{"n":1,"m":{},"s":"A"}`, []string{"s: minLength: minLength: got 1, want 2", "s: pattern: 'A' does not match pattern '^[a-z]+$'"}},
		{"runes not bytes", `{"n":1,"m":{},"s":"é"}`, []string{"s: minLength: minLength: got 1, want 2", "s: pattern: 'é' does not match pattern '^[a-z]+$'"}},
		{"enum const format", `{"n":1,"m":{},"e":"z","c":"K","u":"rel/x"}`, []string{
			"c: const: value must be 'k'", "e: enum: value must be one of 'x', 'y'", "u: format: 'rel/x' is not valid uri: relative url"}},
		{"array", `{"n":1,"m":{},"l":[]}`, []string{"l: minItems: minItems: got 0, want 1"}},
		{"not", `{"n":1,"m":{},"l":["a","bad"]}`, []string{"l/1: not: 'not' failed"}},
		{"anyOf", `{"n":1,"m":{},"o":{}}`, []string{"o: anyOf: 'anyOf' failed [missing property 'p' | missing property 'q']"}},
		{"oneOf none", `{"n":1,"m":{},"v":[]}`, []string{"v: oneOf: 'oneOf' failed, none matched [got array, want string | minItems: got 0, want 1]"}},
		{"oneOf one", `{"n":1,"m":{},"v":"","w":""}`, nil},
		{"oneOf two", `{"n":1,"m":{},"w":"a"}`, []string{"w: oneOf: 'oneOf' failed, subschemas 0, 1 matched"}},
		{"pattern and additional schemas", `{"n":1,"m":{},"pp":{"xa":1,"b":"s"}}`, []string{"pp/b: type: got string, want number", "pp/xa: type: got number, want boolean"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := Decode([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range s.Validate(doc) {
				line := strings.Join(e.Location, "/") + ": " + e.Keyword + ": " + e.Message
				if e.Alternatives != nil {
					var alts []string
					for _, a := range e.Alternatives {
						var msgs []string
						for _, ae := range a {
							msgs = append(msgs, ae.Message)
						}
						alts = append(alts, strings.Join(msgs, ", "))
					}
					line += " [" + strings.Join(alts, " | ") + "]"
				}
				got = append(got, line)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{"a":1}`, ""},
		{" [1] \n", ""},
		{``, "EOF"},
		{`{"a":1} {}`, "invalid character after top-level value"},
		{`{"a":1}]`, "invalid character after top-level value"},
		{`{"a":}`, "invalid character '}' looking for beginning of value"},
	}
	for _, tt := range tests {
		_, err := Decode([]byte(tt.in))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("Decode(%q): got error %q, want %q", tt.in, got, tt.want)
		}
	}
	doc, _ := Decode([]byte(`{"n":12345678901234567890}`))
	if n := doc.(map[string]any)["n"]; n != json.Number("12345678901234567890") {
		t.Errorf("got %#v, want the number's text as a json.Number", n)
	}
}

// The messages' numbers read as golang.org/x/text/message printed them in
// English, which the library used.
func TestNumberFormatsMatchXText(t *testing.T) {
	t.Parallel()
	p := message.NewPrinter(language.English)
	ints := []int{0, 1, -1, 12, 999, 1000, -1000, 12345, 999999, 1234567, -987654321, math.MaxInt64, math.MinInt64}
	floats := []float64{0, math.Copysign(0, -1), 1, -1, -1.5, -0.1, -0.0001, -0.00001, -12345.678, -999999.5, -1234567,
		-1e20, -1e21, -1e-7, -5e-324, -math.MaxFloat64, math.Inf(-1), math.Inf(1), 1e100, -123456789012345678901234567890}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		ints = append(ints, int(r.Int64())>>r.IntN(63))
		floats = append(floats, math.Float64frombits(r.Uint64()), -r.Float64()*math.Pow(10, float64(r.IntN(40)-20)))
	}
	for _, n := range ints {
		if got, want := formatInt(n), p.Sprintf("%d", n); got != want {
			t.Errorf("formatInt(%d) = %q, want %q", n, got, want)
		}
	}
	for _, f := range floats {
		if math.IsNaN(f) {
			continue
		}
		if got, want := formatFloat(f), p.Sprintf("%v", f); got != want {
			t.Errorf("formatFloat(%s) = %q, want %q", strconv.FormatFloat(f, 'g', -1, 64), got, want)
		}
	}
}

func TestQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"a":        "'a'",
		`it's "x"`: `'it\'s "x"'`,
		"a\nb\x00": `'a\nb\x00'`,
		"\xff":     `'\xff'`,
		// The library's unescaping of \" also eats a trailing backslash's
		// escape; kept, as the messages must not change.
		"é\u200c\\": `'é\u200c\'`,
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// parseDecimal decides as big.Rat.SetString and IsInt did for the library,
// without computing huge powers of ten.
func TestParseDecimalMatchesBigRat(t *testing.T) {
	t.Parallel()
	nums := []string{"0", "-0", "0.0", "-0.000", "0e999999999", "0e99999999999999999999", "1", "-1", "10", "1.0", "1.5", "-1.50", "100e-2", "1e-2",
		"123.456e3", "123.4560e3", "1e1000000", "1e1000001", "1e-1000000", "1e-1000001", "1.5e1000001", "10e-1000001",
		"1e999999999999999999999", "1e-999999999999999999999", "1E5", "1e+5", "-2.5E+1", "0.1e1", "12345678901234567890",
		"1" + strings.Repeat("0", 300) + "e-300", "1" + strings.Repeat("0", 300) + "e-301", "0." + strings.Repeat("0", 1000005) + "1e1000010"}
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		n := strconv.Itoa(r.IntN(100000))
		if r.IntN(2) == 0 {
			n = "-" + n
		}
		if r.IntN(2) == 0 {
			n += "." + strings.Repeat("0", r.IntN(3)) + strconv.Itoa(r.IntN(1000))
		}
		if r.IntN(2) == 0 {
			n += "e" + strconv.Itoa(r.IntN(20)-10)
		}
		nums = append(nums, n)
	}
	for _, n := range nums {
		d := parseDecimal(n)
		rat, ok := new(big.Rat).SetString(n)
		if d.ok != ok {
			t.Errorf("%.40s: got ok %v, want %v", n, d.ok, ok)
			continue
		}
		if !ok {
			continue
		}
		if d.isInt != rat.IsInt() || d.neg && !d.zero != (rat.Sign() < 0) || d.zero != (rat.Sign() == 0) {
			t.Errorf("%.40s: got %+v, want int %v sign %d", n, d, rat.IsInt(), rat.Sign())
		}
		if f, _ := rat.Float64(); f != float(json.Number(n)) {
			t.Errorf("%.40s: float got %v, want %v", n, float(json.Number(n)), f)
		}
	}
}
