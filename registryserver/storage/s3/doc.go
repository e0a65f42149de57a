// Package s3 is a [storage.Storage] on an S3-compatible bucket (AWS S3,
// Cloudflare R2, MinIO, versitygw), built on minio-go.
//
// Keys are laid out as on disk (see [storage]), below an optional prefix,
// so a storage directory synced into a bucket is served as is. ETags and
// sizes come from the objects. Every write is a single PUT, so readers see
// an object whole or not at all; content of unknown length is spooled
// first. [Storage.Stat] is one HEAD request and [Storage.Get] one GET.
//
// [Storage.PutIf] uses the server's conditional writes: If-None-Match: *
// to create a key only if it is missing (two replicas publishing the same
// version: one wins, one gets [storage.ErrPrecondition]) and If-Match:
// <etag> to replace a versions list only if nobody changed it. It first
// probes once that the server really refuses a conflicting write; see
// [ConditionalMode] for servers without conditional writes.
//
// The conformance suite (storagetest.Run) runs against versitygw 1.8.0
// (posix backend, metadata in extended attributes), which honours both
// conditional headers; scripts/ci/start-s3.sh starts it. versitygw's
// --sidecar metadata mode is not safe for If-Match updates: it shows a new
// ETag before the new content, so compare-and-swap updates can be lost.
//
// This package is kept out of registryserver's imports so embedders that do
// not use S3 do not link minio-go; only the jig-server command imports it.
//
//	st, err := s3.New(ctx, s3.Config{
//		Endpoint:        "https://<account>.r2.cloudflarestorage.com",
//		Region:          "auto",
//		Bucket:          "registry",
//		AccessKeyID:     os.Getenv("S3_ACCESS_KEY_ID"),
//		SecretAccessKey: os.Getenv("S3_SECRET_ACCESS_KEY"),
//	})
package s3
