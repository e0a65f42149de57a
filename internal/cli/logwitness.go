package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// LogWitnessCmd groups "jig log witness keygen|cosign".
type LogWitnessCmd struct {
	Keygen LogWitnessKeygenCmd `cmd:"" help:"Make a witness key: the secret key file, and the verifier key servers and clients trust."`
	Cosign LogWitnessCosignCmd `cmd:"" help:"Check that a namespace's log extends the tree head this witness cosigned before, then cosign its checkpoint and give it to the server."`
}

// LogWitnessKeygenCmd is "jig log witness keygen <name> -o FILE".
type LogWitnessKeygenCmd struct {
	Name string `arg:"" help:"The witness's name, e.g. witness.example.com (no spaces or +): it names its signature lines."`
	Out  string `name:"out" short:"o" required:"" placeholder:"FILE" help:"File to write the secret key to (created with mode 0600; an existing file is never overwritten)."`
}

// Run makes the key, writes the secret half and prints the verifier key.
func (c *LogWitnessKeygenCmd) Run(app *App) error {
	skey, vkey, err := translog.GenerateCosignerKey(rand.Reader, c.Name)
	if err != nil {
		return err
	}
	if err := writeNew(c.Out, []byte(skey+"\n"), 0o600); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s exists; a witness key is never overwritten (servers and clients trust it). Choose another file with -o", c.Out)
		}
		os.Remove(c.Out)
		return err
	}
	app.Out.Printf("%s\n", vkey)
	return nil
}

// LogWitnessCosignCmd is "jig log witness cosign @ns --key FILE [--state FILE] [--json]".
type LogWitnessCosignCmd struct {
	Namespace string `arg:"" help:"Namespace whose log to witness, e.g. @company; its log key must be trusted (jig trust log add)."`
	Key       string `name:"key" required:"" placeholder:"FILE" help:"The witness's secret key file (jig log witness keygen)."`
	State     string `name:"state" placeholder:"FILE" help:"The witness's state file: the largest tree head it cosigned of each log (default: the key file's name with .state appended). Back it up with the key: without it, the witness cannot tell a fork from a first run."`
	JSON      bool   `name:"json" help:"Print one JSON document: the log, the witness, the tree sizes cosigned before and now, and whether the server serves the cosignature."`
}

// Run cosigns the log's checkpoint.
func (c *LogWitnessCosignCmd) Run(ctx context.Context, app *App) error {
	if err := rcfile.ValidateNamespaceArg(c.Namespace); err != nil {
		return err
	}
	b, err := safefile.ReadFile(c.Key, 4<<10)
	if err != nil {
		return fmt.Errorf("--key %s: %w", c.Key, err)
	}
	cosigner, err := translog.NewCosigner(string(b))
	if err != nil {
		return fmt.Errorf("--key %s: %w", c.Key, err)
	}
	state := c.State
	if state == "" {
		state = c.Key + ".state"
	}
	cl, err := app.Client(c.Namespace)
	if err != nil {
		return err
	}
	rep, err := cl.CosignLog(ctx, c.Namespace, cosigner, state)
	if err != nil {
		return err
	}
	return app.Out.Result(c.JSON, rep, func() { printWitness(app, rep) })
}

func printWitness(app *App, rep *registryclient.WitnessReport) {
	served := "served with the checkpoint"
	if !rep.Current {
		served = "the log grew meanwhile; run again to cosign the new tree head"
	}
	app.Out.Printf("%s cosigned %s from %s: size %d (cosigned before: %d), hash %s; %s\n", rep.Witness, rep.Log, rep.Server, rep.Size, rep.From, rep.Hash, served)
}
