package webui

import (
	"path"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// The web catalog highlights the languages registries carry, with lexers
// of its own built on chroma's core. chroma's lexers package registers
// its 279 languages when the program starts (it reads 2.5 MB of embedded
// XML and keeps 2.7 MB of heap in every jig-server, highlighting or not);
// these rules compile on the first page that needs them.
//
// A rule set must consume every character of any input (the last rules
// of each state are catch-alls), no pattern nests quantifiers, and a
// pattern that may fail after scanning ahead (an unclosed string, link or
// "${") scans at most a few hundred characters, so the work stays linear
// in the file's size whatever it holds. Long lines of "[", "a(", "${" or
// `\"` were quadratic in a first version; they are seeds of FuzzHighlight
// and inputs of BenchmarkHighlightHostile, which reports the time per
// byte.

// lexerFor returns the lexer for a file name (a path's base name is
// used), or nil when the catalog knows no language for it.
func lexerFor(name string) chroma.Lexer {
	if lang := langFor(name); lang != "" {
		return catalogLexers()[lang]
	}
	return nil
}

// langFor returns the language of a file name (a path's base name is
// used), a key of [catalogLexers], or "" when the catalog knows none.
func langFor(name string) string {
	base := strings.ToLower(path.Base(name))
	if lang, ok := langByName[base]; ok {
		return lang
	}
	// Dockerfile.prod, Containerfile.dev: the base name says the language
	// before the extension does.
	if stem, _, ok := strings.Cut(base, "."); ok && (stem == "dockerfile" || stem == "containerfile") {
		return "dockerfile"
	}
	ext := path.Ext(base)
	if ext == "" || ext == base {
		return ""
	}
	return langByExt[ext]
}

// langByExt and langByName pick a language by extension, or by the whole
// (lower-case) name for files known by name.
var (
	langByExt = map[string]string{
		".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
		".ts": "javascript", ".mts": "javascript", ".cts": "javascript", ".tsx": "javascript",
		".json": "json", ".jsonc": "json", ".json5": "json", ".webmanifest": "json",
		".yml": "yaml", ".yaml": "yaml",
		".css": "css", ".scss": "css", ".less": "css",
		".sh": "shell", ".bash": "shell", ".zsh": "shell",
		".md": "markdown", ".markdown": "markdown", ".mdx": "markdown",
		".html": "html", ".htm": "html", ".xml": "html", ".svg": "html", ".vue": "html",
		".dockerfile": "dockerfile", ".containerfile": "dockerfile", ".mk": "shell",
		".go": "go", ".py": "python", ".pyi": "python", ".pyw": "python",
		".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".rs": "rust",
		".tf": "hcl", ".tfvars": "hcl", ".hcl": "hcl", ".nomad": "hcl",
		".sql": "sql", ".proto": "protobuf",
		".toml": "toml", ".ini": "ini", ".cfg": "ini", ".conf": "ini", ".properties": "ini", ".env": "ini",
	}
	langByName = map[string]string{
		".babelrc": "json", ".eslintrc": "json", ".prettierrc": "json", ".swcrc": "json",
		".editorconfig": "ini", ".npmrc": "ini", ".yarnrc": "ini", ".env": "ini", ".gitattributes": "ignore",
		".gitignore": "ignore", ".npmignore": "ignore", ".prettierignore": "ignore",
		".dockerignore": "ignore", ".eslintignore": "ignore", "codeowners": "ignore",
		"dockerfile": "dockerfile", "containerfile": "dockerfile", "makefile": "shell", "gnumakefile": "shell",
		"go.mod": "gomod", "go.work": "gomod", "go.sum": "gomod",
		"cargo.lock": "toml", "pipfile": "toml", "poetry.lock": "toml", "uv.lock": "toml",
	}
)

// catalogLexers builds the lexers once, on first use; chroma compiles
// each one's rules on its first Tokenise.
var catalogLexers = sync.OnceValue(func() map[string]chroma.Lexer {
	lx := func(name string, rules func() chroma.Rules) chroma.Lexer {
		return chroma.MustNewLexer(&chroma.Config{Name: name, EnsureNL: true}, rules)
	}
	return map[string]chroma.Lexer{
		"javascript": lx("JavaScript", javascriptRules),
		"json":       lx("JSON", jsonRules),
		"yaml":       lx("YAML", yamlRules),
		"css":        lx("CSS", cssRules),
		"shell":      lx("Shell", shellRules),
		"dockerfile": lx("Dockerfile", dockerfileRules),
		"markdown":   lx("Markdown", markdownRules),
		"html":       lx("HTML", htmlRules),
		"ini":        lx("INI", iniRules),
		"ignore":     lx("Ignore file", ignoreRules),
		"go":         lx("Go", goRules),
		"gomod":      lx("go.mod", gomodRules),
		"python":     lx("Python", pythonRules),
		"java":       lx("Java", javaRules),
		"kotlin":     lx("Kotlin", kotlinRules),
		"rust":       lx("Rust", rustRules),
		"toml":       lx("TOML", tomlRules),
		"hcl":        lx("HCL", hclRules),
		"sql":        lx("SQL", sqlRules),
		"protobuf":   lx("Protocol Buffers", protobufRules),
	}
})

// Patterns shared by several languages.
const (
	reKey    = `"(?:\\.|[^"\\\n]){0,256}"` // a quoted key, followed by ':'
	reNumber = `0[xX][0-9a-fA-F_]+n?|0[bB][01_]+n?|0[oO][0-7_]+n?|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?n?`
	reIdent  = `[\p{L}_$][\p{L}\p{N}_$]*`
)

// tail ends every state: whitespace, then any other character as text,
// so no input yields chroma's error tokens.
func tail(rules ...chroma.Rule) []chroma.Rule {
	return append(rules,
		chroma.Rule{Pattern: `\s+`, Type: chroma.Whitespace},
		chroma.Rule{Pattern: `.`, Type: chroma.Text},
	)
}

// quoted is the state inside a one-line string opened by q: escapes, the
// closing quote, and a line's end, which ends an unclosed string.
func quoted(q string, typ chroma.TokenType) []chroma.Rule {
	return []chroma.Rule{
		{Pattern: `[^` + q + `\\\n]+`, Type: typ},
		{Pattern: `\\.`, Type: chroma.LiteralStringEscape},
		{Pattern: q, Type: typ, Mutator: chroma.Pop(1)},
		chroma.Default(chroma.Pop(1)),
	}
}

// strings are the rules that open quoted strings, and their states.
var (
	openDouble = chroma.Rule{Pattern: `"`, Type: chroma.LiteralStringDouble, Mutator: chroma.Push("dq")}
	openSingle = chroma.Rule{Pattern: `'`, Type: chroma.LiteralStringSingle, Mutator: chroma.Push("sq")}
)

// withStrings adds the states openDouble and openSingle push.
func withStrings(r chroma.Rules) chroma.Rules {
	r["dq"] = quoted(`"`, chroma.LiteralStringDouble)
	r["sq"] = quoted(`'`, chroma.LiteralStringSingle)
	return r
}

// blockComment is a state for "/* ... */" and "<!-- ... -->" bodies.
func blockComment(end string, typ chroma.TokenType) []chroma.Rule {
	first := end[:1]
	return []chroma.Rule{
		{Pattern: `[^` + first + `]+`, Type: typ},
		{Pattern: chroma.Words(``, ``, end), Type: typ, Mutator: chroma.Pop(1)},
		{Pattern: `.`, Type: typ},
	}
}

func javascriptRules() chroma.Rules {
	return withStrings(chroma.Rules{
		"root": tail(
			chroma.Rule{Pattern: `//[^\n]*`, Type: chroma.CommentSingle},
			chroma.Rule{Pattern: `/\*`, Type: chroma.CommentMultiline, Mutator: chroma.Push("comment")},
			openDouble,
			openSingle,
			chroma.Rule{Pattern: "`", Type: chroma.LiteralStringBacktick, Mutator: chroma.Push("template")},
			chroma.Rule{Pattern: reNumber, Type: chroma.LiteralNumber},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "const", "let", "var", "function", "class", "interface", "type", "enum",
				"namespace", "module", "declare", "abstract", "implements", "extends"), Type: chroma.KeywordDeclaration},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "import", "export", "from"), Type: chroma.KeywordNamespace},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "default", "return", "if", "else", "for",
				"while", "do", "switch", "case", "break", "continue", "new", "delete", "typeof", "instanceof", "in", "of",
				"try", "catch", "finally", "throw", "async", "await", "yield", "as", "satisfies", "keyof", "readonly",
				"public", "private", "protected", "static", "get", "set", "void", "debugger", "with"), Type: chroma.Keyword},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "true", "false", "null", "undefined", "NaN", "Infinity"), Type: chroma.KeywordConstant},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "string", "number", "boolean", "any", "unknown", "never", "object",
				"symbol", "bigint"), Type: chroma.KeywordType},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "this", "super"), Type: chroma.NameBuiltinPseudo},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "console", "process", "require", "module", "exports", "JSON", "Math",
				"Object", "Array", "Promise", "globalThis", "Symbol", "Error"), Type: chroma.NameBuiltin},
			chroma.Rule{Pattern: `@` + reIdent, Type: chroma.NameDecorator},
			chroma.Rule{Pattern: reIdent + `(?=\s*\()`, Type: chroma.NameFunction},
			chroma.Rule{Pattern: `#?` + reIdent, Type: chroma.NameOther},
			chroma.Rule{Pattern: `\.\.\.|=>|[-+*/%=&|^~<>!?:]+`, Type: chroma.Operator},
			chroma.Rule{Pattern: `[{}()\[\];,.]`, Type: chroma.Punctuation},
		),
		"comment": blockComment(`*/`, chroma.CommentMultiline),
		"template": {
			{Pattern: "[^`\\\\$]+", Type: chroma.LiteralStringBacktick},
			{Pattern: `\\.`, Type: chroma.LiteralStringEscape},
			{Pattern: `\$\{`, Type: chroma.LiteralStringInterpol, Mutator: chroma.Push("interpolation")},
			{Pattern: "`", Type: chroma.LiteralStringBacktick, Mutator: chroma.Pop(1)},
			{Pattern: `[\s\S]`, Type: chroma.LiteralStringBacktick},
		},
		"interpolation": tail(
			chroma.Rule{Pattern: `\}`, Type: chroma.LiteralStringInterpol, Mutator: chroma.Pop(1)},
			openDouble,
			openSingle,
			chroma.Rule{Pattern: reNumber, Type: chroma.LiteralNumber},
			chroma.Rule{Pattern: reIdent, Type: chroma.NameOther},
			chroma.Rule{Pattern: `[-+*/%=&|^~<>!?:.,()\[\]]+`, Type: chroma.Operator},
		),
	})
}

