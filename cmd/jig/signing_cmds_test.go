package main_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
)

// Commands of the signing scripts. They write to a jig-server's disk
// storage directly, as a compromised server or a hand edit would, and
// sign with the real ssh-keygen (OpenSSH interop).

// splitID splits "@ns/path" into namespace and path.
func splitID(ts *testscript.TestScript, id string) (string, string) {
	ns, path, ok := strings.Cut(id, "/")
	if !ok || !strings.HasPrefix(ns, "@") {
		ts.Fatalf("%q is not @ns/path", id)
	}
	return ns, path
}

// storedIndex returns the digest index of ns/path@version: the one stored
// in storage, else the one $SERVER_URL computes, which is then stored so
// that every later server serves exactly these bytes.
func storedIndex(ts *testscript.TestScript, storage, ns, path, version string) []byte {
	p := filepath.Join(storage, filepath.FromSlash(layout.DigestIndex(ns, path, version)))
	if b, err := os.ReadFile(p); err == nil {
		return b
	}
	resp, err := http.Get(ts.Getenv("SERVER_URL") + "/registries/" + ns + "/" + path + "/" + version + "/digests")
	ts.Check(err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	ts.Check(err)
	if resp.StatusCode != http.StatusOK {
		ts.Fatalf("GET digests of %s/%s@%s: %s: %s", ns, path, version, resp.Status, b)
	}
	ts.Check(os.WriteFile(p, b, 0o644))
	return b
}

// writeSignatures signs index with each private key file by running
// ssh-keygen -Y sign -n jig-registry, and stores the signatures document
// of ns/path@version (no keys: an explicit unsigned document).
func writeSignatures(ts *testscript.TestScript, storage, ns, path, version string, index []byte, keys []string) {
	doc := wire.Signatures{Namespace: ns, Path: path, Version: version, Signatures: []wire.SignatureInfo{}}
	for _, k := range keys {
		key := ts.MkAbs(k)
		msg := filepath.Join(ts.MkAbs("."), ".sign-"+strings.ReplaceAll(path, "/", "-")+"-"+version)
		ts.Check(os.WriteFile(msg, index, 0o600))
		_ = os.Remove(msg + ".sig")
		out, err := exec.Command("ssh-keygen", "-Y", "sign", "-n", "jig-registry", "-f", key, msg).CombinedOutput()
		if err != nil {
			ts.Fatalf("ssh-keygen -Y sign: %v\n%s", err, out)
		}
		armored, err := os.ReadFile(msg + ".sig")
		ts.Check(err)
		pub, err := os.ReadFile(key + ".pub")
		ts.Check(err)
		fp, err := exec.Command("ssh-keygen", "-l", "-E", "sha256", "-f", key+".pub").Output()
		ts.Check(err)
		f := strings.Fields(string(pub))
		doc.Signatures = append(doc.Signatures, wire.SignatureInfo{Signature: string(armored), Key: f[0] + " " + f[1], Fingerprint: strings.Fields(string(fp))[1]})
		_ = os.Remove(msg)
		_ = os.Remove(msg + ".sig")
	}
	b, err := json.Marshal(doc)
	ts.Check(err)
	ts.Check(os.WriteFile(filepath.Join(storage, filepath.FromSlash(layout.Signatures(ns, path, version))), b, 0o644))
}

// sign-version storage @ns/path version [key...]: stores the version's
// digest index (as $SERVER_URL computes it) and its signatures by the
// given private keys, made with ssh-keygen -Y sign -n jig-registry.
// Without keys the version gets an empty signatures document.
func cmdSignVersion(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: sign-version storage @ns/path version [key...]")
	}
	storage := ts.MkAbs(args[0])
	ns, path := splitID(ts, args[1])
	index := storedIndex(ts, storage, ns, path, args[2])
	writeSignatures(ts, storage, ns, path, args[2], index, args[3:])
}

// tamper storage @ns/path version file [key...]: changes one byte of a
// stored file of the version and rewrites its stored digest index to
// match. With keys, the new index is signed again by them (a re-signed
// version); without, the old signatures stay (they no longer verify).
func cmdTamper(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 {
		ts.Fatalf("usage: tamper storage @ns/path version file [key...]")
	}
	storage := ts.MkAbs(args[0])
	ns, path := splitID(ts, args[1])
	version, file := args[2], args[3]
	index := storedIndex(ts, storage, ns, path, version)
	x, err := registry.ParseDigestIndex(index)
	ts.Check(err)
	fp := filepath.Join(storage, filepath.FromSlash(layout.VersionDir(ns, path, version)), filepath.FromSlash(file))
	b, err := os.ReadFile(fp)
	ts.Check(err)
	if len(b) == 0 {
		ts.Fatalf("%s is empty", file)
	}
	b[0] ^= 0x01
	ts.Check(os.WriteFile(fp, b, 0o644))
	sum := sha256.Sum256(b)
	x.Files[file] = registry.DigestPrefix + hex.EncodeToString(sum[:])
	index, err = x.Marshal()
	ts.Check(err)
	ts.Check(os.WriteFile(filepath.Join(storage, filepath.FromSlash(layout.DigestIndex(ns, path, version))), index, 0o644))
	if len(args) > 4 {
		writeSignatures(ts, storage, ns, path, version, index, args[4:])
	}
}

// rm-cached-signatures cache-dir: removes every cached signatures
// document's ref, as a hostile or damaged cache would.
func cmdRmCachedSignatures(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: rm-cached-signatures cache-dir")
	}
	refs := filepath.Join(ts.MkAbs(args[0]), "refs")
	entries, err := os.ReadDir(refs)
	ts.Check(err)
	n := 0
	for _, e := range entries {
		p := filepath.Join(refs, e.Name(), "signatures")
		if _, err := os.Stat(p); err == nil {
			ts.Check(os.RemoveAll(p))
			n++
		}
	}
	if n == 0 {
		ts.Fatalf("no cached signatures under %s", refs)
	}
}

// treehash dir out: writes one line per file under dir (path, mode and
// sha-256), so two trees compare with cmp: a refused command must leave
// the project byte-identical. A storage's state database (.jig/state) is
// left out: its audit log records the refusal.
func cmdTreeHash(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: treehash dir out")
	}
	root := ts.MkAbs(args[0])
	var lines []string
	ts.Check(filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == filepath.Join(".jig", "state") {
			return fs.SkipDir
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			lines = append(lines, fmt.Sprintf("%s/ %v", rel, fi.Mode()))
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		lines = append(lines, fmt.Sprintf("%s %v %x", rel, fi.Mode(), sum))
		return nil
	}))
	sort.Strings(lines)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}
