package merge

// JSONKeys returns the JSON Pointer ([JSONPointer]) of every object key of
// the JSON document data (JSONC tolerated, as the json strategy reads it),
// in document order: "/compilerOptions", "/compilerOptions/strict", ...
// Keys inside arrays are not listed: arrays merge as sets, so their
// elements have no stable address. name labels errors (a document nested
// deeper than [registry.MaxJSONDepth], or one that is not JSON).
func JSONKeys(name string, data []byte) ([]string, error) {
	v, err := parseOrderedJSON(name, data)
	if err != nil {
		return nil, err
	}
	var out []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		o, ok := v.(*jsonObject)
		if !ok {
			return
		}
		for _, k := range o.keys {
			p := prefix + JSONPointer(k)
			out = append(out, p)
			walk(p, o.vals[k])
		}
	}
	walk("", v)
	return out, nil
}
