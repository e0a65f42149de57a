// Package clientip works out the client address of a request for rate
// limiting and logs, following X-Forwarded-For only as far as the operator
// trusts it.
//
// The rule, given the number of trusted proxy hops:
//
//   - hops 0 (the default, TRUST_PROXY=false): the connection's remote
//     address; X-Forwarded-For is ignored.
//   - hops N > 0 (TRUST_PROXY=N): the N-th entry of X-Forwarded-For counted
//     from the right (N=1 is the entry appended by the proxy that connected
//     to us). With fewer than N entries, the left-most entry.
//   - hops [TrustAll] (TRUST_PROXY=true): every hop is trusted, so the
//     client is the left-most entry (the first address the first proxy
//     saw). Clients can choose that value freely; use it only when the
//     proxy in front overwrites X-Forwarded-For rather than appending.
//
// Several X-Forwarded-For header lines are read as one comma-separated list
// in order. Entries are IPv4 or IPv6 addresses, optionally bracketed and with
// a port ("[2001:db8::1]:443", "192.0.2.1:80"); they are normalised
// (IPv4-mapped IPv6 becomes IPv4, IPv6 is lowercased and compressed, zones
// are dropped) so one client has one key. If any entry that the rule has to
// read (from the right-most to the chosen one) is not an address, is empty,
// or the list has more than [MaxEntries] entries, the header is treated as
// malformed and the connection address is used: a malformed header never
// picks an address of the client's choosing.
package clientip
