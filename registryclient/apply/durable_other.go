//go:build !linux

package apply

// Elsewhere Apply syncs each temporary file as it writes it, and each
// directory it renamed into once after the renames.

// syncEachTemp is true: writeTemp syncs each temporary file itself, and
// syncBatch is only called for the directories after the renames.
const syncEachTemp = true

// syncBatch makes the entries of dirs durable, one fsync per directory.
func syncBatch(dirs []string) error {
	for _, dir := range dirs {
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	return nil
}
