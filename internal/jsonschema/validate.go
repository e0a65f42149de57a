package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Decode decodes one JSON document into the values [Schema.Validate]
// takes: map[string]any, []any, string, json.Number, bool and nil. Data
// after the document, other than white space, is an error.
func Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid character after top-level value")
	}
	return doc, nil
}

// Error is one keyword a value failed.
type Error struct {
	// Location holds the reference tokens (unescaped) of the JSON pointer
	// of the value; nil is the document itself.
	Location []string
	// Keyword is the keyword that failed: "type", "required", "pattern",
	// "not", "anyOf", ...
	Keyword string
	// Message says what is wrong, in English.
	Message string
	// Value and Pattern are, for a failed "pattern", the string and the
	// regular expression.
	Value, Pattern string
	// Alternatives holds, for an "anyOf" or "oneOf" none of whose
	// subschemas held, the errors of each subschema, in schema order.
	Alternatives [][]*Error
}

// Validate returns the keywords doc (a value from [Decode]) fails, nil when
// it is valid. The order is that of the library: at one place type, const,
// enum and format (each alone, the value's other keywords unchecked), the
// "$ref", then required, propertyNames, the properties (by name) and
// additionalProperties,
// or minItems and the items, or minLength and pattern, or minimum, then
// not, anyOf and oneOf.
func (s *Schema) Validate(doc any) []*Error {
	vd := validator{loc: make([]string, 0, 8)}
	return vd.validate(s, doc, nil)
}

type validator struct {
	loc   []string
	quick bool // only whether the value is valid matters
}

// errFailed stands for every error in quick mode.
var errFailed = &Error{Keyword: "failed"}

func (vd *validator) err(keyword, msg string) *Error {
	if vd.quick {
		return errFailed
	}
	return &Error{Location: slices.Clone(vd.loc), Keyword: keyword, Message: msg}
}

func (vd *validator) child(s *Schema, v any, tok string, out []*Error) []*Error {
	vd.loc = append(vd.loc, tok)
	out = vd.validate(s, v, out)
	vd.loc = vd.loc[:len(vd.loc)-1]
	return out
}

// valid reports whether v satisfies s, building no messages.
func (vd *validator) valid(s *Schema, v any) bool {
	quick := vd.quick
	vd.quick = true
	ok := len(vd.validate(s, v, nil)) == 0
	vd.quick = quick
	return ok
}

func (vd *validator) validate(s *Schema, v any, out []*Error) []*Error {
	if s.types != 0 {
		got := typeOf(v)
		if got == 0 {
			return append(out, vd.err("type", fmt.Sprintf("invalid jsonType %T", v)))
		}
		if s.types&got == 0 && (s.types&typeInteger == 0 || got != typeNumber || !isInteger(v.(json.Number))) {
			if vd.quick {
				return append(out, errFailed)
			}
			return append(out, vd.err("type", "got "+typeName(got)+", want "+s.typeWant))
		}
	}
	if s.hasConst {
		if str, ok := v.(string); !ok || str != s.constVal {
			return append(out, vd.err("const", "value must be "+quote(s.constVal)))
		}
	}
	if s.enum != nil {
		str, ok := v.(string)
		if !ok || !slices.Contains(s.enum, str) {
			return append(out, vd.err("enum", s.enumMsg))
		}
	}
	if s.formatURI {
		if str, ok := v.(string); ok {
			if err := checkURI(str); err != nil {
				if vd.quick {
					return append(out, errFailed)
				}
				return append(out, vd.err("format", quote(str)+" is not valid uri: "+err.Error()))
			}
		}
	}
	if s.ref != nil {
		out = vd.validate(s.ref, v, out)
	}
	switch v := v.(type) {
	case map[string]any:
		out = vd.object(s, v, out)
	case []any:
		if s.minItems >= 0 && len(v) < s.minItems {
			if vd.quick {
				return append(out, errFailed)
			}
			out = append(out, vd.err("minItems", "minItems: got "+formatInt(len(v))+", want "+formatInt(s.minItems)))
		}
		if s.items != nil {
			for i, item := range v {
				if vd.quick && len(out) > 0 {
					return out
				}
				out = vd.child(s.items, item, itoa(i), out)
			}
		}
	case string:
		if s.minLength >= 0 {
			if n := utf8.RuneCountInString(v); n < s.minLength {
				if vd.quick {
					return append(out, errFailed)
				}
				out = append(out, vd.err("minLength", "minLength: got "+formatInt(n)+", want "+formatInt(s.minLength)))
			}
		}
		if s.pattern != nil && !s.pattern.MatchString(v) {
			if vd.quick {
				return append(out, errFailed)
			}
			e := vd.err("pattern", quote(v)+" does not match pattern "+quote(s.pattern.String()))
			e.Value, e.Pattern = v, s.pattern.String()
			out = append(out, e)
		}
	case json.Number:
		if s.minimum != nil && below(v, s.minimum) {
			if vd.quick {
				return append(out, errFailed)
			}
			want, _ := s.minimum.Float64()
			out = append(out, vd.err("minimum", "minimum: got "+formatFloat(float(v))+", want "+formatFloat(want)))
		}
	}
	if vd.quick && len(out) > 0 {
		return out
	}
	if s.not != nil && vd.valid(s.not, v) {
		out = append(out, vd.err("not", "'not' failed"))
	}
	if s.anyOf != nil {
		out = vd.anyOf(s.anyOf, v, out)
	}
	if s.oneOf != nil {
		out = vd.oneOf(s.oneOf, v, out)
	}
	return out
}

