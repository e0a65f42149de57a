package merge

import (
	"fmt"
	"regexp"
	"strings"
)

// Requirement is a PEP 508 requirement a registry declares for a Python
// project: a distribution name and a version specifier (">=0.110", "==1.2.*",
// "" for any version).
type Requirement struct {
	Name      string
	Specifier string
	// Dev: the requirement goes into [dependency-groups].dev.
	Dev bool
}

// pep508Name matches a distribution name (PEP 508) and pep508Spec a
// version specifier list without markers or extras.
var (
	pep508Name = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9._, -]+\])?$`)
	pep508Spec = regexp.MustCompile(`^\s*((~=|==|!=|<=|>=|<|>|===)\s*[A-Za-z0-9.*+!_-]+\s*)(,\s*(~=|==|!=|<=|>=|<|>|===)\s*[A-Za-z0-9.*+!_-]+\s*)*$`)
	pep503Sep  = regexp.MustCompile(`[-_.]+`)
)

// NormalizedName is a distribution name (or a requirement's leading
// name, "FastAPI[all]>=1") as PEP 503 compares them: "fastapi".
func NormalizedName(s string) string { return normalizedName(s) }

// RequirementEntry is the list entry [AddPyProjectRequirements] writes for
// a requirement: its name and specifier without spaces ("pytest>=8"); a
// specifier of "*" or "" means any version ("pytest").
func RequirementEntry(name, specifier string) string {
	if specifier == "*" {
		specifier = ""
	}
	return name + strings.ReplaceAll(specifier, " ", "")
}

// normalizedName is a distribution name as PEP 503 compares them.
func normalizedName(s string) string {
	if i := strings.IndexAny(s, "[ ;<>=!~@("); i >= 0 {
		s = s[:i]
	}
	return strings.ToLower(pep503Sep.ReplaceAllString(strings.TrimSpace(s), "-"))
}

// AddPyProjectRequirements adds requirements to a pyproject.toml
// (PEP 621): runtime ones to [project].dependencies, dev ones to
// [dependency-groups].dev (PEP 735, which uv installs). A name the list
// already has (compared as PEP 503 does) is left as the project wrote it.
// The rest of the file keeps its bytes. It returns the file and the
// requirements added; pyproject nil means a new file.
func AddPyProjectRequirements(pyproject []byte, deps, dev []Requirement) ([]byte, []Requirement, error) {
	for _, r := range append(append([]Requirement(nil), deps...), dev...) {
		if !pep508Name.MatchString(r.Name) {
			return nil, nil, fmt.Errorf("%q is not a Python distribution name (PEP 508: letters, digits, '.', '-', '_')", r.Name)
		}
		if r.Specifier != "" && r.Specifier != "*" && !pep508Spec.MatchString(r.Specifier) {
			return nil, nil, fmt.Errorf("%s: %q is not a version specifier (as in \">=1.2, <2\")", r.Name, r.Specifier)
		}
	}
	d, err := parseTOMLDoc(nil, pyproject)
	if err != nil {
		return nil, nil, fmt.Errorf("pyproject.toml is not TOML jig can edit")
	}
	doc := d.(*tomlDoc)
	merged := cloneJSON(doc.root).(*jsonObject)
	var added []Requirement
	add := func(path []string, reqs []Requirement, isDev bool) error {
		if len(reqs) == 0 {
			return nil
		}
		o := merged
		for _, k := range path[:len(path)-1] {
			v, ok := o.vals[k]
			if !ok {
				v = newJSONObject()
				o.set(k, v)
			}
			if o, ok = v.(*jsonObject); !ok {
				return fmt.Errorf("%s is not a table", strings.Join(path[:len(path)-1], "."))
			}
		}
		last := path[len(path)-1]
		list, _ := o.vals[last].([]any)
		if _, ok := o.vals[last]; ok && list == nil {
			return fmt.Errorf("%s is not an array", strings.Join(path, "."))
		}
		have := map[string]bool{}
		for _, e := range list {
			if s, ok := e.(string); ok {
				have[normalizedName(s)] = true
			}
		}
		for _, r := range reqs {
			n := normalizedName(r.Name)
			if have[n] {
				continue
			}
			have[n] = true
			spec := r.Specifier
			if spec == "*" {
				spec = ""
			}
			list = append(list, RequirementEntry(r.Name, spec))
			added = append(added, Requirement{Name: r.Name, Specifier: spec, Dev: isDev})
		}
		if list != nil {
			o.set(last, list)
		}
		return nil
	}
	if err := add([]string{"project", "dependencies"}, deps, false); err != nil {
		return nil, nil, err
	}
	if err := add([]string{"dependency-groups", "dev"}, dev, true); err != nil {
		return nil, nil, err
	}
	if len(added) == 0 {
		return pyproject, nil, nil
	}
	out, err := doc.realize(nil, doc, merged)
	if err != nil {
		return nil, nil, fmt.Errorf("pyproject.toml: the requirements could not be written into its layout; add %s by hand", added[0].Name)
	}
	return out, added, nil
}

// The lists of pyproject.toml that hold requirements.
var (
	pyDepsPath = []string{"project", "dependencies"}
	pyDevPath  = []string{"dependency-groups", "dev"}
)

// PyProjectRequirements reads the requirements of a pyproject.toml: each
// list entry of [project].dependencies (deps) and [dependency-groups].dev
// (dev) by its PEP 503 name, as written ("pytest>=8"). A missing list is
// empty.
func PyProjectRequirements(pyproject []byte) (deps, dev map[string]string, err error) {
	d, err := parseTOMLDoc(nil, pyproject)
	if err != nil {
		return nil, nil, fmt.Errorf("pyproject.toml is not TOML jig can read")
	}
	root := d.(*tomlDoc).root
	read := func(path []string) map[string]string {
		out := map[string]string{}
		v, _ := tomlLookup(root, path)
		list, _ := v.([]any)
		for _, e := range list {
			if s, ok := e.(string); ok {
				if n := normalizedName(s); n != "" {
					out[n] = s
				}
			}
		}
		return out
	}
	return read(pyDepsPath), read(pyDevPath), nil
}

// RequirementEdit changes one requirement of a pyproject.toml (see
// [EditPyProjectRequirements]).
type RequirementEdit struct {
	// Name is the distribution name, compared as PEP 503 does.
	Name string
	// Dev: the requirement is in [dependency-groups].dev.
	Dev bool
	// Entry is the list entry to write ("pytest>=9") in place of the one
	// of that name, or at the end; "" takes the entry out.
	Entry string
}

// EditPyProjectRequirements applies edits to the requirement lists of a
// pyproject.toml, keeping every other byte. A dev list the edits empty
// goes, and [dependency-groups] with it when nothing else is left in it:
// what [AddPyProjectRequirements] made is taken out again.
func EditPyProjectRequirements(pyproject []byte, edits []RequirementEdit) ([]byte, error) {
	if len(edits) == 0 {
		return pyproject, nil
	}
	d, err := parseTOMLDoc(nil, pyproject)
	if err != nil {
		return nil, fmt.Errorf("pyproject.toml is not TOML jig can edit")
	}
	doc := d.(*tomlDoc)
	merged := cloneJSON(doc.root).(*jsonObject)
	table := func(path []string, create bool) (*jsonObject, error) {
		o := merged
		for _, k := range path {
			v, ok := o.vals[k]
			if !ok {
				if !create {
					return nil, nil
				}
				v = newJSONObject()
				o.set(k, v)
			}
			if o, ok = v.(*jsonObject); !ok {
				return nil, fmt.Errorf("%s is not a table", strings.Join(path, "."))
			}
		}
		return o, nil
	}
	for _, e := range edits {
		path := pyDepsPath
		if e.Dev {
			path = pyDevPath
		}
		o, err := table(path[:1], e.Entry != "")
		if err != nil {
			return nil, err
		}
		if o == nil {
			continue
		}
		last := path[1]
		list, _ := o.vals[last].([]any)
		if _, ok := o.vals[last]; ok && list == nil {
			return nil, fmt.Errorf("%s is not an array", strings.Join(path, "."))
		}
		n, done := normalizedName(e.Name), false
		out := make([]any, 0, len(list)+1)
		for _, item := range list {
			if s, ok := item.(string); ok && normalizedName(s) == n {
				if e.Entry != "" && !done {
					out = append(out, e.Entry)
				}
				done = true
				continue
			}
			out = append(out, item)
		}
		if e.Entry != "" && !done {
			out = append(out, e.Entry)
		}
		switch {
		case len(out) == 0 && e.Dev:
			o.del(last)
			if len(o.keys) == 0 {
				merged.del(path[0])
			}
		case len(out) > 0 || list != nil:
			o.set(last, out)
		}
	}
	b, err := doc.realize(nil, doc, merged)
	if err != nil {
		return nil, fmt.Errorf("pyproject.toml: its requirements could not be changed within its layout; edit them by hand")
	}
	return b, nil
}
