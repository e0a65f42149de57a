package rcfile

import (
	"fmt"

	"github.com/jigkit/jig/registryclient"
)

// EnvNotSetError is returned when a "${VAR}" in a source's url, token or
// header names an environment variable that is not set. It matches
// [registryclient.ErrInvalidConfig].
type EnvNotSetError struct {
	Namespace string // the source's namespace, "@team"
	Var       string // the variable, "TEAM_TOKEN"
	// Field is where it was used: "url", "token" or "header <Name>".
	Field string
}

// Error names the variable and where it was used.
func (e *EnvNotSetError) Error() string {
	return fmt.Sprintf("%s: registry %s: environment variable %s used in its %s is not set", registryclient.ErrInvalidConfig, e.Namespace, e.Var, e.Field)
}

// Unwrap returns [registryclient.ErrInvalidConfig].
func (e *EnvNotSetError) Unwrap() error { return registryclient.ErrInvalidConfig }
