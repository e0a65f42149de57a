package rcfile

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// FleetAllowHosts returns the hosts the rc file lists as
// "fleet": {"allowHosts": ["git.example.com", ...]}: the hosts
// jig fleet update --from-census may clone from and push to, as written
// (the command checks each). None are listed by default. The section is
// read only here, so a malformed one fails only that command, with an
// error naming the file.
func (c *Config) FleetAllowHosts() ([]string, error) {
	raw, ok := c.other["fleet"]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var fleet struct {
		AllowHosts []string `json:"allowHosts"`
	}
	if err := json.Unmarshal(raw, &fleet); err != nil {
		return nil, fmt.Errorf(`%s: "fleet" must be an object {"allowHosts": ["git.example.com"]} (%v)`, c.path, err)
	}
	return fleet.AllowHosts, nil
}