func jsonRules() chroma.Rules {
	return withStrings(chroma.Rules{
		"root": tail(
			chroma.Rule{Pattern: `//[^\n]*`, Type: chroma.CommentSingle},
			chroma.Rule{Pattern: `/\*`, Type: chroma.CommentMultiline, Mutator: chroma.Push("comment")},
			chroma.Rule{Pattern: reKey + `(?=\s*:)`, Type: chroma.NameTag},
			openDouble,
			chroma.Rule{Pattern: `-?` + reNumber, Type: chroma.LiteralNumber},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "true", "false", "null"), Type: chroma.KeywordConstant},
			chroma.Rule{Pattern: `[{}\[\],:]`, Type: chroma.Punctuation},
		),
		"comment": blockComment(`*/`, chroma.CommentMultiline),
	})
}

func yamlRules() chroma.Rules {
	return withStrings(chroma.Rules{
		"root": tail(
			chroma.Rule{Pattern: `#[^\n]*`, Type: chroma.CommentSingle},
			chroma.Rule{Pattern: `^(?:---|\.\.\.)(?=\s|$)`, Type: chroma.NameNamespace},
			chroma.Rule{Pattern: `[^\s#:'"\[\]{},][^\n#:]{0,256}?(?=:(?:\s|$))`, Type: chroma.NameTag},
			chroma.Rule{Pattern: reKey + `(?=\s*:(?:\s|$))`, Type: chroma.NameTag},
			openDouble,
			chroma.Rule{Pattern: `'`, Type: chroma.LiteralStringSingle, Mutator: chroma.Push("ysq")},
			chroma.Rule{Pattern: `[&*][\w-]+`, Type: chroma.NameVariable},
			chroma.Rule{Pattern: `![\w!/.-]*`, Type: chroma.KeywordType},
			chroma.Rule{Pattern: chroma.Words(``, `(?=\s*(?:$|#|,|\]|\}))`, "true", "false", "null", "yes", "no", "on", "off", "~"), Type: chroma.KeywordConstant},
			chroma.Rule{Pattern: `-?` + reNumber + `(?=\s*(?:$|#|,|\]|\}))`, Type: chroma.LiteralNumber},
			chroma.Rule{Pattern: `[-:?|>,\[\]{}]`, Type: chroma.Punctuation},
			chroma.Rule{Pattern: `[^\s#,\[\]{}]+`, Type: chroma.LiteralString},
		),
		"ysq": {
			{Pattern: `[^'\n]+|''`, Type: chroma.LiteralStringSingle},
			{Pattern: `'`, Type: chroma.LiteralStringSingle, Mutator: chroma.Pop(1)},
			chroma.Default(chroma.Pop(1)),
		},
	})
}

