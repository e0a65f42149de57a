// Package webui is jig-server's web catalog: server-rendered pages
// (html/template, embedded CSS and JavaScript, no CDN, no build step) to
// browse namespaces, types, tags, the recently published and most used
// registries, search registries, read a registry's description, README,
// dated versions, files (highlighted on the server with chroma, as CSS
// classes) and dependencies, compare two versions (the unified diff jig
// diff prints, and the changelog in between), and list presets.
//
// It reads through a [Catalog], which registryserver implements with the
// same access check as its read routes, so a page never shows what the
// visitor's token may not read, and content that is gated for the visitor
// gets the same 404 page as content that does not exist.
//
// Signing in stores the token in an HttpOnly, SameSite=Strict cookie
// (Secure under TLS); the POST forms also check the Origin header. Pages
// send a strict Content-Security-Policy: scripts and styles only from the
// catalog's own static files, no inline script or style. Every page works
// without JavaScript; the script adds search as you type and copy buttons.
//
// Mount it with registryserver.WithWebCatalog.
package webui
