package webui

import "github.com/alecthomas/chroma/v2"

// The languages of service templates beyond Node's: Go, Python, Java,
// Kotlin, Rust, TOML, HCL (Terraform), SQL and protobuf, under the rules
// of lexers.go: every state ends in catch-alls, no quantifier nests, and
// what may span lines (block comments, triple-quoted and raw strings,
// dollar-quoted SQL) is a state of its own that consumes as it goes, so
// no pattern scans ahead further than a few hundred characters.

// reIdentC is an identifier of the C family (no "$").
const reIdentC = `[\p{L}_][\p{L}\p{N}_]*`

// cComments returns the "//" and "/* */" comments of the C family
// followed by rules; the state "comment" must be added with blockComment.
func cComments(rules ...chroma.Rule) []chroma.Rule {
	return append([]chroma.Rule{
		{Pattern: `//[^\n]*`, Type: chroma.CommentSingle},
		{Pattern: `/\*`, Type: chroma.CommentMultiline, Mutator: chroma.Push("comment")},
	}, rules...)
}

// multiline is a state inside a string that may span lines and ends at
// end (`"""`, `"`), with backslash escapes when escapes is set.
func multiline(end string, escapes bool, typ chroma.TokenType) []chroma.Rule {
	first := end[:1]
	rules := []chroma.Rule{}
	if escapes {
		rules = append(rules,
			chroma.Rule{Pattern: `[^` + first + `\\]+`, Type: typ},
			chroma.Rule{Pattern: `\\[\s\S]`, Type: chroma.LiteralStringEscape})
	} else {
		rules = append(rules, chroma.Rule{Pattern: `[^` + first + `]+`, Type: typ})
	}
	return append(rules,
		chroma.Rule{Pattern: chroma.Words(``, ``, end), Type: typ, Mutator: chroma.Pop(1)},
		chroma.Rule{Pattern: `[\s\S]`, Type: typ},
	)
}

// cNumber is a number of the C family, with an optional type suffix
// (Go's "i", Java's "L", "f", "d", Rust's "u8", "_i64").
const cNumber = `(?:` + reNumber + `)(?:[iLlFfDd]|_?[iuf](?:8|16|32|64|128|size))?`

func goRules() chroma.Rules {
	return withStrings(chroma.Rules{
		"root": tail(cComments(
			chroma.Rule{Pattern: "`", Type: chroma.LiteralStringBacktick, Mutator: chroma.Push("raw")},
			openDouble,
			openSingle,
			chroma.Rule{Pattern: cNumber, Type: chroma.LiteralNumber},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "package", "import"), Type: chroma.KeywordNamespace},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "func", "type", "var", "const", "struct", "interface", "map", "chan"), Type: chroma.KeywordDeclaration},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "break", "case", "continue", "default", "defer", "else", "fallthrough",
				"for", "go", "goto", "if", "range", "return", "select", "switch"), Type: chroma.Keyword},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "true", "false", "nil", "iota"), Type: chroma.KeywordConstant},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "bool", "byte", "complex64", "complex128", "error", "float32", "float64",
				"int", "int8", "int16", "int32", "int64", "rune", "string", "uint", "uint8", "uint16", "uint32", "uint64",
				"uintptr", "any", "comparable"), Type: chroma.KeywordType},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "append", "cap", "clear", "close", "complex", "copy", "delete", "imag",
				"len", "make", "max", "min", "new", "panic", "print", "println", "real", "recover"), Type: chroma.NameBuiltin},
			chroma.Rule{Pattern: reIdentC + `(?=\()`, Type: chroma.NameFunction},
			chroma.Rule{Pattern: reIdentC, Type: chroma.NameOther},
			chroma.Rule{Pattern: `:=|<-|\.\.\.|[-+*/%=&|^<>!~]+`, Type: chroma.Operator},
			chroma.Rule{Pattern: `[{}()\[\];,.:]`, Type: chroma.Punctuation},
		)...),
		"comment": blockComment(`*/`, chroma.CommentMultiline),
		"raw":     multiline("`", false, chroma.LiteralStringBacktick),
	})
}

