// Package wire is the vocabulary of the jig registry HTTP API, shared by the
// server (registryserver), the client (registryclient) and the jig CLI: the
// error codes, the JSON bodies of requests and responses, and the names of
// the upload form's fields. The shapes are those of the reference tool; a
// change here is a change of the protocol.
//
// Every error response is an [Error] body with a [Code]:
//
//	{"code": "VERSION_EXISTS", "message": "Registry @acme/ui@1.0.0 already exists"}
//
// A client matches on the code, never on the message. Each code is sent
// with one status, which [Code.Status] gives: the table in codes.go is
// the one place that pairs them, and docs/http-api.md's error table says the
// same (a test holds the two together).
//
// The package depends on the standard library only.
package wire
