package merge

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrAbsent is returned by [JSONSet], [JSONDelete], [RenameScript] and
// [RemoveDependency] when what they change is not there: a pointer's
// parent (or, for a delete, its target), a script or a dependency. A
// migration step then counts as skipped.
var ErrAbsent = errors.New("not there")

// MaxEditedJSON bounds the size of a JSON file [JSONSet] and [JSONDelete]
// edit, so that a migration cannot make an update parse a huge file.
const MaxEditedJSON = 16 << 20

// pointerText renders tokens as an RFC 6901 pointer, for messages.
func pointerText(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return strconv.Quote(sb.String())
}

// arrayIndex parses an RFC 6901 array index: decimal digits without a
// leading zero.
func arrayIndex(tok string, n int) (int, bool) {
	if tok == "" || len(tok) > 1 && tok[0] == '0' || strings.TrimLeft(tok, "0123456789") != "" || len(tok) > 9 {
		return 0, false
	}
	i, err := strconv.Atoi(tok)
	return i, err == nil && i <= n
}

// editJSON parses doc (JSON, JSONC tolerated; name is for messages), walks
// to the parent of tokens (every step must exist) and calls edit on it
// with the last token; the result is encoded in doc's style.
func editJSON(name string, doc []byte, tokens []string, edit func(parent any, last string) (any, error)) ([]byte, error) {
	if len(doc) > MaxEditedJSON {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d a migration edits", name, len(doc), MaxEditedJSON)
	}
	root, err := parseOrderedJSON(name, doc)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %w", name, err)
	}
	cur := root
	for i, tok := range tokens[:len(tokens)-1] {
		switch c := cur.(type) {
		case *jsonObject:
			v, ok := c.get(tok)
			if !ok {
				return nil, fmt.Errorf("%w: %s has no %s", ErrAbsent, name, pointerText(tokens[:i+1]))
			}
			cur = v
		case []any:
			j, ok := arrayIndex(tok, len(c)-1)
			if !ok {
				return nil, fmt.Errorf("%w: %s has no %s", ErrAbsent, name, pointerText(tokens[:i+1]))
			}
			cur = c[j]
		default:
			return nil, fmt.Errorf("%w: %s: %s is not an object or array", ErrAbsent, name, pointerText(tokens[:i]))
		}
	}
	parent := cur
	repl, err := edit(parent, tokens[len(tokens)-1])
	if err != nil {
		return nil, err
	}
	if repl != nil {
		// An array grew or shrank: put the new slice where the old was.
		if len(tokens) == 1 {
			root = repl
		} else {
			gp := root
			for _, tok := range tokens[:len(tokens)-2] {
				switch c := gp.(type) {
				case *jsonObject:
					gp, _ = c.get(tok)
				case []any:
					j, _ := arrayIndex(tok, len(c)-1)
					gp = c[j]
				}
			}
			switch c := gp.(type) {
			case *jsonObject:
				c.set(tokens[len(tokens)-2], repl)
			case []any:
				j, _ := arrayIndex(tokens[len(tokens)-2], len(c)-1)
				c[j] = repl
			}
		}
	}
	out, err := encodeOrderedJSON(root, doc)
	if err != nil {
		return nil, err
	}
	if usesCRLF(doc) {
		out = toCRLF(out)
	}
	return out, nil
}