func cssRules() chroma.Rules {
	return withStrings(chroma.Rules{
		"root": tail(
			chroma.Rule{Pattern: `/\*`, Type: chroma.CommentMultiline, Mutator: chroma.Push("comment")},
			chroma.Rule{Pattern: `//[^\n]*`, Type: chroma.CommentSingle},
			openDouble,
			openSingle,
			chroma.Rule{Pattern: `@[\w-]+`, Type: chroma.Keyword},
			chroma.Rule{Pattern: `[$]` + `[\w-]+`, Type: chroma.NameVariable},
			chroma.Rule{Pattern: `--[\w-]+`, Type: chroma.NameVariable},
			chroma.Rule{Pattern: `[\w-]+(?=\s*:[^:])`, Type: chroma.NameProperty},
			chroma.Rule{Pattern: `#[0-9a-fA-F]{3,8}\b`, Type: chroma.LiteralNumberHex},
			chroma.Rule{Pattern: `-?(?:\d+(?:\.\d*)?|\.\d+)(?:%|[a-zA-Z]+)?`, Type: chroma.LiteralNumber},
			chroma.Rule{Pattern: `[.#][\w-]+`, Type: chroma.NameClass},
			chroma.Rule{Pattern: `::?[\w-]+`, Type: chroma.NameDecorator},
			chroma.Rule{Pattern: `!important\b`, Type: chroma.KeywordPseudo},
			chroma.Rule{Pattern: `[\w-]+(?=\()`, Type: chroma.NameFunction},
			chroma.Rule{Pattern: `[\w-]+`, Type: chroma.NameTag},
			chroma.Rule{Pattern: `[{}();,:>+~*=\[\]]`, Type: chroma.Punctuation},
		),
		"comment": blockComment(`*/`, chroma.CommentMultiline),
	})
}

