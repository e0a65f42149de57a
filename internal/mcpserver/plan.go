package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"github.com/jigkit/jig/internal/targetversion"
	"path/filepath"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/internal/suggest"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
	"github.com/jigkit/jig/registryclient/apply"
)

// The commands the plan tool plans.
const (
	cmdInit   = "init"
	cmdAdd    = "add"
	cmdUpdate = "update"
	cmdRemove = "remove"
)

// PlanInput is the input of plan.
type PlanInput struct {
	Command  string `json:"command" jsonschema:"what to plan: init (start a project from a template), add (a registry), update (installed registries) or remove (a registry)"`
	Registry string `json:"registry,omitempty" jsonschema:"init: the template, a preset (@presets/node) or a registry; add and remove: the registry (e.g. @main/quality/eslint, @main/quality/eslint@1.0.0); update: the registry to update, empty for every installed one"`
	To       string `json:"to,omitempty" jsonschema:"update only: the version to move the registry to (needs registry); the default is the latest"`
	Force    bool   `json:"force,omitempty" jsonschema:"update: overwrite untracked files in the way of files a new version adds; remove: delete the registry's files even where the project changed them"`
	Dir      string `json:"dir,omitempty" jsonschema:"the project directory, relative to the directory jig mcp was started in (default: that directory); it must stay inside it; for init it may not exist yet"`
}

// PlanOutput is the result of plan: everything applying it would change.
type PlanOutput struct {
	PlanID    string `json:"planId,omitempty" jsonschema:"pass it to apply to carry out exactly this plan; empty when the plan changes nothing"`
	ExpiresAt string `json:"expiresAt,omitempty" jsonschema:"when the plan can no longer be applied (RFC 3339)"`
	Command   string `json:"command"`
	Dir       string `json:"dir" jsonschema:"the absolute project directory"`
	Changes   bool   `json:"changes" jsonschema:"true when applying the plan writes or deletes files"`
	// AlreadyInstalled is set when add was asked for an installed registry.
	AlreadyInstalled string                  `json:"alreadyInstalled,omitempty" jsonschema:"add: the registry is already installed at this pinned id; nothing changes"`
	Registries       []apply.PlannedRegistry `json:"registries" jsonschema:"init and add: the registries applied, dependencies included"`
	Updates          []apply.RegistryUpdate  `json:"updates,omitempty" jsonschema:"update and remove: each registry moved, with its versions before and after"`
	Files            []apply.FileChange      `json:"files" jsonschema:"each project file touched: create, modify, unchanged, skip, delete, conflict or keep, with the reason"`
	ExistingChanged  []string                `json:"existingChanged,omitempty" jsonschema:"files that exist already and that the plan changes or deletes"`
	Overwritten      []string                `json:"overwritten,omitempty" jsonschema:"init and add: existing files the plan replaces whose content no registry wrote (the user's own, or changed since): applying it loses that content; ask the user first"`
	Packages         []apply.PackageChange   `json:"packages" jsonschema:"package.json dependency changes"`
	Scripts          []merge.ScriptChange    `json:"scripts,omitempty" jsonschema:"package.json script changes"`
	PackageFields    []merge.FieldChange     `json:"packageFields,omitempty" jsonschema:"changes to package.json's other top-level fields (type, engines), values as compact JSON"`
	InstallScripts   []string                `json:"installScripts,omitempty" jsonschema:"package.json scripts the plan sets that a package manager's install runs by itself; review them before installing"`
	Conflicts        int                     `json:"conflicts" jsonschema:"update: places the merge could not resolve (files then carry conflict markers)"`
	PackageConflicts []merge.Conflict        `json:"packageConflicts,omitempty" jsonschema:"package.json entries where the project's value is kept: values both changed (update), or scripts the project already has that a registry wants otherwise (init and add)"`
	Diffs            []apply.FileDiff        `json:"diffs" jsonschema:"the unified diff of every file written or deleted (long diffs are cut)"`
	Warnings         []string                `json:"warnings"`
	Unneeded         []string                `json:"unneeded,omitempty" jsonschema:"update and remove: installed registries nothing depends on any more; they were kept, and a remove plan can drop each"`
	Next             string                  `json:"next" jsonschema:"what to do with the plan"`
}

// maxDiffBytes cuts each diff of a plan's output.
const maxDiffBytes = 16 << 10

