package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/jigkit/jig/registry/wire"
)

// scriptCondition answers the scripts' own conditions: [ssh-keygen] and
// [python3] are true when the program is installed, and always under
// CI=true (.ci/run installs openssh-client and python3), so that there a
// missing one fails the script rather than skipping it.
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "ssh-keygen", "python3":
		_, err := exec.LookPath(cond)
		return err == nil || os.Getenv("CI") == "true", nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// allowed-signers file principal key.pub [options]: writes an OpenSSH
// allowed_signers line for the public key file.
func cmdAllowedSigners(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || len(args) > 4 {
		ts.Fatalf("usage: allowed-signers file principal key.pub [options]")
	}
	pub := strings.TrimSpace(ts.ReadFile(args[2]))
	line := args[1] + " "
	if len(args) == 4 {
		line += args[3] + " "
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(line+pub+"\n"), 0o644))
}

// http-get url file [status]: GETs url, with "Authorization: Bearer
// $HTTP_TOKEN" when the script sets HTTP_TOKEN, writes the body to file
// and checks the status (default 200).
func cmdHTTPGet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: http-get url file [status]")
	}
	want := http.StatusOK
	if len(args) == 3 {
		var err error
		want, err = strconv.Atoi(args[2])
		ts.Check(err)
	}
	req, err := http.NewRequest(http.MethodGet, args[0], nil)
	ts.Check(err)
	if tok := ts.Getenv("HTTP_TOKEN"); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	cl := &http.Client{Timeout: 30 * time.Second}
	resp, err := cl.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), body, 0o644))
	if resp.StatusCode != want {
		ts.Fatalf("GET %s: %s, want %d", args[0], resp.Status, want)
	}
}

// signature-of signatures.json n file: writes the n-th (from 1) armored
// signature of a GET .../signatures body to file.
func cmdSignatureOf(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: signature-of signatures.json n file")
	}
	var doc wire.Signatures
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &doc))
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	if n < 1 || n > len(doc.Signatures) {
		ts.Fatalf("%s has no signature %d (it has %d)", args[0], n, len(doc.Signatures))
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(doc.Signatures[n-1].Signature), 0o644))
}