// gomodRules highlight go.mod, go.work and go.sum.
func gomodRules() chroma.Rules {
	return withStrings(chroma.Rules{
		"root": tail(
			chroma.Rule{Pattern: `//[^\n]*`, Type: chroma.CommentSingle},
			chroma.Rule{Pattern: `^[ \t]*(?:module|go|toolchain|require|replace|exclude|retract|godebug|tool|ignore|use)\b`, Type: chroma.Keyword},
			chroma.Rule{Pattern: `=>(?=\s)`, Type: chroma.Operator}, // replace a => b
			chroma.Rule{Pattern: `v\d+\.\d+\.\d+[\w.+-]*(?:/go\.mod)?`, Type: chroma.LiteralNumber},
			chroma.Rule{Pattern: `h1:[A-Za-z0-9+/=]+`, Type: chroma.LiteralStringOther},
			openDouble,
			chroma.Rule{Pattern: `[()]`, Type: chroma.Punctuation},
			chroma.Rule{Pattern: `[^\s()"/]+`, Type: chroma.NameNamespace},
		),
	})
}

func pythonRules() chroma.Rules {
	return withStrings(chroma.Rules{
		"root": tail(
			chroma.Rule{Pattern: `#[^\n]*`, Type: chroma.CommentSingle},
			chroma.Rule{Pattern: `(?i)[rbuf]{0,2}"""`, Type: chroma.LiteralStringDoc, Mutator: chroma.Push("tdq")},
			chroma.Rule{Pattern: `(?i)[rbuf]{0,2}'''`, Type: chroma.LiteralStringDoc, Mutator: chroma.Push("tsq")},
			chroma.Rule{Pattern: `(?i)[rbuf]{1,2}(?=["'])`, Type: chroma.LiteralStringAffix},
			openDouble,
			openSingle,
			chroma.Rule{Pattern: `@` + reIdentC + `(?:\.` + reIdentC + `)*`, Type: chroma.NameDecorator},
			chroma.Rule{Pattern: `(def|class)([ \t]+)(` + reIdentC + `)`, Type: chroma.ByGroups(chroma.KeywordDeclaration, chroma.Whitespace, chroma.NameFunction)},
			chroma.Rule{Pattern: `0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?`, Type: chroma.LiteralNumber},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "import", "from"), Type: chroma.KeywordNamespace},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "def", "class", "lambda", "global", "nonlocal"), Type: chroma.KeywordDeclaration},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "and", "as", "assert", "async", "await", "break", "continue", "del",
				"elif", "else", "except", "finally", "for", "if", "in", "is", "not", "or", "pass", "raise", "return",
				"try", "while", "with", "yield", "match", "case"), Type: chroma.Keyword},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "True", "False", "None"), Type: chroma.KeywordConstant},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "self", "cls"), Type: chroma.NameBuiltinPseudo},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "print", "len", "range", "int", "str", "dict", "list", "set", "tuple",
				"bool", "float", "bytes", "open", "isinstance", "super", "object", "Exception", "enumerate", "zip"), Type: chroma.NameBuiltin},
			chroma.Rule{Pattern: reIdentC + `(?=\()`, Type: chroma.NameFunction},
			chroma.Rule{Pattern: reIdentC, Type: chroma.NameOther},
			chroma.Rule{Pattern: `->|:=|\*\*|//|[-+*/%=&|^~<>!@]+`, Type: chroma.Operator},
			chroma.Rule{Pattern: `[{}()\[\];,.:]`, Type: chroma.Punctuation},
		),
		"tdq": multiline(`"""`, true, chroma.LiteralStringDoc),
		"tsq": multiline(`'''`, true, chroma.LiteralStringDoc),
	})
}