func (s *server) plan(ctx context.Context, in PlanInput) (PlanOutput, error) {
	if err := in.validate(); err != nil {
		return PlanOutput{}, err
	}
	dir, err := s.resolveDir(in.Dir, in.Command == cmdInit)
	if err != nil {
		return PlanOutput{}, err
	}
	eng, err := s.engine()
	if err != nil {
		return PlanOutput{}, err
	}
	var p *apply.Plan
	switch in.Command {
	case cmdInit:
		p, err = eng.Plan(ctx, apply.Request{Dir: dir, Template: in.Registry, Mode: apply.ModeInit, Name: filepath.Base(dir)})
	case cmdAdd:
		p, err = eng.Plan(ctx, apply.Request{Dir: dir, Template: in.Registry, Mode: apply.ModeAdd})
	case cmdUpdate:
		req := apply.UpdateRequest{Dir: dir, To: in.To, Force: in.Force}
		if in.Registry != "" {
			req.Registries = []string{in.Registry}
		}
		p, err = eng.PlanUpdate(ctx, req)
	case cmdRemove:
		p, err = eng.PlanRemove(ctx, apply.RemoveRequest{Dir: dir, Registry: in.Registry, Force: in.Force})
	}
	if err != nil {
		return PlanOutput{}, err
	}
	if err := in.refuseScripts(p.SkippedScripts); err != nil {
		return PlanOutput{}, err
	}
	out := planOutput(in.Command, p)
	if !p.Changes() {
		out.Next = "Nothing to apply: the project already is as this plan would leave it."
		return out, nil
	}
	fp := fingerprintOf(p.Inputs())
	if missing := missingTargets(fp, alwaysFingerprinted); len(missing) > 0 {
		now, err := readFingerprint(dir, missing)
		if err != nil {
			return PlanOutput{}, err
		}
		for t, st := range now {
			fp[t] = st
		}
	}
	sp := &storedPlan{command: in.Command, dir: in.Dir, real: dir, create: in.Command == cmdInit, plan: p, eng: eng, fp: fp}
	out.PlanID = s.plans.put(sp)
	out.ExpiresAt = sp.expires.UTC().Format(time.RFC3339)
	out.Next = "Show this plan to the user (files, packages, warnings, diffs). Only once they agree, call apply with planId " +
		out.PlanID + "; it writes exactly this plan, and refuses if the project changed in between."
	return out, nil
}

// validate checks the input before anything is read or fetched.
func (in *PlanInput) validate() error {
	switch in.Command {
	case cmdInit, cmdAdd, cmdUpdate, cmdRemove:
	case "":
		return errors.New("command is required: init, add, update or remove")
	default:
		return fmt.Errorf("command %q is not one of init, add, update or remove", in.Command)
	}
	if in.Registry == "" && in.Command != cmdUpdate {
		what := map[string]string{cmdInit: "the template, e.g. @presets/node", cmdAdd: "the registry to add, e.g. @main/quality/eslint", cmdRemove: "the registry to remove, e.g. @main/quality/eslint"}
		return fmt.Errorf("registry is required for %s: %s", in.Command, what[in.Command])
	}
	if in.Registry != "" {
		id, err := registry.ParseID(in.Registry)
		if err != nil {
			return err
		}
		if id.IsPreset() && in.Command != cmdInit {
			return fmt.Errorf("%s is a preset; presets start projects: use command init", in.Registry)
		}
	}
	if in.To != "" {
		n := 0
		if in.Command == cmdUpdate && in.Registry != "" {
			n = 1
		}
		switch err := targetversion.Check(in.To, n); {
		case errors.Is(err, apply.ErrToNeedsOneRegistry):
			return errors.New("to needs command update and one registry: {\"command\":\"update\",\"registry\":\"@ns/path\",\"to\":\"1.2.0\"}")
		case err != nil:
			return fmt.Errorf("to %w", err)
		}
	}
	if in.Force && in.Command != cmdUpdate && in.Command != cmdRemove {
		return fmt.Errorf("force applies to update and remove, not %s", in.Command)
	}
	return nil
}

// refuseScripts fails a plan that needs a registry's custom merge script:
// jig mcp never runs one, so the user has to, knowingly, from a terminal.
func (in *PlanInput) refuseScripts(skipped []apply.SkippedScript) error {
	if len(skipped) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("this plan needs custom merge scripts from the registry, and jig mcp never runs registry code:")
	for _, sc := range skipped {
		fmt.Fprintf(&b, "\n  %s (%s)", sc.Target, sc.Registry)
	}
	cmd := map[string]string{
		cmdInit:   suggest.InitCommand(in.Registry) + " --allow-scripts",
		cmdAdd:    suggest.AddCommand(in.Registry) + " --allow-scripts",
		cmdUpdate: strings.TrimSpace("jig update " + in.Registry),
		cmdRemove: "jig remove " + in.Registry,
	}[in.Command]
	fmt.Fprintf(&b, "\nNothing was planned. Ask the user to review those scripts and, if they trust them, run '%s' in a terminal.", cmd)
	return errors.New(b.String())
}

func missingTargets(fp fingerprint, targets []string) []string {
	var out []string
	for _, t := range targets {
		if _, ok := fp[t]; !ok {
			out = append(out, t)
		}
	}
	return out
}

