package core

import "crypto/sha256"

// Caller is who sent a request, as far as access decisions go. The token
// itself is not kept, only its digest.
type Caller struct {
	Sum   *[sha256.Size]byte // nil: no token sent
	Admin bool
}
