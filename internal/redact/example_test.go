package redact_test

import (
	"fmt"
	"net/url"

	"github.com/jigkit/jig/internal/redact"
)

func ExampleURL() {
	fmt.Println(redact.URL("https://user:pa55@example.com/x?access_token=abc&page=2"))
	// Output:
	// https://user:[REDACTED]@example.com/x?access_token=[REDACTED]&page=2
}

func ExampleText() {
	repo := "https://ci:s3cret-pass@git.example.com/a.git"
	fmt.Println(redact.Text("fatal: 'https://ci:s3cret-pass@git.example.com/a.git/' said s3cret-pass", redact.Secrets(repo)))
	fmt.Println(redact.Identity("ssh://git:pw@host/x.git"), redact.Strip("ssh://git:pw@host/x.git"))
	// Output:
	// fatal: 'https://git.example.com/a.git/' said ***
	// ssh://git@host/x.git ssh://host/x.git
}

func ExampleWithCredentials() {
	u, _ := url.Parse("http://127.0.0.1:3000/acme/api.git")
	remote := redact.WithCredentials(u, "jig", "s3cr3t")
	fmt.Println(redact.Strip(remote.String()))
	fmt.Println(remote.User.Username())
	// Output:
	// http://127.0.0.1:3000/acme/api.git
	// jig
}
