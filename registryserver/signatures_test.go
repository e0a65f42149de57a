package registryserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/jigkit/jig/internal/pkgarchive"
	pt "github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"
	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func newSigner(t testing.TB) ssh.Signer { return testenv.NewSigner(t) }

// digestsOf computes the digest index jig publish signs for archive.
func digestsOf(t testing.TB, archive []byte) []byte {
	t.Helper()
	ix, c, err := pkgarchive.Inspect(archive, pkgarchive.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := ix.DigestIndex(c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := idx.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sign(t testing.TB, s ssh.Signer, index []byte) []byte {
	t.Helper()
	b, err := signing.Sign(s, index)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// postSigned uploads archive with the signature fields.
func postSigned(t *testing.T, h http.Handler, token string, archive []byte, sigs ...[]byte) apiReply {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, s := range sigs {
		if err := mw.WriteField(wire.FormSignature, string(s)); err != nil {
			t.Fatal(err)
		}
	}
	hdr := textproto.MIMEHeader{}
	hdr.Set("Content-Disposition", `form-data; name="file"; filename="pkg.tar.gz"`)
	hdr.Set("Content-Type", "application/gzip")
	w, err := mw.CreatePart(hdr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write(archive)
	_ = mw.WriteField(wire.FormChecksum, sha(archive))
	_ = mw.Close()
	return postBody(t, h, "/registries", token, mw.FormDataContentType(), &buf)
}

// signersDir writes files (name to content) into a new folder.
func signersDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPublishSignatures(t *testing.T) {
	t.Parallel()
	alice, mallory := newSigner(t), newSigner(t)
	alicePub := signing.FormatPublicKey(alice.PublicKey())
	v1 := pkg(regJSON("@gated", "1.0.0", ""))
	v2 := pkg(regJSON("@gated", "2.0.0", ""))
	open1 := pkg(regJSON("@public", "1.0.0", ""))
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

	for _, tc := range []struct {
		name    string
		signers string // @gated's signer file; "" for none
		token   string
		archive []byte
		sigs    func() [][]byte
		status  int
		code    wire.Code
		msg     string
	}{
		{name: "required, none", signers: "alice " + alicePub, archive: v1, sigs: func() [][]byte { return nil },
			status: 400, code: wire.CodeSignatureRequired, msg: "Namespace @gated requires signed versions"},
		{name: "required, untrusted key", signers: "alice " + alicePub, archive: v1,
			sigs:   func() [][]byte { return [][]byte{sign(t, mallory, digestsOf(t, v1))} },
			status: 403, code: wire.CodeSignatureInvalid, msg: "not listed"},
		{name: "replayed from another version", signers: "alice " + alicePub, archive: v1,
			sigs:   func() [][]byte { return [][]byte{sign(t, alice, digestsOf(t, v2))} },
			status: 403, code: wire.CodeSignatureInvalid, msg: "Signature 1 of @gated/features/ui-kit@1.0.0 is invalid"},
		{name: "replayed from another namespace", archive: v1,
			sigs:   func() [][]byte { return [][]byte{sign(t, alice, digestsOf(t, open1))} },
			status: 403, code: wire.CodeSignatureInvalid, msg: "does not match these digests"},
		{name: "key limited to other namespaces", signers: `alice namespaces="git,file" ` + alicePub, archive: v1,
			sigs:   func() [][]byte { return [][]byte{sign(t, alice, digestsOf(t, v1))} },
			status: 403, code: wire.CodeSignatureInvalid, msg: `only for namespaces "git,file"`},
		{name: "key expired", signers: `alice valid-before="20260101Z" ` + alicePub, archive: v1,
			sigs:   func() [][]byte { return [][]byte{sign(t, alice, digestsOf(t, v1))} },
			status: 403, code: wire.CodeSignatureInvalid, msg: "expired"},
		{name: "one good one forged", signers: "alice " + alicePub, archive: v1,
			sigs: func() [][]byte {
				return [][]byte{sign(t, alice, digestsOf(t, v1)), []byte("-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n")}
			},
			status: 403, code: wire.CodeSignatureInvalid, msg: "Signature 2"},
		{name: "garbage without signer file", archive: v1, sigs: func() [][]byte { return [][]byte{[]byte("hello")} },
			status: 403, code: wire.CodeSignatureInvalid, msg: "not an armored SSH signature"},
		{name: "huge field", archive: v1, sigs: func() [][]byte { return [][]byte{bytes.Repeat([]byte("A"), signing.MaxSignatureSize+1)} },
			status: 403, code: wire.CodeSignatureInvalid, msg: "larger than"},
		{name: "too many fields", signers: "alice " + alicePub, archive: v1,
			sigs: func() [][]byte {
				s := sign(t, alice, digestsOf(t, v1))
				out := make([][]byte, wire.MaxSignatures+1)
				for i := range out {
					out[i] = s
				}
				return out
			},
			status: 400, code: wire.CodeUploadFailed, msg: "Too many signature fields"},
		// The token is checked first: callers who may not publish there
		// learn nothing about the namespace's signing rules.
		{name: "no token", signers: "alice " + alicePub, token: "-", archive: v1, sigs: func() [][]byte { return nil },
			status: 401, code: wire.CodeUnauthorized},
		{name: "read-only token", signers: "alice " + alicePub, token: pubRead, archive: v1, sigs: func() [][]byte { return nil },
			status: 403, code: wire.CodeInsufficientPerms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mem := memory.New()
			var opts []registryserver.Option
			if tc.signers != "" {
				opts = append(opts, registryserver.WithSignersDir(signersDir(t, map[string]string{"gated.allowed_signers": tc.signers})))
			}
			opts = append(opts, registryserver.WithClock(func() time.Time { return now }))
			h := publishHandler(t, mem, opts...)
			token := tc.token
			switch token {
			case "":
				token = pubPublish
			case "-":
				token = ""
			}
			r := postSigned(t, h, token, tc.archive, tc.sigs()...)
			if r.status != tc.status || r.Code != string(tc.code) || !strings.Contains(r.Msg, tc.msg) {
				t.Fatalf("got %d %s %q, want %d %s mentioning %q", r.status, r.Code, r.Msg, tc.status, tc.code, tc.msg)
			}
			if keys, _ := mem.List(t.Context(), "@gated/"); len(keys) != 0 {
				t.Errorf("storage after a refused publish: got %q, want nothing", keys)
			}
			// A later good publish of the same version succeeds.
			if tc.token == "" && tc.signers != "" && !strings.Contains(tc.signers, "valid-before") && !strings.Contains(tc.signers, "namespaces") {
				if r := postSigned(t, h, pubPublish, v1, sign(t, alice, digestsOf(t, v1))); r.status != http.StatusCreated {
					t.Fatalf("good publish after the refusal: got %d %s", r.status, r.body)
				}
			}
		})
	}
}

func TestSignaturesRoute(t *testing.T) {
	t.Parallel()
	alice, bob := newSigner(t), newSigner(t)
	dir := signersDir(t, map[string]string{
		"gated.allowed_signers": "# team\r\nalice@example.com " + signing.FormatPublicKey(alice.PublicKey()) + "\r\n",
	})
	mem := memory.New()
	h := publishHandler(t, mem, registryserver.WithSignersDir(dir))
	v1 := pkg(regJSON("@gated", "1.0.0", ""))
	idx := digestsOf(t, v1)
	// alice (listed) and bob (valid, not listed) sign; bob's second
	// signature is stored once.
	r := postSigned(t, h, pubPublish, v1, sign(t, alice, idx), sign(t, bob, idx), sign(t, bob, idx))
	if r.status != http.StatusCreated {
		t.Fatalf("publish: got %d %s", r.status, r.body)
	}
	status, body := get(t, h, "/registries/@gated/features/ui-kit/1.0.0/signatures", pubRead)
	if status != http.StatusOK {
		t.Fatalf("signatures: got %d %s", status, body)
	}
	var doc wire.Signatures
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Namespace != "@gated" || doc.Path != "features/ui-kit" || doc.Version != "1.0.0" || len(doc.Signatures) != 2 {
		t.Fatalf("got %s", body)
	}
	if got := doc.Signatures[0]; got.Principal != "alice@example.com" || got.Fingerprint != signing.Fingerprint(alice.PublicKey()) || got.Key != signing.FormatPublicKey(alice.PublicKey()) {
		t.Errorf("signature 1: got %+v", got)
	}
	if got := doc.Signatures[1]; got.Principal != "" || got.Fingerprint != signing.Fingerprint(bob.PublicKey()) {
		t.Errorf("signature 2: got %+v", got)
	}
	for _, s := range doc.Signatures {
		sig, err := signing.ParseSignature([]byte(s.Signature))
		if err != nil || sig.Verify(idx) != nil {
			t.Errorf("served signature does not verify over the digest index: %v", err)
		}
	}
	// The served digest index is what was signed.
	if status, served := get(t, h, "/registries/@gated/features/ui-kit/1.0.0/digests", pubRead); status != 200 || !bytes.Equal(served, idx) {
		t.Errorf("digests: got %d %s, want %s", status, served, idx)
	}

	// Cached as immutable, privately for a gated namespace.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "/registries/@gated/features/ui-kit/1.0.0/signatures", nil)
	req.Header.Set("Authorization", "Bearer "+pubRead)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if cc := rec.Header().Get("Cache-Control"); !strings.Contains(cc, "immutable") || !strings.Contains(cc, "private") {
		t.Errorf("Cache-Control: got %q", cc)
	}
	if rec.Header().Get("ETag") == "" {
		t.Error("no ETag")
	}

	// Gated = absent: without a token, the same answer as for a missing
	// namespace.
	s1, b1 := get(t, h, "/registries/@gated/features/ui-kit/1.0.0/signatures", "")
	s2, b2 := get(t, h, "/registries/@nope/features/ui-kit/1.0.0/signatures", "")
	if s1 != s2 || !bytes.Equal(b1, b2) {
		t.Errorf("gated vs missing: %d %s vs %d %s", s1, b1, s2, b2)
	}
	// A missing version is 404; the stored document is not a file.
	if status, _ := get(t, h, "/registries/@gated/features/ui-kit/9.0.0/signatures", pubRead); status != http.StatusNotFound {
		t.Errorf("missing version: got %d, want 404", status)
	}
	if status, _ := get(t, h, "/registries/@gated/features/ui-kit/1.0.0/files/"+layout.SignaturesFile, pubRead); status != http.StatusNotFound {
		t.Errorf("signatures as a file: got %d, want 404", status)
	}

	// An unsigned version (no signer file for @public) serves an empty
	// list.
	if r := post(t, h, pubAdmin, form{archive: pkg(regJSON("@public", "1.0.0", ""))}); r.status != http.StatusCreated {
		t.Fatalf("publish @public: got %d %s", r.status, r.body)
	}
	status, body = get(t, h, "/registries/@public/features/ui-kit/1.0.0/signatures", "")
	if want := `{"namespace":"@public","path":"features/ui-kit","version":"1.0.0","signatures":[]}`; status != 200 || string(body) != want {
		t.Errorf("unsigned: got %d %s, want %s", status, body, want)
	}
}

// A signatures document whose version has no registry.json (a publish
// interrupted before its commit point) is never served.
func TestSignaturesWithoutCommitAreInvisible(t *testing.T) {
	t.Parallel()
	mem := memory.New()
	h := publishHandler(t, mem)
	doc := `{"namespace":"@public","path":"features/ui-kit","version":"1.0.0","signatures":[]}`
	if err := mem.Put(t.Context(), layout.Signatures("@public", "features/ui-kit", "1.0.0"), strings.NewReader(doc), int64(len(doc))); err != nil {
		t.Fatal(err)
	}
	if status, body := get(t, h, "/registries/@public/features/ui-kit/1.0.0/signatures", ""); status != http.StatusNotFound {
		t.Errorf("got %d %s, want 404", status, body)
	}
}

// TestSignaturesTooLarge (issue 36 item 4): a stored signatures document
// over what the server sends, or over what it reads at all (8 MiB), is
// 413 PAYLOAD_TOO_LARGE naming the limit, not a 500.
func TestSignaturesTooLarge(t *testing.T) {
	t.Parallel()
	for _, size := range []int{2 << 20, 9 << 20} {
		mem := memory.New()
		h := publishHandler(t, mem)
		if r := postSigned(t, h, pubPublish, pkg(regJSON("@gated", "1.0.0", ""))); r.status != http.StatusCreated {
			t.Fatalf("publish: got %d %s", r.status, r.body)
		}
		doc := `{"namespace":"@gated","path":"features/ui-kit","version":"1.0.0","signatures":[],"pad":"` + strings.Repeat("x", size) + `"}`
		if err := mem.Put(t.Context(), layout.Signatures("@gated", "features/ui-kit", "1.0.0"), strings.NewReader(doc), int64(len(doc))); err != nil {
			t.Fatal(err)
		}
		status, body := get(t, h, "/registries/@gated/features/ui-kit/1.0.0/signatures", pubRead)
		if status != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), `"code":"PAYLOAD_TOO_LARGE"`) || !strings.Contains(string(body), " bytes this server sends") {
			t.Errorf("%d bytes: got %d %.200s, want 413 PAYLOAD_TOO_LARGE naming the limit", len(doc), status, body)
		}
	}
}

// A package may not declare the names the digest index and signatures are
// stored under, however it spells them: another letter case reaches the
// same file on a case-insensitive storage, where a forged signatures
// document could name a signer who never signed. (File paths are ASCII,
// so Unicode case folds are refused as paths already.)
func TestPublishRefusesReservedSignaturesName(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		layout.SignaturesFile,
		"./" + layout.SignaturesFile,
		".JIG-SIGNATURES.JSON",
		".Jig-Signatures.json",
		".JIG-DIGESTS.json",
	} {
		h := publishHandler(t, memory.New())
		manifest := `{"name":"ui-kit","namespace":"@gated","type":"registry:feature","version":"1.0.0","priority":4,
	  "files":[{"target":"a","type":"registry:lib","path":"templates/a.txt"},{"target":"x","type":"registry:lib","path":"` + name + `"}]}`
		archive := pkg(manifest, pt.File("./"+strings.TrimPrefix(name, "./"), "{}"))
		r := post(t, h, pubPublish, form{archive: archive})
		if r.status != http.StatusBadRequest || r.Code != string(wire.CodeUnsafeFile) {
			t.Errorf("%s: got %d %s %s, want 400 UNSAFE_FILE", name, r.status, r.Code, r.Msg)
		}
	}
}

func TestLoadSigners(t *testing.T) {
	t.Parallel()
	pub := signing.FormatPublicKey(newSigner(t).PublicKey())
	t.Run("files", func(t *testing.T) {
		t.Parallel()
		dir := signersDir(t, map[string]string{
			"main.allowed_signers":    "alice " + pub + "\r\n",
			"team.allowed_signers":    "# nobody yet\n",
			"README":                  "ignored",
			".hidden.allowed_signers": "ignored",
		})
		if err := os.Symlink(filepath.Join(dir, "main.allowed_signers"), filepath.Join(dir, "linked.allowed_signers")); err != nil {
			t.Fatal(err)
		}
		s, err := registryserver.LoadSigners(dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range s.Files() {
			got = append(got, fmt.Sprintf("%s:%d", f.Namespace, len(f.Signers.Entries())))
		}
		if want := "@linked:1 @main:1 @team:0"; strings.Join(got, " ") != want {
			t.Errorf("got %s, want %s", strings.Join(got, " "), want)
		}
		if s.For("@other") != nil || s.For("@main") == nil {
			t.Error("For: wrong namespaces")
		}
	})
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"bad name", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "Main.allowed_signers"), "")
		}, `"@Main" is not a namespace`},
		{"bad line", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "main.allowed_signers"), "alice cert-authority "+pub)
		}, "line 1: cert-authority is not supported"},
		{"huge", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "main.allowed_signers"), strings.Repeat("#", signing.MaxAllowedSignersSize+1))
		}, "larger than"},
		{"dangling link", func(t *testing.T, dir string) {
			if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "main.allowed_signers")); err != nil {
				t.Fatal(err)
			}
		}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tc.setup(t, dir)
			_, err := registryserver.LoadSigners(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error mentioning %q", err, tc.want)
			}
			if _, err := registryserver.New(registryserver.WithSignersDir(dir)); err == nil {
				t.Error("New with the bad folder: got nil error")
			}
		})
	}
	if _, err := registryserver.New(registryserver.WithSignersDir(filepath.Join(t.TempDir(), "missing"))); err == nil {
		t.Error("New with a missing folder: got nil error")
	}
}

