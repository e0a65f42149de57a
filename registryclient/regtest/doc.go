// Package regtest checks a registry directory before it is published, as
// "jig registry test" does: the package passes the checks jig-server
// applies to an upload; it renders into throwaway projects for every
// language it supports, alone and inside every preset that lists it, and
// "jig check" finds those projects clean; an untouched project of the
// previous published version updates to it without conflicts; its version
// number covers its changes ([impact.Compare]); and, only when asked, its
// declared test commands pass in each project.
//
//	rep, err := regtest.Run(ctx, "registries/eslint", regtest.Options{Sources: sources})
//	if err == nil && rep.Failed() > 0 {
//		for _, c := range rep.Failures() { fmt.Println(c) }
//	}
//
// Nothing is written outside the throwaway directories, which are removed
// afterwards. Custom merge scripts and test commands are code from the
// registry: they run only with [Options.Run].
package regtest