// planOutput is the tool output of p (without plan id).
func planOutput(command string, p *apply.Plan) PlanOutput {
	out := PlanOutput{
		Command: command, Dir: p.Dir, Changes: p.Changes(), AlreadyInstalled: p.AlreadyInstalled,
		Registries: p.Registries, Updates: p.Updates, Files: p.Files, Packages: p.Packages,
		Scripts: p.Scripts, PackageFields: p.PackageFields, InstallScripts: p.InstallScripts(), Conflicts: p.Conflicts,
		PackageConflicts: p.PackageConflicts, Diffs: p.Diffs(), Warnings: p.Warnings, Unneeded: p.Unneeded,
	}
	for _, f := range p.ExistingChanges() {
		out.ExistingChanged = append(out.ExistingChanged, f.Target)
	}
	out.Overwritten = p.Overwritten()
	for i, d := range out.Diffs {
		if len(d.Diff) > maxDiffBytes {
			out.Diffs[i].Diff = fmt.Sprintf("%s\n... (%d more bytes not shown)\n", d.Diff[:maxDiffBytes], len(d.Diff)-maxDiffBytes)
		}
	}
	if out.Registries == nil {
		out.Registries = []apply.PlannedRegistry{}
	}
	if out.Files == nil {
		out.Files = []apply.FileChange{}
	}
	if out.Packages == nil {
		out.Packages = []apply.PackageChange{}
	}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	return out
}

// ApplyInput is the input of apply.
type ApplyInput struct {
	PlanID string `json:"planId" jsonschema:"the planId the plan tool returned"`
}

// ApplyOutput is the result of apply.
type ApplyOutput struct {
	PlanID    string   `json:"planId"`
	Dir       string   `json:"dir" jsonschema:"the absolute project directory"`
	Written   []string `json:"written" jsonschema:"the files created or changed, in write order"`
	Deleted   []string `json:"deleted,omitempty" jsonschema:"the files deleted"`
	Conflicts int      `json:"conflicts" jsonschema:"update: places left to resolve by hand (conflict markers); run check after resolving them"`
	Next      []string `json:"next" jsonschema:"what the user still has to do"`
}

// apply carries out a stored plan, once, only if none of the files it
// depends on changed since it was made. The writes are the plan's own
// bytes; nothing is fetched again. A failed write rolls every change back.
func (s *server) apply(ctx context.Context, in ApplyInput) (ApplyOutput, error) {
	sp, err := s.plans.take(in.PlanID)
	if err != nil {
		return ApplyOutput{}, err
	}
	// One apply at a time: two plans of one project made before either was
	// applied cannot both pass the fingerprint check.
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	dir, err := s.resolveDir(sp.dir, sp.create)
	if err != nil {
		return ApplyOutput{}, fmt.Errorf("plan %s: %w; nothing was written", sp.id, err)
	}
	if dir != sp.real {
		return ApplyOutput{}, fmt.Errorf("plan %s was made for %s, but that directory now leads to %s; nothing was written; call plan again", sp.id, sp.real, dir)
	}
	now, err := readFingerprint(dir, sp.fp.targets())
	if err != nil {
		return ApplyOutput{}, fmt.Errorf("plan %s: %w; nothing was written", sp.id, err)
	}
	if changed := sp.fp.changed(now); len(changed) > 0 {
		return ApplyOutput{}, fmt.Errorf("the project changed since plan %s was made (%s); nothing was written; call plan again and show the new plan to the user", sp.id, strings.Join(changed, ", "))
	}
	if err := sp.eng.Apply(ctx, sp.plan); err != nil {
		return ApplyOutput{}, err
	}
	out := ApplyOutput{PlanID: sp.id, Dir: dir, Written: []string{}, Conflicts: sp.plan.Conflicts, Next: []string{}}
	for _, f := range sp.plan.Files {
		switch f.Action {
		case apply.ActionCreate, apply.ActionModify, apply.ActionConflict:
			out.Written = append(out.Written, f.Target)
		case apply.ActionDelete:
			out.Deleted = append(out.Deleted, f.Target)
		}
	}
	if sp.plan.Conflicts > 0 {
		out.Next = append(out.Next, fmt.Sprintf("Resolve the %s (look for <<<<<<< markers in the files marked conflict), then call check.", english.Count(sp.plan.Conflicts, "conflict", "conflicts")))
	}
	if sp.plan.PackagesChanged() {
		pm := apply.DetectPackageManager(dir)
		note := fmt.Sprintf("package.json changed: ask the user to run '%s install' in %s (jig mcp does not run it).", pm, dir)
		if scripts := sp.plan.InstallScripts(); len(scripts) > 0 {
			note += fmt.Sprintf(" It would run %s from a registry: have the user review package.json first.", strings.Join(scripts, ", "))
		}
		out.Next = append(out.Next, note)
	}
	return out, nil
}