// jvmRules are the rules Java and Kotlin share, around their keywords.
func jvmRules(keywords, declarations, types, constants []string) chroma.Rules {
	return withStrings(chroma.Rules{
		"root": tail(cComments(
			chroma.Rule{Pattern: `"""`, Type: chroma.LiteralStringDoc, Mutator: chroma.Push("block")},
			openDouble,
			openSingle,
			chroma.Rule{Pattern: `@` + reIdentC + `(?:\.` + reIdentC + `)*`, Type: chroma.NameDecorator},
			chroma.Rule{Pattern: cNumber, Type: chroma.LiteralNumber},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "package", "import"), Type: chroma.KeywordNamespace},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, declarations...), Type: chroma.KeywordDeclaration},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, keywords...), Type: chroma.Keyword},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, types...), Type: chroma.KeywordType},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, constants...), Type: chroma.KeywordConstant},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "this", "super"), Type: chroma.NameBuiltinPseudo},
			chroma.Rule{Pattern: `\p{Lu}[\p{L}\p{N}_]*`, Type: chroma.NameClass},
			chroma.Rule{Pattern: reIdentC + `(?=\()`, Type: chroma.NameFunction},
			chroma.Rule{Pattern: reIdentC, Type: chroma.NameOther},
			chroma.Rule{Pattern: `->|::|\?\.|\?:|!!|\.\.|[-+*/%=&|^~<>!?:]+`, Type: chroma.Operator},
			chroma.Rule{Pattern: `[{}()\[\];,.]`, Type: chroma.Punctuation},
		)...),
		"comment": blockComment(`*/`, chroma.CommentMultiline),
		"block":   multiline(`"""`, true, chroma.LiteralStringDoc),
	})
}

func javaRules() chroma.Rules {
	return jvmRules(
		[]string{"abstract", "assert", "break", "case", "catch", "continue", "default", "do", "else", "extends", "final",
			"finally", "for", "if", "implements", "instanceof", "native", "new", "private", "protected", "public",
			"return", "static", "strictfp", "switch", "synchronized", "throw", "throws", "transient", "try",
			"volatile", "while", "yield", "sealed", "permits", "non-sealed"},
		[]string{"class", "interface", "enum", "record", "var"},
		[]string{"boolean", "byte", "char", "double", "float", "int", "long", "short", "void"},
		[]string{"true", "false", "null"},
	)
}

func kotlinRules() chroma.Rules {
	return jvmRules(
		[]string{"as", "break", "by", "catch", "continue", "do", "else", "finally", "for", "if", "in", "is", "return",
			"throw", "try", "when", "while", "where", "private", "protected", "public", "internal", "open", "override",
			"abstract", "final", "sealed", "data", "inline", "suspend", "lateinit", "companion", "init", "get", "set",
			"operator", "infix", "reified", "vararg", "const", "annotation", "inner", "enum", "value"},
		[]string{"fun", "val", "var", "class", "interface", "object", "typealias", "constructor"},
		[]string{"Int", "Long", "Short", "Byte", "Double", "Float", "Boolean", "Char", "String", "Unit", "Any", "Nothing"},
		[]string{"true", "false", "null"},
	)
}

func rustRules() chroma.Rules {
	return chroma.Rules{
		"root": tail(cComments(
			// Raw strings: r"…", r#"…"#, r##"…"## (more hashes end at "##).
			chroma.Rule{Pattern: `b?r"`, Type: chroma.LiteralString, Mutator: chroma.Push("raw0")},
			chroma.Rule{Pattern: `b?r#"`, Type: chroma.LiteralString, Mutator: chroma.Push("raw1")},
			chroma.Rule{Pattern: `b?r##+"`, Type: chroma.LiteralString, Mutator: chroma.Push("raw2")},
			chroma.Rule{Pattern: `b?"`, Type: chroma.LiteralStringDouble, Mutator: chroma.Push("string")},
			chroma.Rule{Pattern: `b?'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\}|[^\n])|[^\\'\n])'`, Type: chroma.LiteralStringChar},
			chroma.Rule{Pattern: `'` + reIdentC, Type: chroma.NameAttribute}, // a lifetime
			chroma.Rule{Pattern: `#!?\[`, Type: chroma.CommentPreproc, Mutator: chroma.Push("attribute")},
			chroma.Rule{Pattern: cNumber, Type: chroma.LiteralNumber},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "use", "mod", "crate", "extern"), Type: chroma.KeywordNamespace},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "fn", "let", "struct", "enum", "trait", "impl", "type", "const", "static", "union"), Type: chroma.KeywordDeclaration},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "as", "async", "await", "break", "continue", "dyn", "else", "for", "if",
				"in", "loop", "match", "move", "mut", "pub", "ref", "return", "unsafe", "where", "while", "yield"), Type: chroma.Keyword},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "true", "false"), Type: chroma.KeywordConstant},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "self", "Self", "super"), Type: chroma.NameBuiltinPseudo},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64",
				"u128", "usize", "f32", "f64", "bool", "char", "str", "String", "Vec", "Option", "Result", "Box", "Some",
				"None", "Ok", "Err"), Type: chroma.KeywordType},
			chroma.Rule{Pattern: reIdentC + `!`, Type: chroma.NameFunctionMagic}, // a macro
			chroma.Rule{Pattern: reIdentC + `(?=\()`, Type: chroma.NameFunction},
			chroma.Rule{Pattern: reIdentC, Type: chroma.NameOther},
			chroma.Rule{Pattern: `->|=>|::|\.\.=?|[-+*/%=&|^~<>!?]+`, Type: chroma.Operator},
			chroma.Rule{Pattern: `[{}()\[\];,.:#$@]`, Type: chroma.Punctuation},
		)...),
		"comment": blockComment(`*/`, chroma.CommentMultiline),
		"string":  multiline(`"`, true, chroma.LiteralStringDouble),
		"raw0":    multiline(`"`, false, chroma.LiteralString),
		"raw1":    multiline(`"#`, false, chroma.LiteralString),
		"raw2":    multiline(`"##`, false, chroma.LiteralString),
		"attribute": {
			{Pattern: `[^\]\n"]+`, Type: chroma.CommentPreproc},
			{Pattern: `"(?:\\.|[^"\\\n]){0,256}"`, Type: chroma.LiteralStringDouble},
			{Pattern: `\]`, Type: chroma.CommentPreproc, Mutator: chroma.Pop(1)},
			{Pattern: `"`, Type: chroma.CommentPreproc},
			chroma.Default(chroma.Pop(1)),
		},
	}
}

