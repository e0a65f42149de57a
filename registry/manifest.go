package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jigkit/jig/registry/internal/keyorder"
	"github.com/jigkit/jig/registry/layout"
)

// Type is a registry's type, e.g. [TypeRuntime].
type Type string

// The registry types the schema allows. Their suggested priorities are 1 to 6
// in this order.
const (
	TypeRuntime   Type = "registry:runtime"
	TypeFramework Type = "registry:framework"
	TypeBuild     Type = "registry:build"
	TypeFeature   Type = "registry:feature"
	TypeTesting   Type = "registry:testing"
	TypeQuality   Type = "registry:quality"
)

// Types returns the registry types the schema allows, in the order of
// their suggested priorities.
func Types() []Type {
	return []Type{TypeRuntime, TypeFramework, TypeBuild, TypeFeature, TypeTesting, TypeQuality}
}

// typeFolders maps a registry type to its storage folder.
var typeFolders = map[Type]string{
	TypeRuntime:   "runtimes",
	TypeFramework: "frameworks",
	TypeBuild:     "build",
	TypeFeature:   "features",
	TypeTesting:   "testing",
	TypeQuality:   "quality",
}

// FileType is the type of a file object, e.g. [FileConfig]. Only [FileAsset]
// changes behaviour: asset files are binary, copied byte for byte.
type FileType string

// The file types the schema allows.
const (
	FileEntry  FileType = "registry:entry"
	FileConfig FileType = "registry:config"
	FileLib    FileType = "registry:lib"
	FileTest   FileType = "registry:test"
	FileDocs   FileType = "registry:docs"
	FileScript FileType = "registry:script"
	FileAsset  FileType = "registry:asset"
)

// MergeStrategy is a file's explicit merge strategy: either
// {"type":"builtin","strategy":"json"} or {"type":"custom","script":"merge.js"}.
type MergeStrategy struct {
	Type     string   `json:"type"`               // "builtin" or "custom"
	Strategy Strategy `json:"strategy,omitempty"` // for builtin
	Script   string   `json:"script,omitempty"`   // for custom: a file path in the package
}

// File is one file a registry writes into a project.
type File struct {
	// Target is the path relative to the project root. Required.
	Target string `json:"target"`
	// Type is the file's role; only [FileAsset] changes behaviour.
	Type FileType `json:"type"`
	// Path is the template file inside the registry package, served at
	// .../<version>/files/<path>.
	Path string `json:"path,omitempty"`
	// Content is inline text; it wins over Path except for asset files.
	Content *string `json:"content,omitempty"`
	// Executable gives the written file mode 0755.
	Executable bool `json:"executable,omitempty"`
	// MergeStrategy overrides the strategy chosen from the target's name.
	MergeStrategy *MergeStrategy `json:"mergeStrategy,omitempty"`
}

// PackagePath returns the package file (Path, normalized) whose bytes f
// writes, and false when f reads none: its content is inline (Content
// wins over Path, except for an asset), or it names neither.
func (f File) PackagePath() (string, bool) {
	if f.Path == "" || (f.Content != nil && f.Type != FileAsset) {
		return "", false
	}
	return NormalizeFilePath(f.Path), true
}

// LanguageBlock holds what a registry adds only in one language.
type LanguageBlock struct {
	Dependencies    map[string]string `json:"dependencies,omitempty"`
	DevDependencies map[string]string `json:"devDependencies,omitempty"`
	Files           []File            `json:"files,omitempty"`
}

