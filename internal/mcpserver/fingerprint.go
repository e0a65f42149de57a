package mcpserver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient/apply"
)

// fingerprint is what each project file a plan depends on held, by target
// (slash-separated, relative to the project directory): [absent], or the
// sha-256 digest and permission bits of its bytes. Two fingerprints of the
// same targets are equal exactly when none of those files changed, was
// created, deleted or made executable.
type fingerprint map[string]string

// absent is the state of a target with no file.
const absent = "absent"

// alwaysFingerprinted are fingerprinted in every plan, whether the engine
// read them or not: what is installed and what package.json holds decide
// every plan.
var alwaysFingerprinted = []string{registry.ProjectFile, "package.json"}

// fileState formats a file's state for a fingerprint.
func fileState(digest string, mode fs.FileMode) string {
	return fmt.Sprintf("%s mode %04o", digest, mode.Perm())
}

// fingerprintOf is the fingerprint of the files a plan read, taken from the
// bytes the engine planned with (not read again, so a change made while
// the plan was computed shows at apply time).
func fingerprintOf(inputs []apply.Input) fingerprint {
	fp := make(fingerprint, len(inputs))
	for _, in := range inputs {
		if in.Exists {
			fp[in.Target] = fileState(in.Digest, in.Mode)
		} else {
			fp[in.Target] = absent
		}
	}
	return fp
}

// targets returns the fingerprinted targets, sorted.
func (fp fingerprint) targets() []string {
	return slices.Sorted(maps.Keys(fp))
}

// readFingerprint fingerprints targets as they are now in dir. Symbolic
// links are followed only while they stay inside dir; a file that cannot be
// read has a state that matches no recorded one. A missing dir (a project
// init has yet to create) holds no files.
func readFingerprint(dir string, targets []string) (fingerprint, error) {
	fp := make(fingerprint, len(targets))
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		for _, t := range targets {
			fp[t] = absent
		}
		return fp, nil
	}
	if err != nil {
		return nil, err
	}
	defer root.Close()
	for _, t := range targets {
		fp[t] = readState(root, t)
	}
	return fp, nil
}

// readState is the fingerprint state of one target below root.
func readState(root *os.Root, target string) string {
	f, _, err := safefile.OpenIn(root, target)
	if errors.Is(err, fs.ErrNotExist) {
		return absent
	}
	if errors.Is(err, safefile.ErrNotRegular) {
		return "not a regular file"
	}
	if err != nil {
		return "unreadable: " + err.Error()
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "unreadable: " + err.Error()
	}
	if !fi.Mode().IsRegular() {
		return "not a regular file"
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unreadable: " + err.Error()
	}
	return fileState("sha256:"+hex.EncodeToString(h.Sum(nil)), fi.Mode())
}

// changed returns, sorted, the targets of fp whose state in now differs
// (a target missing from now counts as changed).
func (fp fingerprint) changed(now fingerprint) []string {
	var out []string
	for _, t := range fp.targets() {
		if got, ok := now[t]; !ok || got != fp[t] {
			out = append(out, t)
		}
	}
	return out
}
