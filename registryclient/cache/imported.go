package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/jigkit/jig/internal/safefile"
)

// importedDir is the folder of the imported marks, next to refs: a mark
// is a file named like the ref it marks, holding the bundle's name.
const importedDir = "imported"

// maxImportedMark bounds a mark file: a bundle's name.
const maxImportedMark = 4 << 10

// MarkImported records that the content of ref (a version's digest index
// ref) came from a bundle, not from its server; bundle names it for
// people (the file imported). The mark is durable before MarkImported
// returns (the file and its folders are fsynced), so a caller that sets
// ref only afterwards never leaves a bundle's content unmarked, whatever
// stops the process or the machine. Marks are kept until
// [Cache.ClearImported] or [Cache.Clean]; [Cache.Trim] never removes one.
func (c *Cache) MarkImported(ref, bundle string) error {
	p := c.markPath(ref)
	if p == "" {
		return fmt.Errorf("invalid cache ref %q", ref)
	}
	bundle = strings.ToValidUTF8(strings.ReplaceAll(bundle, "\n", " "), "?")
	if len(bundle) > maxImportedMark-1 {
		bundle = bundle[:maxImportedMark-1]
	}
	return c.writeDurable(p, []byte(bundle+"\n"))
}

// Imported returns the bundle that ref's content came from when ref is
// marked ([Cache.MarkImported]).
func (c *Cache) Imported(ref string) (bundle string, ok bool) {
	p := c.markPath(ref)
	if p == "" {
		return "", false
	}
	b, err := safefile.ReadFileNoFollow(p, maxImportedMark)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		// Unreadable or not a regular file: still marked, so that the
		// content is checked rather than trusted.
		return "(unreadable mark " + p + ")", true
	}
	return strings.TrimSuffix(string(b), "\n"), true
}

// ClearImported removes ref's mark: its content was found to be what its
// server publishes. Removing an absent mark is not an error.
func (c *Cache) ClearImported(ref string) error {
	p := c.markPath(ref)
	if p == "" {
		return fmt.Errorf("invalid cache ref %q", ref)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clearing a cache mark: %w", err)
	}
	return nil
}

func (c *Cache) markPath(ref string) string {
	if !ValidRef(ref) {
		return ""
	}
	return filepath.Join(c.dir, importedDir, filepath.FromSlash(ref))
}

// writeDurable writes data to p with writeAtomic (which syncs the file and
// p's folder), then makes durable the parent of each folder created for
// it.
func (c *Cache) writeDurable(p string, data []byte) error {
	var created []string
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == c.dir || filepath.Dir(d) == d {
			break
		}
		created = append(created, d)
	}
	if err := c.writeAtomic(p, data); err != nil {
		return err
	}
	for _, d := range created {
		d = filepath.Dir(d)
		if err := safefile.SyncDir(d); err != nil {
			return fmt.Errorf("writing to the cache: %w", err)
		}
	}
	return nil
}
