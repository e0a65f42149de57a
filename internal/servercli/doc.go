// Package servercli is the jig-server command line: it turns flags and
// environment variables (and a .env file in the working directory) into a
// [registryserver.Handler] on an [http.Server], and shuts it down
// gracefully when its context ends. cmd/jig-server only calls [Main].
package servercli
