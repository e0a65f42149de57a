// Package gitsafe holds what jig's git commands share so that git runs no
// program a repository or a configuration names.
package gitsafe

import "strings"

// NoFilters returns the "-c" options that turn off the filter drivers
// whose configuration keys are given ("filter.<name>.<variable>", as
// "git config --name-only --get-regexp '^filter\.'" lists them): their
// clean, smudge and process programs, and their required flag. A
// repository's .gitattributes may name any driver for any file, and git
// runs the clean filter even when it only writes the index (to re-read a
// file it cannot tell is unchanged). A name that a "-c" option cannot
// spell (it holds "=" or a line break) is returned in bad instead.
func NoFilters(keys []string) (opts, bad []string) {
	seen := map[string]bool{}
	for _, key := range keys {
		i := strings.LastIndex(key, ".")
		if !strings.HasPrefix(key, "filter.") || i <= len("filter.") {
			continue
		}
		name := key[len("filter."):i]
		if seen[name] {
			continue
		}
		seen[name] = true
		if strings.ContainsAny(name, "=\n") {
			bad = append(bad, name)
			continue
		}
		for _, v := range []string{"clean=", "smudge=", "process=", "required=false"} {
			opts = append(opts, "-c", "filter."+name+"."+v)
		}
	}
	return opts, bad
}