func (vd *validator) object(s *Schema, obj map[string]any, out []*Error) []*Error {
	var missing []string
	for _, r := range s.required {
		if _, ok := obj[r]; !ok {
			if vd.quick {
				return append(out, errFailed)
			}
			missing = append(missing, r)
		}
	}
	switch {
	case len(missing) == 1:
		out = append(out, vd.err("required", "missing property "+quote(missing[0])))
	case len(missing) > 1:
		out = append(out, vd.err("required", "missing properties "+joinQuoted(missing)))
	}
	if s.names != nil {
		for _, name := range slices.Sorted(maps.Keys(obj)) {
			if !vd.valid(s.names, name) {
				if vd.quick {
					return append(out, errFailed)
				}
				out = append(out, vd.err("propertyNames", "invalid property name "+quote(name)))
			}
		}
	}
	if s.properties == nil && s.patternProps == nil && s.additional == nil && !s.noAdditional {
		return out
	}
	// Each property's errors are one run of out; runs come in name order.
	type run struct {
		name       string
		start, end int
	}
	var runs []run
	var extra []string
	for name, pv := range obj {
		if vd.quick && len(out) > 0 {
			return out
		}
		start := len(out)
		evaluated := false
		if ps, ok := s.properties[name]; ok {
			evaluated = true
			out = vd.child(ps, pv, name, out)
		}
		for _, pp := range s.patternProps {
			if pp.re.MatchString(name) {
				evaluated = true
				out = vd.child(pp.schema, pv, name, out)
			}
		}
		if !evaluated {
			switch {
			case s.additional != nil:
				out = vd.child(s.additional, pv, name, out)
			case s.noAdditional:
				if vd.quick {
					return append(out, errFailed)
				}
				extra = append(extra, name)
			}
		}
		if len(out) > start && !vd.quick {
			runs = append(runs, run{name, start, len(out)})
		}
	}
	if len(runs) > 1 {
		sort.Slice(runs, func(i, j int) bool { return runs[i].name < runs[j].name })
		base := runs[0].start
		for _, r := range runs {
			base = min(base, r.start)
		}
		var sorted []*Error
		for _, r := range runs {
			sorted = append(sorted, out[r.start:r.end]...)
		}
		copy(out[base:], sorted)
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		out = append(out, vd.err("additionalProperties", "additional properties "+joinQuoted(extra)+" not allowed"))
	}
	return out
}

func (vd *validator) anyOf(alts []*Schema, v any, out []*Error) []*Error {
	if vd.quick {
		for _, a := range alts {
			if vd.valid(a, v) {
				return out
			}
		}
		return append(out, errFailed)
	}
	var errs [][]*Error
	for _, a := range alts {
		e := vd.validate(a, v, nil)
		if len(e) == 0 {
			return out
		}
		errs = append(errs, e)
	}
	e := vd.err("anyOf", "'anyOf' failed")
	e.Alternatives = errs
	return append(out, e)
}

func (vd *validator) oneOf(alts []*Schema, v any, out []*Error) []*Error {
	matched := -1
	var errs [][]*Error
	for i, a := range alts {
		if matched >= 0 || vd.quick {
			if vd.valid(a, v) {
				if matched >= 0 {
					return append(out, vd.err("oneOf", "'oneOf' failed, subschemas "+formatInt(matched)+", "+formatInt(i)+" matched"))
				}
				matched = i
			}
			continue
		}
		e := vd.validate(a, v, nil)
		if len(e) == 0 {
			matched = i
			continue
		}
		errs = append(errs, e)
	}
	if matched >= 0 {
		return out
	}
	e := vd.err("oneOf", "'oneOf' failed, none matched")
	if e != errFailed {
		e.Alternatives = errs
	}
	return append(out, e)
}

