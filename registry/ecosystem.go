package registry

import "fmt"

// Ecosystem is the kind of project a registry or preset builds, which
// decides how its declared dependencies are written and which tool
// installs them. The zero value means [EcosystemNode]: today's behaviour,
// the reference's.
type Ecosystem string

// The ecosystems jig knows.
const (
	// EcosystemNode: dependencies, devDependencies and scripts go into
	// package.json; the install step runs the project's package manager.
	// The default.
	EcosystemNode Ecosystem = "node"
	// EcosystemGo: dependencies are module requirements ("module path":
	// "version") written into go.mod's require block; no package.json;
	// the install step runs "go mod tidy".
	EcosystemGo Ecosystem = "go"
	// EcosystemPython: dependencies are PEP 508 requirements ("name":
	// "version specifier") written into pyproject.toml's
	// [project].dependencies, devDependencies into
	// [dependency-groups].dev; no package.json; the install step runs "uv
	// sync".
	EcosystemPython Ecosystem = "python"
	// EcosystemJava: Maven and Gradle files come as the registry's files;
	// declared dependencies are refused; no package.json, no install step.
	EcosystemJava Ecosystem = "java"
	// EcosystemGeneric: files only; no package.json, no install step.
	EcosystemGeneric Ecosystem = "generic"
)

// Ecosystems lists the ecosystems in the order the documentation does.
func Ecosystems() []Ecosystem {
	return []Ecosystem{EcosystemNode, EcosystemGo, EcosystemPython, EcosystemJava, EcosystemGeneric}
}

// OrNode returns e, or [EcosystemNode] for the zero value.
func (e Ecosystem) OrNode() Ecosystem {
	if e == "" {
		return EcosystemNode
	}
	return e
}

// IsNode reports whether e is [EcosystemNode] or the zero value.
func (e Ecosystem) IsNode() bool { return e.OrNode() == EcosystemNode }

// CheckEcosystem returns an error naming the known ecosystems when e is
// neither one of them nor empty; what says whose field it is.
func CheckEcosystem(what string, e Ecosystem) error {
	if e == "" {
		return nil
	}
	for _, k := range Ecosystems() {
		if e == k {
			return nil
		}
	}
	return fmt.Errorf("%s: ecosystem %q is not one of node, go, python, java, generic", what, e)
}