// SetSigners while uploads run: each upload sees one set or the other
// (the race detector checks the handover).
func TestSetSignersConcurrent(t *testing.T) {
	t.Parallel()
	alice := newSigner(t)
	required, err := registryserver.LoadSigners(signersDir(t, map[string]string{"gated.allowed_signers": "alice " + signing.FormatPublicKey(alice.PublicKey())}))
	if err != nil {
		t.Fatal(err)
	}
	h := publishHandler(t, memory.New())
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 50 {
			if i%2 == 0 {
				h.SetSigners(required)
			} else {
				h.SetSigners(nil)
			}
		}
	})
	for i := range 8 {
		wg.Go(func() {
			v := pkg(regJSON("@gated", fmt.Sprintf("1.0.%d", i), ""))
			r := postSigned(t, h, pubPublish, v)
			if r.status != http.StatusCreated && r.Code != string(wire.CodeSignatureRequired) {
				t.Errorf("got %d %s", r.status, r.body)
			}
		})
	}
	wg.Wait()
	if h.Signers() != nil && h.Signers() != required {
		t.Error("Signers: got a set that was never given")
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The web catalog shows who signed the version a page shows: the
// principal when the signer file names the key, else its fingerprint, or
// "unsigned".
func TestWebCatalogShowsSigners(t *testing.T) {
	t.Parallel()
	alice, bob := newSigner(t), newSigner(t)
	dir := signersDir(t, map[string]string{"gated.allowed_signers": "alice@example.com " + signing.FormatPublicKey(alice.PublicKey())})
	h := publishHandler(t, memory.New(), registryserver.WithSignersDir(dir), registryserver.WithWebCatalog("/"))
	g1 := pkg(regJSON("@gated", "1.0.0", ""))
	if r := postSigned(t, h, pubPublish, g1, sign(t, alice, digestsOf(t, g1))); r.status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.status, r.body)
	}
	p1, p2 := pkg(regJSON("@public", "1.0.0", "")), pkg(regJSON("@public", "2.0.0", ""))
	if r := postSigned(t, h, pubAdmin, p1, sign(t, bob, digestsOf(t, p1))); r.status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.status, r.body)
	}
	if r := postSigned(t, h, pubAdmin, p2); r.status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.status, r.body)
	}
	cookie := signIn(t, h, "/", pubRead)
	for _, tc := range []struct{ path, want string }{
		{"/-/r/@gated/features/ui-kit/1.0.0", `<dd class="signers">alice@example.com <code>` + signing.Fingerprint(alice.PublicKey()) + `</code></dd>`},
		{"/-/r/@public/features/ui-kit/1.0.0", `<dd class="signers"><code>` + signing.Fingerprint(bob.PublicKey()) + `</code></dd>`},
		{"/-/r/@public/features/ui-kit/2.0.0", `<dd class="signers">unsigned</dd>`},
	} {
		resp, body := page(t, h, http.MethodGet, tc.path, cookie, nil, nil)
		// html/template writes "+" (in base64 fingerprints) as "&#43;".
		tc.want = strings.ReplaceAll(tc.want, "+", "&#43;")
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, tc.want) {
			t.Errorf("%s: got %d, want %s in:\n%s", tc.path, resp.StatusCode, tc.want, body)
		}
	}
}
