package registryclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
)

// Census types, as the server sends them (see package wire).
type (
	// CensusReport is one project's report; see [Client.Report].
	CensusReport = wire.CensusReport
	// CensusEntry is one registry of a [CensusReport].
	CensusEntry = wire.CensusEntry
	// CensusRegistries is the census of a namespace; see [Client.CensusRegistries].
	CensusRegistries = wire.CensusRegistries
	// CensusReceipt is the server's answer to [Client.Report].
	CensusReceipt = wire.CensusReceipt
	// CensusRegistry is the census of one registry; see [Client.Census].
	CensusRegistry = wire.CensusRegistry
	// CensusDay is one day of a registry's census history; see
	// [Client.CensusHistory].
	CensusDay = wire.CensusDay
)

// maxCensusPages bounds the pages [Client.Census] follows.
const maxCensusPages = 1000

// Report sends rep, one project's census report for namespace ns. The
// server stores it for the registries the namespace has (replacing the project's previous report) when the
// client's token may read ns, or anonymously when the server's census is
// open. Reports are never retried.
//
// API: POST /census/@ns
func (c *Client) Report(ctx context.Context, ns string, rep *CensusReport) (*CensusReceipt, error) {
	if !registry.ValidNamespace(ns) {
		return nil, fmt.Errorf("invalid namespace %q: it must start with @ and use lowercase letters, digits, - or _ (e.g. @main)", ns)
	}
	body, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, request{
		method: "POST", path: "/census/" + url.PathEscape(ns), registry: ns,
		header: map[string][]string{"Content-Type": {"application/json"}},
		body:   body, noRetry5xx: true,
	})
	if err != nil {
		return nil, err
	}
	var r CensusReceipt
	if err := decodeJSON(resp.url, resp.body, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// CensusRegistries returns one line per registry of namespace ns that
// current census reports name.
//
// API: GET /census/@ns
func (c *Client) CensusRegistries(ctx context.Context, ns string) (*CensusRegistries, error) {
	if !registry.ValidNamespace(ns) {
		return nil, fmt.Errorf("invalid namespace %q: it must start with @ and use lowercase letters, digits, - or _ (e.g. @main)", ns)
	}
	var body CensusRegistries
	if err := c.getJSON(ctx, request{path: "/census/" + url.PathEscape(ns), registry: ns}, &body); err != nil {
		return nil, err
	}
	if body.Registries == nil {
		body.Registries = []wire.CensusRegistryRow{}
	}
	return &body, nil
}

// Census returns the census of the registry at path ("runtimes/node") in
// namespace ns: per version the number of projects, and every project
// that reported it (all pages, followed for the caller).
//
// API: GET /census/@ns/<path>
func (c *Client) Census(ctx context.Context, ns, path string) (*CensusRegistry, error) {
	id := registry.ID{Namespace: ns, Path: path}
	rp, err := registryPath(id)
	if err != nil {
		return nil, err
	}
	rp = strings.TrimPrefix(rp, "/registries")
	var all *CensusRegistry
	cursor := ""
	for range maxCensusPages {
		p := "/census" + rp
		if cursor != "" {
			p += "?cursor=" + url.QueryEscape(cursor)
		}
		var page CensusRegistry
		if err := c.getJSON(ctx, request{path: p, registry: idLabel(id)}, &page); err != nil {
			return nil, err
		}
		if all == nil {
			all = &page
		} else {
			all.Projects = append(all.Projects, page.Projects...)
		}
		if page.Next == "" || page.Next == cursor {
			break
		}
		cursor = page.Next
	}
	all.Next = ""
	if all.Projects == nil {
		all.Projects = []wire.CensusProjectRow{}
	}
	if all.Versions == nil {
		all.Versions = []wire.CensusVersionRow{}
	}
	return all, nil
}

// CensusHistory returns the census of the registry at path in namespace
// ns with its daily history over the last days days (1 to
// [wire.MaxCensusHistoryDays]) in History, oldest first, today last, and
// no projects (see [Client.Census] for them). A day the server recorded
// nothing for is absent. A server that sends no history (a jig-server
// from before it kept one) is a [*NotSupportedError].
//
// API: GET /census/@ns/<path>?history=<days>d
func (c *Client) CensusHistory(ctx context.Context, ns, path string, days int) (*CensusRegistry, error) {
	id := registry.ID{Namespace: ns, Path: path}
	rp, err := registryPath(id)
	if err != nil {
		return nil, err
	}
	if days < 1 || days > wire.MaxCensusHistoryDays {
		return nil, fmt.Errorf("census history of %d days: want 1 to %d", days, wire.MaxCensusHistoryDays)
	}
	// One project: the smallest page a server takes (older servers too).
	p := "/census" + strings.TrimPrefix(rp, "/registries") + "?history=" + wire.CensusHistoryWindow(days) + "&limit=1"
	var view CensusRegistry
	if err := c.getJSON(ctx, request{path: p, registry: idLabel(id)}, &view); err != nil {
		return nil, err
	}
	if view.History == nil {
		return nil, &NotSupportedError{URL: c.baseStr, Route: "/census/@ns/<path>?history=", Action: "show the census history"}
	}
	view.Projects, view.Next = []wire.CensusProjectRow{}, ""
	if view.Versions == nil {
		view.Versions = []wire.CensusVersionRow{}
	}
	return &view, nil
}