// JSONSet returns the JSON document doc (JSONC tolerated, comments are not
// kept; name is for messages) with the value at the RFC 6901 pointer
// tokens (see registry.ParsePointer) set to the JSON value: an object
// member is added or replaced (a new one goes last), an array element
// replaced, and "-" or the array's length as the last token appends. No
// tokens replace the whole document. Every parent must exist: otherwise
// the error wraps [ErrAbsent]. The result keeps doc's indentation and line
// endings.
func JSONSet(name string, doc []byte, tokens []string, value []byte) ([]byte, error) {
	v, err := parseOrderedJSON("the value", value)
	if err != nil {
		return nil, fmt.Errorf("the value is not valid JSON: %w", err)
	}
	if len(tokens) == 0 {
		if len(doc) > MaxEditedJSON {
			return nil, fmt.Errorf("%s is %d bytes, more than the %d a migration edits", name, len(doc), MaxEditedJSON)
		}
		out, err := encodeOrderedJSON(v, doc)
		if err == nil && usesCRLF(doc) {
			out = toCRLF(out)
		}
		return out, err
	}
	return editJSON(name, doc, tokens, func(parent any, last string) (any, error) {
		switch p := parent.(type) {
		case *jsonObject:
			p.set(last, v)
			return nil, nil
		case []any:
			if last == "-" {
				return append(p, v), nil
			}
			i, ok := arrayIndex(last, len(p))
			if !ok {
				return nil, fmt.Errorf("%w: %s: index %s is past the end of the array (%d elements); use - to append", ErrAbsent, name, last, len(p))
			}
			if i == len(p) {
				return append(p, v), nil
			}
			p[i] = v
			return nil, nil
		}
		return nil, fmt.Errorf("%w: %s: the parent of %s is not an object or array", ErrAbsent, name, pointerText(tokens))
	})
}

// JSONDelete returns doc without the value at the pointer tokens (at
// least one); a missing value is an error wrapping [ErrAbsent]. See
// [JSONSet].
func JSONDelete(name string, doc []byte, tokens []string) ([]byte, error) {
	if len(tokens) == 0 {
		return nil, errors.New("the empty pointer names the whole document")
	}
	return editJSON(name, doc, tokens, func(parent any, last string) (any, error) {
		switch p := parent.(type) {
		case *jsonObject:
			if _, ok := p.get(last); !ok {
				return nil, fmt.Errorf("%w: %s has no %s", ErrAbsent, name, pointerText(tokens))
			}
			p.del(last)
			return nil, nil
		case []any:
			i, ok := arrayIndex(last, len(p)-1)
			if !ok || len(p) == 0 {
				return nil, fmt.Errorf("%w: %s has no %s", ErrAbsent, name, pointerText(tokens))
			}
			return append(p[:i:i], p[i+1:]...), nil
		}
		return nil, fmt.Errorf("%w: %s has no %s", ErrAbsent, name, pointerText(tokens))
	})
}

// RenameScript returns package.json pkg with the script from renamed to,
// in place, its command kept. A missing script wraps [ErrAbsent]; a
// script named to that is already there is an error too (nothing is
// overwritten).
func RenameScript(pkg []byte, from, to string) ([]byte, error) {
	root, err := parsePackageJSON(pkg)
	if err != nil {
		return nil, err
	}
	sv, _ := root.get("scripts")
	scripts, _ := sv.(*jsonObject)
	if scripts == nil {
		return nil, fmt.Errorf("%w: package.json has no scripts", ErrAbsent)
	}
	v, ok := scripts.get(from)
	if !ok {
		return nil, fmt.Errorf("%w: package.json has no script %q", ErrAbsent, from)
	}
	if _, ok := scripts.get(to); ok {
		return nil, fmt.Errorf("package.json already has a script %q; it was kept, and %q too", to, from)
	}
	i := scripts.index(from)
	scripts.del(from)
	scripts.insertAt(i, to, v)
	return encodePackageJSON(root, pkg)
}

// RemoveDependency returns package.json pkg without name in dependencies
// and devDependencies; when it is in neither, the error wraps
// [ErrAbsent].
func RemoveDependency(pkg []byte, name string) ([]byte, error) {
	root, err := parsePackageJSON(pkg)
	if err != nil {
		return nil, err
	}
	found := false
	for _, sec := range []string{"dependencies", "devDependencies"} {
		sv, _ := root.get(sec)
		if o, _ := sv.(*jsonObject); o != nil {
			if _, ok := o.get(name); ok {
				o.del(name)
				found = true
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("%w: package.json does not depend on %s", ErrAbsent, name)
	}
	return encodePackageJSON(root, pkg)
}
