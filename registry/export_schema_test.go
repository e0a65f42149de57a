package registry

import "fmt"

// ValidateProbePattern reports an error when a schema pattern has no
// human description.
func ValidateProbePattern(p string) error {
	if _, ok := patternDescriptions[p]; !ok {
		return fmt.Errorf("schema pattern %q has no entry in patternDescriptions", p)
	}
	return nil
}
