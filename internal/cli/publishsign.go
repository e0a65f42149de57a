package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
)

// publishSigning are jig publish's signing flags.
type publishSigning struct {
	SignKey      string   `name:"sign-key" env:"JIG_SIGNING_KEY" placeholder:"KEY" help:"SSH private key that signs the version's digest index (namespace jig-registry), as git signs commits; an encrypted key or a .pub file is used through ssh-agent."`
	Signature    []string `name:"signature" sep:"none" placeholder:"FILE" help:"An SSH signature made elsewhere over what --print-digests prints (ssh-keygen -Y sign -n jig-registry -f <key> digests), uploaded with the version. Repeatable."`
	PrintDigests bool     `name:"print-digests" help:"Print the version's digest index (the exact bytes the server will serve at .../<version>/digests, what a signature signs); sign and upload nothing."`
}

// Validate refuses flag combinations that cannot mean anything.
func (s *publishSigning) Validate() error {
	// --sign-key may come from JIG_SIGNING_KEY: --print-digests ignores it.
	if s.PrintDigests && len(s.Signature) > 0 {
		return errors.New("--print-digests uploads nothing, so it takes no --signature: print the digests, sign them, then run jig publish <dir> --signature <file>")
	}
	if n := len(s.Signature); n+min(len(s.SignKey), 1) > wire.MaxSignatures {
		return fmt.Errorf("%d signatures: a version takes at most %d", n, wire.MaxSignatures)
	}
	return nil
}

// printDigests writes the digest index of pkg to stdout, byte for byte
// (no newline is added: the bytes are what is signed).
func (s *publishSigning) printDigests(app *App, pkg *registryclient.Package) error {
	if pkg.Preset != nil {
		return errors.New("--print-digests: presets have no digest index; publish a registry directory or .tar.gz")
	}
	_, err := app.Out.stdout.Write(pkg.Digests)
	return err
}

// sign adds the signatures the flags ask for to pkg, each checked against
// its digest index before anything is uploaded.
func (s *publishSigning) sign(ctx context.Context, app *App, pkg *registryclient.Package) error {
	if s.SignKey == "" && len(s.Signature) == 0 {
		return nil
	}
	if pkg.Preset != nil {
		// A JIG_SIGNING_KEY a pipeline sets for its registries does not
		// stop it publishing a preset.
		if len(s.Signature) == 0 && s.SignKey == app.Getenv("JIG_SIGNING_KEY") {
			return nil
		}
		return errors.New("presets are not signed: --sign-key and --signature apply to registries")
	}
	for _, f := range s.Signature {
		data, err := safefile.ReadFile(f, signing.MaxSignatureSize)
		if err != nil {
			return fmt.Errorf("--signature: %w", err)
		}
		sig, err := signing.ParseSignature(data)
		if err == nil {
			err = sig.Verify(pkg.Digests)
		}
		if err != nil {
			return fmt.Errorf("--signature %s: %w; it must sign exactly what `jig publish --print-digests` prints for %s", f, err, pkg.ID())
		}
		pkg.Signatures = append(pkg.Signatures, sig.Armored)
		app.Out.Infof("Signature %s: key %s", f, sig.Fingerprint)
	}
	if s.SignKey != "" {
		signer, err := signing.LoadSigner(ctx, s.SignKey)
		if err != nil {
			return fmt.Errorf("--sign-key: %w", err)
		}
		armored, err := signing.Sign(signer, pkg.Digests)
		if err != nil {
			return fmt.Errorf("--sign-key: %w", err)
		}
		pkg.Signatures = append(pkg.Signatures, armored)
		app.Out.Infof("Signed %s with key %s", pkg.ID(), signing.Fingerprint(signer.PublicKey()))
	}
	return nil
}

// signingHint says how to sign pkg for a namespace that requires it.
func signingHint(pkg *registryclient.Package) string {
	if pkg == nil || pkg.Manifest == nil {
		return ""
	}
	return fmt.Sprintf("Sign with a key the server's signer file for %s lists: jig publish <dir> --sign-key ~/.ssh/id_ed25519, or sign the output of jig publish <dir> --print-digests with ssh-keygen -Y sign -n %s -f <key> and pass it with --signature <file>.", pkg.Namespace(), signing.Namespace)
}

// signedBy fetches who signed version of id, for jig info; nil (with a
// warning) when the server cannot say.
func signedBy(ctx context.Context, app *App, src *registryclient.Sources, id registry.ID, version string) *wire.Signatures {
	sigs, err := src.Signatures(ctx, id, version)
	if err != nil {
		app.Out.Warnf("Could not read the signatures of %s@%s: %v", id.Key(), version, err)
		return nil
	}
	return sigs
}

// printSignedBy writes who signed the version, as the server reports it
// (jig verify checks the signatures against the project's trust policy).
func printSignedBy(o *Output, sigs *wire.Signatures) {
	if sigs == nil {
		return
	}
	if len(sigs.Signatures) == 0 {
		o.Printf("Signed by:  unsigned\n")
		return
	}
	for i, s := range sigs.Signatures {
		label := "Signed by:  "
		if i > 0 {
			label = "            "
		}
		if s.Principal != "" {
			o.Printf("%s%s (%s)\n", label, s.Principal, s.Fingerprint)
		} else {
			o.Printf("%s%s\n", label, s.Fingerprint)
		}
	}
}