// shellCommon are the rules the shell and a Dockerfile's commands share.
func shellCommon() []chroma.Rule {
	return []chroma.Rule{
		{Pattern: `(?:^|(?<=\s))#[^\n]*`, Type: chroma.CommentSingle},
		{Pattern: `"`, Type: chroma.LiteralStringDouble, Mutator: chroma.Push("shdq")},
		{Pattern: `'[^']*'`, Type: chroma.LiteralStringSingle},
		{Pattern: `\$\{[^}\n]{0,256}\}|\$\(|\$[\w@*#?$!-]`, Type: chroma.NameVariable},
		{Pattern: chroma.Words(`\b`, `\b`, "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done",
			"case", "esac", "in", "function", "return", "exit", "export", "local", "set", "unset", "shift", "source",
			"exec", "echo", "cd", "test"), Type: chroma.Keyword},
		{Pattern: `--?[\w-]+=?`, Type: chroma.NameAttribute},
		{Pattern: `&&|\|\||[|;&<>()]`, Type: chroma.Operator},
		{Pattern: `[^\s"'$&|;<>()#\\]+`, Type: chroma.Text},
		{Pattern: `\\[\s\S]`, Type: chroma.LiteralStringEscape},
	}
}

// withShellStrings adds the state inside the shell's double quotes, which
// may span lines and expand variables.
func withShellStrings(r chroma.Rules) chroma.Rules {
	r["shdq"] = []chroma.Rule{
		{Pattern: `[^"\\$]+`, Type: chroma.LiteralStringDouble},
		{Pattern: `\\[\s\S]`, Type: chroma.LiteralStringEscape},
		{Pattern: `\$\{[^}\n]{0,256}\}|\$[\w@*#?$!-]`, Type: chroma.NameVariable},
		{Pattern: `"`, Type: chroma.LiteralStringDouble, Mutator: chroma.Pop(1)},
		{Pattern: `[\s\S]`, Type: chroma.LiteralStringDouble},
	}
	return r
}

func shellRules() chroma.Rules {
	return withShellStrings(chroma.Rules{"root": tail(shellCommon()...)})
}

func dockerfileRules() chroma.Rules {
	return withShellStrings(chroma.Rules{
		"root": tail(append([]chroma.Rule{
			{Pattern: `(?i)^[ \t]*(?:FROM|RUN|CMD|LABEL|EXPOSE|ENV|ADD|COPY|ENTRYPOINT|VOLUME|USER|WORKDIR|ARG|ONBUILD|STOPSIGNAL|HEALTHCHECK|SHELL|MAINTAINER)\b`, Type: chroma.Keyword},
			{Pattern: `(?i)\bAS\b`, Type: chroma.Keyword},
		}, shellCommon()...)...),
	})
}