func typeOf(v any) typeSet {
	switch v.(type) {
	case nil:
		return typeNull
	case bool:
		return typeBoolean
	case json.Number:
		return typeNumber
	case string:
		return typeString
	case []any:
		return typeArray
	case map[string]any:
		return typeObject
	}
	return 0
}

func typeName(t typeSet) string {
	for _, o := range typeOrder {
		if o.t == t {
			return o.name
		}
	}
	return "invalid"
}

// isInteger reports whether n has no fractional part (1, 1.0 and 1e2
// have none) and is a number big.Rat can hold, as the library decided.
func isInteger(n json.Number) bool {
	d := parseDecimal(string(n))
	return d.ok && d.isInt
}

// below reports whether n < min, exactly.
func below(n json.Number, min *big.Rat) bool {
	if min.Sign() == 0 {
		d := parseDecimal(string(n))
		return d.ok && d.neg && !d.zero
	}
	r, ok := new(big.Rat).SetString(string(n))
	return ok && r.Cmp(min) < 0
}

// decimal is what big.Rat.SetString makes of a JSON number, found
// without computing 10^exponent: the library used big.Rat, which refuses
// (ok false) a number whose decimal exponent, once the fraction's digits
// are counted in, is beyond ±1e6, and took tens of milliseconds for one
// just within.
type decimal struct {
	ok, neg, zero, isInt bool
}

func parseDecimal(s string) decimal {
	var d decimal
	if strings.HasPrefix(s, "-") {
		d.neg, s = true, s[1:]
	}
	mant, expText, hasExp := strings.Cut(s, "e")
	if !hasExp {
		mant, expText, hasExp = strings.Cut(s, "E")
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	var exp int64
	if hasExp {
		var err error
		if exp, err = strconv.ParseInt(expText, 10, 64); err != nil {
			return d // big.Rat cannot read the exponent either
		}
	}
	trailing := len(frac) - len(strings.TrimRight(frac, "0"))
	if trailing == len(frac) {
		trailing += len(intPart) - len(strings.TrimRight(intPart, "0"))
	}
	if trailing == len(intPart)+len(frac) {
		d.ok, d.zero, d.isInt = true, true, true
		return d
	}
	if exp > 1<<40 || exp < -1<<40 {
		return d
	}
	exp5 := exp - int64(len(frac))
	if exp5 > 1e6 || exp5 < -1e6 {
		return d
	}
	d.ok = true
	d.isInt = exp5 >= 0 || int64(trailing) >= -exp5
	return d
}

// float is n as the nearest float64, ±Inf beyond the range, as big.Rat's
// Float64 gives it. strconv.ParseFloat alone caps a long exponent, so
// 0.<a million zeros>1e1000010 (that is, 10000) would read as 0: the digits
// are first written as 0.<significant digits>e<exponent>.
func float(n json.Number) float64 {
	s := string(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, expText, hasExp := strings.Cut(s, "e")
	if !hasExp {
		mant, expText, hasExp = strings.Cut(s, "E")
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	f := 0.0
	if digits != "" {
		var exp int64
		if hasExp {
			var err error
			if exp, err = strconv.ParseInt(expText, 10, 64); err != nil {
				exp = math.MaxInt64 // out of int64 range either way: saturate below
				if strings.HasPrefix(expText, "-") {
					exp = math.MinInt64
				}
			}
		}
		// value = 0.digits × 10^e
		e := exp
		if adj := int64(len(intPart)) - int64(len(intPart+frac)-len(digits)); e > 0 && adj > math.MaxInt64-e || e < 0 && adj < math.MinInt64-e {
			e = exp // cannot move further out: already saturated
		} else {
			e += adj
		}
		switch {
		case e > 400:
			f = math.Inf(1)
		case e < -400:
			f = 0
		default:
			f, _ = strconv.ParseFloat("0."+digits+"e"+strconv.FormatInt(e, 10), 64)
		}
	}
	if neg {
		f = -f
	}
	return f
}

// checkURI is the library's "uri" format: net/url parses it, an IPv6 host
// is in brackets and valid, and the URL is absolute.
func checkURI(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if host := u.Hostname(); strings.Contains(host, ":") {
		if !strings.Contains(u.Host, "[") || !strings.Contains(u.Host, "]") {
			return errors.New("ipv6 address not enclosed in brackets")
		}
		addr, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("invalid ipv6 address: %v", err)
		}
		if addr.Zone() != "" {
			return errors.New("invalid ipv6 address: zone id is not a part of ipv6 address")
		}
	}
	if !u.IsAbs() {
		return errors.New("relative url")
	}
	return nil
}
