// Package disk is a [storage.Storage] on a local directory, laid out as the
// reference's storage directory, so a directory written by either tool is
// served by the other unchanged.
//
// Every key maps to a file below the root; keys never escape it, and
// symbolic links are followed only while they stay inside the root (the
// package uses [os.Root]). Writes go to a temporary file in the target's
// directory, are flushed with fsync and then renamed over the target, so
// readers see the old or the new content, never a part. [Storage.NewBatch]
// writes many keys the same way but opens each folder once, and flushes
// each folder once when the batch is synced rather than once per key.
// Temporary files are
// named ".jig-tmp-*"; they and the top-level ".jig" (locks, health probes)
// and ".tmp" (the reference's upload scratch space) folders are reserved:
// keys naming them are refused with [storage.ErrInvalidKey] and [Storage.List]
// skips them.
//
// ETags have the reference's format, "<mtime in ms, hex>-<size, hex>", so
// hand edits are noticed. [Storage.PutIf] holds an flock(2) lock while it
// checks and renames, which makes it safe between goroutines and between
// processes sharing the directory (on Unix; elsewhere between goroutines
// only), and makes sure a conditional update always changes the ETag.
//
// Because a key is a file, one key cannot also be a folder of other keys
// ("a/b" and "a/b/c" cannot both exist), unlike in an object store; the
// registry layout never needs that.
//
//	st, err := disk.New("./data")
//	if err != nil { … }
//	defer st.Close()
//	h, err := registryserver.New(registryserver.WithStorage(st))
package disk