func markdownRules() chroma.Rules {
	return chroma.Rules{
		"root": tail(
			chroma.Rule{Pattern: "^(```|~~~)[^\\n]*\\n", Type: chroma.LiteralStringBacktick, Mutator: chroma.Push("fence")},
			chroma.Rule{Pattern: `^#{1,6}[ \t][^\n]*`, Type: chroma.GenericHeading},
			chroma.Rule{Pattern: `^[ \t]*(?:[-*+]|\d+[.)])(?=[ \t])`, Type: chroma.Keyword},
			chroma.Rule{Pattern: `^>[^\n]*`, Type: chroma.GenericEmph},
			chroma.Rule{Pattern: "`[^`\\n]{1,512}`", Type: chroma.LiteralStringBacktick},
			chroma.Rule{Pattern: `\*\*[^*\n]{1,512}\*\*|__[^_\n]{1,512}__`, Type: chroma.GenericStrong},
			chroma.Rule{Pattern: `\*[^*\n]{1,512}\*|\b_[^_\n]{1,512}_\b`, Type: chroma.GenericEmph},
			chroma.Rule{Pattern: `!?\[[^\]\n]{0,512}\]`, Type: chroma.NameTag},
			chroma.Rule{Pattern: `\([^)\s]{0,512}\)`, Type: chroma.NameAttribute},
			chroma.Rule{Pattern: "[^\\s`*_\\[\\]()!#>-]+", Type: chroma.Text},
		),
		"fence": {
			{Pattern: "^(```|~~~)[ \\t]*\\n", Type: chroma.LiteralStringBacktick, Mutator: chroma.Pop(1)},
			{Pattern: `[^\n]*\n`, Type: chroma.LiteralStringBacktick},
			{Pattern: `[\s\S]`, Type: chroma.LiteralStringBacktick},
		},
	}
}

func htmlRules() chroma.Rules {
	return chroma.Rules{
		"root": tail(
			chroma.Rule{Pattern: `<!--`, Type: chroma.Comment, Mutator: chroma.Push("comment")},
			chroma.Rule{Pattern: `<![^>]{0,512}>`, Type: chroma.CommentPreproc},
			chroma.Rule{Pattern: `<\?[^>]{0,512}\?>`, Type: chroma.CommentPreproc},
			chroma.Rule{Pattern: `</?[\w:.-]+`, Type: chroma.NameTag, Mutator: chroma.Push("tag")},
			chroma.Rule{Pattern: `&[#\w]+;`, Type: chroma.NameEntity},
			chroma.Rule{Pattern: `[^<&\s]+`, Type: chroma.Text},
		),
		"comment": blockComment(`-->`, chroma.Comment),
		"tag": tail(
			chroma.Rule{Pattern: `/?>`, Type: chroma.NameTag, Mutator: chroma.Pop(1)},
			chroma.Rule{Pattern: `[^\s=/>"']+`, Type: chroma.NameAttribute},
			chroma.Rule{Pattern: `=`, Type: chroma.Operator},
			chroma.Rule{Pattern: `"[^"]*"`, Type: chroma.LiteralStringDouble},
			chroma.Rule{Pattern: `'[^']*'`, Type: chroma.LiteralStringSingle},
		),
	}
}

func iniRules() chroma.Rules {
	return withStrings(chroma.Rules{
		"root": tail(
			chroma.Rule{Pattern: `^[ \t]*[#;][^\n]*`, Type: chroma.CommentSingle},
			chroma.Rule{Pattern: `^[ \t]*\[[^\]\n]{0,256}\]`, Type: chroma.Keyword},
			chroma.Rule{Pattern: `^[ \t]*(?:export[ \t]+)?[^\s=:#;\[][^=:\n]{0,256}?(?=[ \t]*[=:])`, Type: chroma.NameAttribute},
			chroma.Rule{Pattern: `[=:]`, Type: chroma.Operator},
			openDouble,
			openSingle,
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "true", "false"), Type: chroma.KeywordConstant},
			chroma.Rule{Pattern: `-?\d+(?:\.\d+)?\b`, Type: chroma.LiteralNumber},
			chroma.Rule{Pattern: `\$\{[^}\n]{0,256}\}`, Type: chroma.NameVariable},
			chroma.Rule{Pattern: `[^\s"'=:$]+`, Type: chroma.LiteralString},
		),
	})
}

func ignoreRules() chroma.Rules {
	return chroma.Rules{
		"root": tail(
			chroma.Rule{Pattern: `^#[^\n]*`, Type: chroma.CommentSingle},
			chroma.Rule{Pattern: `^!`, Type: chroma.Operator},
			chroma.Rule{Pattern: `[^\s]+`, Type: chroma.LiteralString},
		),
	}
}
