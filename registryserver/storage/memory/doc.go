// Package memory is an in-process [storage.Storage] kept in a map, for
// tests and for embedders that load their registries at startup.
//
// Objects are copied on Put and on Get, so callers may reuse their
// buffers. ETags are derived from the content (a quoted SHA-256 prefix), so
// writing the same bytes again keeps the ETag. The store implements
// [storage.ConditionalPutter], [storage.DirLister] and [storage.Pinger].
//
//	st := memory.New()
//	err := st.Put(ctx, "@main/runtimes/node/versions.json", strings.NewReader(`{"versions":["1.0.0"]}`), -1)
package memory