func tomlRules() chroma.Rules {
	return withStrings(chroma.Rules{
		"root": tail(
			chroma.Rule{Pattern: `#[^\n]*`, Type: chroma.CommentSingle},
			chroma.Rule{Pattern: `^[ \t]*\[\[?[^\]\n]{0,256}\]\]?`, Type: chroma.Keyword},
			chroma.Rule{Pattern: `[A-Za-z0-9_-]{1,64}(?:[ \t]*\.[ \t]*[A-Za-z0-9_-]{1,64}){0,16}(?=[ \t]*=)`, Type: chroma.NameAttribute},
			chroma.Rule{Pattern: reKey + `(?=[ \t]*[=.])`, Type: chroma.NameAttribute},
			chroma.Rule{Pattern: `"""`, Type: chroma.LiteralStringDouble, Mutator: chroma.Push("tdq")},
			chroma.Rule{Pattern: `'''`, Type: chroma.LiteralStringSingle, Mutator: chroma.Push("tsq")},
			openDouble,
			chroma.Rule{Pattern: `'[^'\n]{0,512}'`, Type: chroma.LiteralStringSingle},
			chroma.Rule{Pattern: `\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:\d{2})?)?|\d{2}:\d{2}:\d{2}(?:\.\d+)?`, Type: chroma.LiteralDate},
			chroma.Rule{Pattern: `[+-]?(?:0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+|inf\b|nan\b|\d[\d_]*(?:\.[\d_]+)?(?:[eE][+-]?\d+)?)`, Type: chroma.LiteralNumber},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "true", "false"), Type: chroma.KeywordConstant},
			chroma.Rule{Pattern: `[\[\]{},=.]`, Type: chroma.Punctuation},
			chroma.Rule{Pattern: `[^\s#"'\[\]{},=.]+`, Type: chroma.Text},
		),
		"tdq": multiline(`"""`, true, chroma.LiteralStringDouble),
		"tsq": multiline(`'''`, false, chroma.LiteralStringSingle),
	})
}

