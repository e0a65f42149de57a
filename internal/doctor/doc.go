// Package doctor runs jig's diagnostic checks: the environment (node and
// its version against package.json engines.node, the project's package
// manager, git), the project (jig.json valid, installed registries) and
// every configured registry source (/health). The three categories run
// concurrently; remote probes run in parallel. [Run] never fails: every
// problem is a [Result] with a level (info, warning, error).
package doctor
