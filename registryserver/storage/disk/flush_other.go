//go:build !linux

package disk

import "os"

// startWriteback does nothing where sync_file_range(2) is missing: the
// batch's Sync flushes the whole content.
func startWriteback(*os.File) {}

// flushData makes f's content durable (fsync).
func flushData(f *os.File) error { return f.Sync() }