// Manifest is a registry item: the registry.json at the root of a registry
// package and the document the server returns for a registry.
type Manifest struct {
	Schema               string                     `json:"$schema,omitempty"`
	Name                 string                     `json:"name"`
	Namespace            string                     `json:"namespace"`
	Path                 string                     `json:"path,omitempty"`
	Type                 Type                       `json:"type"`
	Version              string                     `json:"version"`
	Priority             int                        `json:"priority"`
	Description          string                     `json:"description,omitempty"`
	Author               string                     `json:"author,omitempty"`
	License              string                     `json:"license,omitempty"`
	Repository           string                     `json:"repository,omitempty"`
	Homepage             string                     `json:"homepage,omitempty"`
	Changelog            string                     `json:"changelog,omitempty"` // this version's changes in Markdown, at most [MaxChangelog] bytes; "" for none
	Test                 []string                   `json:"test,omitempty"`      // shell commands "jig registry test --run" runs in each rendered project; nil for none
	Tags                 []string                   `json:"tags,omitempty"`
	Conflicts            []string                   `json:"conflicts,omitempty"`
	RegistryDependencies []string                   `json:"registryDependencies,omitempty"`
	Dependencies         map[string]string          `json:"dependencies,omitempty"`
	DevDependencies      map[string]string          `json:"devDependencies,omitempty"`
	Scripts              map[string]string          `json:"scripts,omitempty"`
	Files                []File                     `json:"files,omitempty"`
	Languages            map[Language]LanguageBlock `json:"languages,omitempty"`
	DefaultLanguage      Language                   `json:"defaultLanguage,omitempty"`
	// Variants are the registry's named variants ([VariantBlock]) by name
	// ([ValidVariant]), at most [MaxVariants]; nil for none.
	Variants map[string]VariantBlock `json:"variants,omitempty"`
	// DefaultVariant is the variant applied when an identifier names none;
	// "" (the default) is the top level alone.
	DefaultVariant string `json:"defaultVariant,omitempty"`
	// Ecosystem is the kind of project the registry builds ([Ecosystem]);
	// "" is node, the reference's behaviour.
	Ecosystem Ecosystem `json:"ecosystem,omitempty"`
	// Migrations are the steps "jig update" runs before its merge when it
	// moves a project past each listed version; see [Migration].
	Migrations []Migration `json:"migrations,omitempty"`
	// Readme is the catalog README: Markdown the web catalog shows on the
	// registry's page, at most [MaxReadme] bytes, never written into a
	// project; "" for none (the catalog then shows a README.md the
	// registry writes, if any). jig publish fills it from the package's
	// [CatalogReadmeFile].
	Readme string `json:"readme,omitempty"`

	// order holds the names of dependencies, devDependencies and scripts
	// (and of each language block's, under "languages.<lang>.<field>") in
	// the order the document listed them; see [Manifest.Names].
	order map[string][]string
}

// The fields of a manifest whose names [Manifest.Names] lists in document
// order.
const (
	FieldDependencies    = "dependencies"
	FieldDevDependencies = "devDependencies"
	FieldScripts         = "scripts"
)

var orderedFields = []string{FieldDependencies, FieldDevDependencies, FieldScripts}

// Names returns the names in field ([FieldDependencies],
// [FieldDevDependencies] or [FieldScripts]) in the order the registry.json
// document listed them, which is the order the reference writes them into a
// new package.json. Names the document did not list (a manifest built in
// code) follow, sorted. An unknown field gives nil.
func (m *Manifest) Names(field string) []string {
	var set map[string]string
	switch field {
	case FieldDependencies:
		set = m.Dependencies
	case FieldDevDependencies:
		set = m.DevDependencies
	case FieldScripts:
		set = m.Scripts
	default:
		return nil
	}
	return keyorder.InOrder(m.order[field], set)
}

// documentOrder returns the names of the ordered fields of the manifest
// document data, top level and per language block; nil when data does not
// parse (json.Unmarshal has said so already). Of a key written twice the
// last value counts, as for json.Unmarshal, and a name keeps the place
// where it first appears.
func documentOrder(data []byte) map[string][]string {
	var root map[string]json.RawMessage
	if json.Unmarshal(data, &root) != nil || root == nil {
		return nil
	}
	out := map[string][]string{}
	keysOf := func(prefix string, o map[string]json.RawMessage) {
		for _, f := range orderedFields {
			if keys, ok := objectKeys(o[f]); ok {
				out[prefix+f] = keys
			}
		}
	}
	keysOf("", root)
	for _, field := range []string{"languages", "variants"} {
		var blocks map[string]json.RawMessage
		if isObject(root[field]) && json.Unmarshal(root[field], &blocks) == nil {
			for l, raw := range blocks {
				var b map[string]json.RawMessage
				if isObject(raw) && json.Unmarshal(raw, &b) == nil {
					keysOf(field+"."+l+".", b)
				}
			}
		}
	}
	return out
}

// isObject reports whether the JSON value raw is an object.
func isObject(raw json.RawMessage) bool {
	return len(raw) > 0 && raw[0] == '{'
}

// objectKeys returns the keys of the JSON object raw in document order,
// each once (nil for {}); ok is false when raw is not an object.
func objectKeys(raw json.RawMessage) (keys []string, ok bool) {
	if !isObject(raw) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return nil, false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, _ := tok.(string)
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, false
		}
	}
	return keys, true
}

// ParseManifest decodes a registry.json document. It checks that the
// document is a JSON object with name, version and type; full validation is
// [ValidateManifest].
func ParseManifest(data []byte) (*Manifest, error) {
	if err := CheckJSONDepth(layout.ManifestFile, data); err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("registry.json is not valid JSON: %w", err)
	}
	m.order = documentOrder(data)
	var missing []string
	if m.Name == "" {
		missing = append(missing, "name")
	}
	if m.Version == "" {
		missing = append(missing, "version")
	}
	if m.Type == "" {
		missing = append(missing, "type")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("registry.json is missing required field(s): %s", strings.Join(missing, ", "))
	}
	return &m, nil
}