// hclRules highlight HCL: Terraform, Nomad, Packer.
func hclRules() chroma.Rules {
	return chroma.Rules{
		"root": tail(append([]chroma.Rule{
			{Pattern: chroma.Words(``, `\b`, "resource", "data", "variable", "output", "locals", "module",
				"provider", "terraform", "moved", "import", "removed", "check", "backend", "required_providers",
				"dynamic", "lifecycle", "provisioner", "connection", "job", "group", "task", "source", "build"), Type: chroma.KeywordDeclaration},
			{Pattern: `[\p{L}_][\p{L}\p{N}_-]*(?=[ \t]*=[^=])`, Type: chroma.NameAttribute},
			{Pattern: `[{}]`, Type: chroma.Punctuation},
		}, hclCode()...)...),
		"comment": blockComment(`*/`, chroma.CommentMultiline),
		"string": {
			{Pattern: `[^"\\$%\n]+`, Type: chroma.LiteralStringDouble},
			{Pattern: `\\.`, Type: chroma.LiteralStringEscape},
			{Pattern: `[$%]\{`, Type: chroma.LiteralStringInterpol, Mutator: chroma.Push("interpolation")},
			{Pattern: `"`, Type: chroma.LiteralStringDouble, Mutator: chroma.Pop(1)},
			{Pattern: `[$%]`, Type: chroma.LiteralStringDouble},
			chroma.Default(chroma.Pop(1)),
		},
		"interpolation": tail(append([]chroma.Rule{
			{Pattern: `~?\}`, Type: chroma.LiteralStringInterpol, Mutator: chroma.Pop(1)},
			{Pattern: `\{`, Type: chroma.Punctuation, Mutator: chroma.Push("braces")},
		}, hclCode()...)...),
		"braces": tail(append([]chroma.Rule{
			{Pattern: `\}`, Type: chroma.Punctuation, Mutator: chroma.Pop(1)},
			{Pattern: `\{`, Type: chroma.Punctuation, Mutator: chroma.Push("braces")},
		}, hclCode()...)...),
	}
}

// hclCode are the rules of HCL expressions, at the top level and inside
// "${…}".
func hclCode() []chroma.Rule {
	return []chroma.Rule{
		{Pattern: `#[^\n]*|//[^\n]*`, Type: chroma.CommentSingle},
		{Pattern: `/\*`, Type: chroma.CommentMultiline, Mutator: chroma.Push("comment")},
		{Pattern: `<<-?[A-Za-z_][\w-]*`, Type: chroma.LiteralStringHeredoc},
		{Pattern: `"`, Type: chroma.LiteralStringDouble, Mutator: chroma.Push("string")},
		{Pattern: `-?` + reNumber, Type: chroma.LiteralNumber},
		{Pattern: chroma.Words(``, `\b`, "true", "false", "null"), Type: chroma.KeywordConstant},
		{Pattern: chroma.Words(``, `\b`, "for", "in", "if", "else", "endif", "endfor"), Type: chroma.Keyword},
		{Pattern: chroma.Words(``, `\b`, "var", "local", "module", "data", "each", "count", "path", "self", "terraform"), Type: chroma.NameBuiltin},
		{Pattern: `[\p{L}_][\p{L}\p{N}_-]*(?=\()`, Type: chroma.NameFunction},
		{Pattern: `[\p{L}_][\p{L}\p{N}_-]*`, Type: chroma.NameOther},
		{Pattern: `=>|\.\.\.|[-+*/%=&|!<>?:]+`, Type: chroma.Operator},
		{Pattern: `[()\[\],.]`, Type: chroma.Punctuation},
	}
}

