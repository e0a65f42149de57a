package servercli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryserver"
)

// maxLogKeyFile bounds the LOG_KEY file read.
const maxLogKeyFile = 4 << 10

// readLogKey reads the signer key of the LOG_KEY file path ("" for none).
func readLogKey(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := safefile.ReadFile(path, maxLogKeyFile)
	if err != nil {
		return "", fmt.Errorf("--log-key/LOG_KEY: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// readWitnesses reads the LOG_WITNESSES file: one witness verifier key a
// line, blank lines and # comments ignored.
func readWitnesses(path string) ([]string, error) {
	b, err := safefile.ReadFile(path, maxLogKeyFile*4)
	if err != nil {
		return nil, fmt.Errorf("--log-witnesses/LOG_WITNESSES: %w", err)
	}
	var out []string
	line := 0
	for l := range strings.Lines(string(b)) {
		line++
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if _, err := translog.NewCosignatureVerifier(l); err != nil {
			return nil, fmt.Errorf("--log-witnesses/LOG_WITNESSES %s:%d: %w", path, line, err)
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--log-witnesses/LOG_WITNESSES %s lists no witness; give one verifier key a line, as `jig log witness keygen` prints it", path)
	}
	return out, nil
}

// readVerifierArg returns the value of --log-verifier: the verifier line
// itself, or the content of the file FILE for "@FILE".
func readVerifierArg(v string) (string, error) {
	if !strings.HasPrefix(v, "@") {
		return strings.TrimSpace(v), nil
	}
	b, err := safefile.ReadFile(v[1:], maxLogKeyFile)
	if err != nil {
		return "", fmt.Errorf("--log-verifier %s: %w", v, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// logKeygenCmd is "jig-server log keygen <name> -o <file>".
type logKeygenCmd struct {
	Name string `arg:"" help:"The log's name, a host name such as registry.example.com: every checkpoint's origin line is <name>/@ns."`
	Out  string `name:"out" short:"o" required:"" placeholder:"FILE" help:"File to write the secret signer key to (created with mode 0600; an existing file is never overwritten). Point LOG_KEY at it."`
}

// Help is shown by "jig-server log keygen --help".
func (c *logKeygenCmd) Help() string {
	return `Prints the public verifier line: publish it beside your server's URL, and have clients trust it with
  jig trust log add @ns <verifier>
The server also serves it at GET /log/key.

Example:
  jig-server log keygen registry.example.com -o /etc/jig/log.key
  LOG_KEY=/etc/jig/log.key jig-server`
}

// Run makes the key, writes the secret half and prints the public one.
func (c *logKeygenCmd) Run(stdout io.Writer) error {
	skey, vkey, err := registryserver.GenerateLogKey(c.Name)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(c.Out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists; a log key is never overwritten (clients trust it). Choose another file with -o, or remove it first if you mean to rotate the key (see docs/server.md)", c.Out)
	}
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(f, skey); err != nil {
		f.Close()
		os.Remove(c.Out)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(c.Out)
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, vkey)
	return nil
}
