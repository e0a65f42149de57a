package core

import (
	"github.com/jigkit/jig/registryserver/state"

	"time"

	"github.com/jigkit/jig/registry/signing"

	"github.com/jigkit/jig/registryserver/storage"
	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"
)

// Core is what every feature of the server shares: the storage and what
// is remembered of it, the response writer's caches, the cache tiers, the
// request-body bounds, the logger and the clock. The router builds one
// and hands it to each feature.
type Core struct {
	// Schemas is the operator's schema (registryserver.WithSchemaDir or the storage's
	// schema/ folder).
	Schemas *SchemaState
	// SignersInForce returns the signer files in force: the same value
	// for as long as the same files are in force.
	SignersInForce func() SignerSet
	// Gate makes the access decisions.
	Gate
	Store storage.Storage
	Tiers Tiers
	Log   *zap.Logger
	Now   func() time.Time
	Cache *byteCache
	// RCache remembers what was read of stored objects (readcache.go).
	RCache *readCache
	// compressing deduplicates concurrent compressions of one body.
	compressing singleflight.Group
	// Digests caches the digest indexes of versions (Digests.go).
	Digests *digestIndexes
	// Uploads bounds the request bodies received (Uploads.go).
	Uploads *UploadGate
	// State is the state database (census, audit log).
	State state.Store
	// Auditor writes the audit log ([Core.Audit]).
	Auditor *Auditor
}

// Tiers are the max-age values of Cache-Control per kind of content: the
// router's CacheTiers, converted.
type Tiers struct {
	Mutable, Immutable, Discovery, Static time.Duration
}

// SignerSet is a set of signer files: the allowed signers of each
// namespace that requires signed versions (nil for the others). A nil
// set requires signatures nowhere.
type SignerSet interface {
	For(ns string) *signing.AllowedSigners
}