func sqlRules() chroma.Rules {
	return chroma.Rules{
		"root": tail(
			chroma.Rule{Pattern: `--[^\n]*`, Type: chroma.CommentSingle},
			chroma.Rule{Pattern: `/\*`, Type: chroma.CommentMultiline, Mutator: chroma.Push("comment")},
			chroma.Rule{Pattern: `(?i)[eb]?'`, Type: chroma.LiteralStringSingle, Mutator: chroma.Push("string")},
			chroma.Rule{Pattern: `"[^"\n]{0,256}"|` + "`[^`\\n]{0,256}`", Type: chroma.NameVariable},
			chroma.Rule{Pattern: `\$(?:[A-Za-z_]\w{0,62})?\$`, Type: chroma.LiteralStringHeredoc, Mutator: chroma.Push("dollar")},
			chroma.Rule{Pattern: `\$\d+|[:@?][A-Za-z_]\w*`, Type: chroma.NameVariable},
			chroma.Rule{Pattern: `-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?`, Type: chroma.LiteralNumber},
			chroma.Rule{Pattern: `(?i)` + chroma.Words(`\b`, `\b`, "select", "from", "where", "insert", "into", "values", "update",
				"set", "delete", "create", "table", "index", "view", "drop", "alter", "add", "column", "primary", "key",
				"foreign", "references", "not", "null", "default", "unique", "constraint", "join", "inner", "left",
				"right", "outer", "full", "cross", "on", "using", "group", "by", "order", "having", "limit", "offset",
				"as", "and", "or", "in", "is", "like", "ilike", "between", "exists", "case", "when", "then", "else", "end",
				"distinct", "union", "all", "begin", "commit", "rollback", "transaction", "if", "returning", "with",
				"recursive", "grant", "revoke", "to", "cascade", "trigger", "function", "returns", "language",
				"sequence", "schema", "database", "check", "asc", "desc", "conflict", "do", "nothing", "extension",
				"type", "enum", "rename", "true", "false", "procedure", "declare", "return", "replace", "temporary",
				"temp", "materialized", "concurrently", "owner", "collate", "generated", "always", "identity"), Type: chroma.Keyword},
			chroma.Rule{Pattern: `(?i)` + chroma.Words(`\b`, `\b`, "int", "integer", "bigint", "smallint", "serial",
				"bigserial", "text", "varchar", "char", "character", "varying", "boolean", "bool", "date", "time",
				"timestamp", "timestamptz", "interval", "numeric", "decimal", "real", "double", "precision", "float",
				"uuid", "json", "jsonb", "bytea", "blob", "clob", "datetime", "tinyint", "mediumint"), Type: chroma.KeywordType},
			chroma.Rule{Pattern: `[\p{L}_][\p{L}\p{N}_$]*(?=\()`, Type: chroma.NameFunction},
			chroma.Rule{Pattern: `[\p{L}_][\p{L}\p{N}_$]*`, Type: chroma.NameOther},
			chroma.Rule{Pattern: `::|\|\||<>|[-+*/%=<>!~|&^]+`, Type: chroma.Operator},
			chroma.Rule{Pattern: `[()\[\];,.]`, Type: chroma.Punctuation},
		),
		"comment": blockComment(`*/`, chroma.CommentMultiline),
		// A string may span lines; '' is a quote inside it.
		"string": {
			{Pattern: `[^'\\]+|''`, Type: chroma.LiteralStringSingle},
			{Pattern: `\\[\s\S]`, Type: chroma.LiteralStringEscape},
			{Pattern: `'`, Type: chroma.LiteralStringSingle, Mutator: chroma.Pop(1)},
			{Pattern: `[\s\S]`, Type: chroma.LiteralStringSingle},
		},
		// A dollar-quoted body ($$ … $$, $fn$ … $fn$), as PostgreSQL
		// functions are written: any "$tag$" ends it.
		"dollar": {
			{Pattern: `[^$]+`, Type: chroma.LiteralStringHeredoc},
			{Pattern: `\$(?:[A-Za-z_]\w{0,62})?\$`, Type: chroma.LiteralStringHeredoc, Mutator: chroma.Pop(1)},
			{Pattern: `\$`, Type: chroma.LiteralStringHeredoc},
		},
	}
}

func protobufRules() chroma.Rules {
	return withStrings(chroma.Rules{
		"root": tail(cComments(
			openDouble,
			openSingle,
			chroma.Rule{Pattern: `(message|enum|service|extend)([ \t]+)(` + reIdentC + `)`, Type: chroma.ByGroups(chroma.KeywordDeclaration, chroma.Whitespace, chroma.NameClass)},
			chroma.Rule{Pattern: `(rpc)([ \t]+)(` + reIdentC + `)`, Type: chroma.ByGroups(chroma.KeywordDeclaration, chroma.Whitespace, chroma.NameFunction)},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "syntax", "edition", "package", "import", "option"), Type: chroma.KeywordNamespace},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "message", "enum", "service", "rpc", "returns", "stream", "oneof", "map",
				"reserved", "extensions", "extend", "optional", "required", "repeated", "weak", "public", "to", "max", "group"), Type: chroma.Keyword},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64",
				"fixed32", "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes"), Type: chroma.KeywordType},
			chroma.Rule{Pattern: chroma.Words(``, `\b`, "true", "false", "inf", "nan"), Type: chroma.KeywordConstant},
			chroma.Rule{Pattern: `-?` + reNumber, Type: chroma.LiteralNumber},
			chroma.Rule{Pattern: reIdentC + `(?:\.` + reIdentC + `)*`, Type: chroma.NameOther},
			chroma.Rule{Pattern: `[=<>]`, Type: chroma.Operator},
			chroma.Rule{Pattern: `[{}()\[\];,.:]`, Type: chroma.Punctuation},
		)...),
		"comment": blockComment(`*/`, chroma.CommentMultiline),
	})
}
