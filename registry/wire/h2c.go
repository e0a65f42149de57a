package wire

// HeaderH2C asks, and answers, whether a server also speaks HTTP/2 over
// plain TCP (h2c with prior knowledge, RFC 9113 section 3.3) on the
// listener a request reached.
//
// A jig client sends "Jig-H2c: 1" on its HTTP/1.1 requests to an http://
// server it reaches without a proxy, and names the header in Connection
// ("Connection: Jig-H2c"), so an HTTP intermediary, which could not pass
// h2c on, drops it. A server that accepts h2c on that listener answers
// "Jig-H2c: 1"; the client then sends its next requests to that host and
// port over one HTTP/2 connection, and back over HTTP/1.1 if that fails.
// Requests without the header (every other client, the reference's
// included) get the same responses as before, byte for byte.
const HeaderH2C = "Jig-H2c"
