package core

import (
	"path"
	"strings"
)

// mediaTypes maps file extensions to the Content-Type of registry files.
// The table is fixed (not the host's mime.types) so every server answers
// the same. Source files of languages browsers would execute are sent as
// text; files are also sent with a sandboxing Content-Security-Policy.
var mediaTypes = map[string]string{
	".json":   "application/json",
	".jsonc":  "application/json",
	".json5":  "application/json",
	".js":     "text/javascript; charset=utf-8",
	".mjs":    "text/javascript; charset=utf-8",
	".cjs":    "text/javascript; charset=utf-8",
	".jsx":    "text/javascript; charset=utf-8",
	".ts":     "text/plain; charset=utf-8",
	".mts":    "text/plain; charset=utf-8",
	".cts":    "text/plain; charset=utf-8",
	".tsx":    "text/plain; charset=utf-8",
	".vue":    "text/plain; charset=utf-8",
	".svelte": "text/plain; charset=utf-8",
	".astro":  "text/plain; charset=utf-8",
	".md":     "text/markdown; charset=utf-8",
	".mdx":    "text/markdown; charset=utf-8",
	".txt":    "text/plain; charset=utf-8",
	".env":    "text/plain; charset=utf-8",
	".yml":    "text/yaml; charset=utf-8",
	".yaml":   "text/yaml; charset=utf-8",
	".toml":   "application/toml",
	".ini":    "text/plain; charset=utf-8",
	".sh":     "text/x-shellscript; charset=utf-8",
	".css":    "text/css; charset=utf-8",
	".scss":   "text/plain; charset=utf-8",
	".less":   "text/plain; charset=utf-8",
	".html":   "text/html; charset=utf-8",
	".htm":    "text/html; charset=utf-8",
	".xml":    "application/xml",
	".svg":    "image/svg+xml",
	".csv":    "text/csv; charset=utf-8",
	".lock":   "text/plain; charset=utf-8",
	".png":    "image/png",
	".jpg":    "image/jpeg",
	".jpeg":   "image/jpeg",
	".gif":    "image/gif",
	".webp":   "image/webp",
	".avif":   "image/avif",
	".ico":    "image/x-icon",
	".woff":   "font/woff",
	".woff2":  "font/woff2",
	".ttf":    "font/ttf",
	".otf":    "font/otf",
	".pdf":    "application/pdf",
	".zip":    "application/zip",
	".gz":     "application/gzip",
	".tgz":    "application/gzip",
	".wasm":   "application/wasm",
}

// typeByName returns the media type for a file name, or "" when the
// extension is unknown. Dotfiles without another extension (.gitignore,
// .npmrc, .editorconfig) are plain text.
func typeByName(name string) string {
	base := path.Base(name)
	ext := strings.ToLower(path.Ext(base))
	if t, ok := mediaTypes[ext]; ok {
		return t
	}
	if strings.HasPrefix(base, ".") && strings.LastIndexByte(base, '.') == 0 {
		return "text/plain; charset=utf-8"
	}
	return ""
}
