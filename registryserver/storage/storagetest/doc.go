// Package storagetest is the conformance suite every
// [storage.Storage] backend passes: memory, disk and S3 alike.
//
// A backend's test calls [Run] with a constructor that returns a fresh,
// empty store for each sub-test (for a shared bucket: a store with a unique
// key prefix):
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Storage {
//			st, err := disk.New(t.TempDir())
//			if err != nil {
//				t.Fatal(err)
//			}
//			return st
//		})
//	}
//
// The suite checks the semantics documented on [storage.Storage] and its
// optional capabilities: the not-found and invalid-key sentinels,
// overwrite, large objects, sorted prefix listing, that concurrent writers
// never expose a partial object, that exactly one of several racing
// create-only writers wins, that compare-and-swap updates lose nothing,
// that a batch of writes ([storage.NewBatch], the backend's own or the
// fallback to Put) stores every key it is given from several goroutines,
// and that a cancelled context stops every operation.
package storagetest