// StorageSegments returns the path segments under the namespace where the
// registry is stored: the explicit Path when set (its last segment must equal
// Name), else the type's folder and the name (registry:runtime → runtimes/<name>),
// else just the name.
func (m *Manifest) StorageSegments() ([]string, error) {
	if m.Path != "" {
		if !ValidPath(m.Path) {
			return nil, fmt.Errorf("path %q must be lowercase kebab-case segments joined by /", m.Path)
		}
		segs := strings.Split(m.Path, "/")
		if segs[len(segs)-1] != m.Name {
			return nil, fmt.Errorf("path %q must end with name %q", m.Path, m.Name)
		}
		return segs, nil
	}
	if !ValidSegment(m.Name) {
		return nil, fmt.Errorf("name %q must be lowercase kebab case", m.Name)
	}
	if f, ok := typeFolders[m.Type]; ok {
		return []string{f, m.Name}, nil
	}
	return []string{m.Name}, nil
}

// ID returns the version-pinned identifier of the manifest.
func (m *Manifest) ID() (ID, error) {
	segs, err := m.StorageSegments()
	if err != nil {
		return ID{}, err
	}
	if !ValidNamespace(m.Namespace) {
		return ID{}, fmt.Errorf("namespace %q is not a valid namespace (e.g. @main)", m.Namespace)
	}
	return ID{Namespace: m.Namespace, Path: strings.Join(segs, "/"), Version: m.Version}, nil
}

// ForLanguage returns a copy of the manifest with the languages[lang] block
// merged over the top level: dependencies and devDependencies are merged key
// by key, files are merged by target (same target replaced in place, new
// targets appended). The Languages field of the copy is nil.
func (m *Manifest) ForLanguage(lang Language) *Manifest {
	c := *m
	c.Languages = nil
	c.Dependencies = cloneMap(m.Dependencies)
	c.DevDependencies = cloneMap(m.DevDependencies)
	c.Files = append([]File(nil), m.Files...)
	blk, ok := m.Languages[lang]
	if !ok {
		return &c
	}
	return c.merged("languages."+string(lang)+".", blk)
}

// merged merges blk (a language block, or a variant's) over the copy m,
// which it changes and returns; prefix names the block's fields in
// m.order ("languages.ts.").
func (m *Manifest) merged(prefix string, blk LanguageBlock) *Manifest {
	c := m
	if m.order != nil {
		// The block's new names follow the top level's, as the reference's
		// deep merge lays them out.
		c.order = maps.Clone(m.order)
		for _, f := range []string{FieldDependencies, FieldDevDependencies} {
			names := slices.Clone(m.order[f])
			seen := make(map[string]bool, len(names))
			for _, k := range names {
				seen[k] = true
			}
			for _, k := range m.order[prefix+f] {
				if !seen[k] {
					seen[k] = true
					names = append(names, k)
				}
			}
			c.order[f] = names
		}
	}
	for k, v := range blk.Dependencies {
		if c.Dependencies == nil {
			c.Dependencies = map[string]string{}
		}
		c.Dependencies[k] = v
	}
	for k, v := range blk.DevDependencies {
		if c.DevDependencies == nil {
			c.DevDependencies = map[string]string{}
		}
		c.DevDependencies[k] = v
	}
	for _, f := range blk.Files {
		replaced := false
		for i := range c.Files {
			if c.Files[i].Target == f.Target {
				c.Files[i] = f
				replaced = true
				break
			}
		}
		if !replaced {
			c.Files = append(c.Files, f)
		}
	}
	return c
}

// HasLanguages reports whether the manifest has ts/js variants: a
// languages block or a defaultLanguage.
func (m *Manifest) HasLanguages() bool {
	return len(m.Languages) > 0 || m.DefaultLanguage != ""
}

// FilePaths returns every package file the manifest references: files[].path
// at the top level and in language blocks, and custom merge scripts, without
// duplicates, normalised (no leading "./").
func (m *Manifest) FilePaths() []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		p = NormalizeFilePath(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	walk := func(files []File) {
		for _, f := range files {
			add(f.Path)
			if f.MergeStrategy != nil && f.MergeStrategy.Type == "custom" {
				add(f.MergeStrategy.Script)
			}
		}
	}
	walk(m.Files)
	for _, l := range []Language{LangJS, LangTS} {
		if b, ok := m.Languages[l]; ok {
			walk(b.Files)
		}
	}
	for _, v := range m.VariantNames() {
		walk(m.Variants[v].Files)
	}
	return out
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
