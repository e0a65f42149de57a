package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryclient/apply"
)

func TestPlanStore(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := newPlanStore(time.Minute, 2, func() time.Time { return now })
	a := st.put(&storedPlan{})
	if !planIDRE().MatchString(a) {
		t.Fatalf("id %q does not match %s", a, planIDRE())
	}
	b := st.put(&storedPlan{})
	if b == a {
		t.Fatalf("two plans got the same id %q", a)
	}
	unknown := "plan-" + strings.Repeat("A", 26)
	tests := []struct {
		name    string
		id      string
		advance time.Duration
		wantErr string
	}{
		{name: "malformed", id: "42", wantErr: `planId "42" is not a plan id`},
		{name: "empty", id: "", wantErr: `planId "" is not a plan id`},
		{name: "lower case", id: strings.ToLower(a), wantErr: "is not a plan id"},
		{name: "unknown", id: unknown, wantErr: "is unknown, expired or already applied"},
		{name: "fresh", id: a},
		{name: "reused", id: a, wantErr: "is unknown, expired or already applied"},
	}
	for _, tt := range tests {
		now = now.Add(tt.advance)
		p, err := st.take(tt.id)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: take(%q) = %v, %v; want error containing %q", tt.name, tt.id, p, err, tt.wantErr)
			}
			continue
		}
		if err != nil || p.id != tt.id {
			t.Errorf("%s: take(%q) = %v, %v; want the plan", tt.name, tt.id, p, err)
		}
	}

	if _, err := st.take(b); err != nil {
		t.Fatalf("take(%s): %v", b, err)
	}

	// Expiry: a plan can be applied until its TTL is over, not at it.
	c := st.put(&storedPlan{})
	d := st.put(&storedPlan{})
	now = now.Add(time.Minute - time.Nanosecond)
	if _, err := st.take(c); err != nil {
		t.Errorf("take just before expiry: %v", err)
	}
	now = now.Add(time.Nanosecond)
	if _, err := st.take(d); err == nil || !strings.Contains(err.Error(), "within 1m0s") {
		t.Errorf("take at expiry: %v, want an expiry error naming the TTL", err)
	}

	// The count is bounded: a third plan pushes out the oldest.
	e := st.put(&storedPlan{})
	now = now.Add(time.Second)
	f := st.put(&storedPlan{})
	now = now.Add(time.Second)
	g := st.put(&storedPlan{})
	if _, err := st.take(e); err == nil {
		t.Error("the oldest plan was kept beyond the bound")
	}
	for _, id := range []string{f, g} {
		if _, err := st.take(id); err != nil {
			t.Errorf("take(%s): %v", id, err)
		}
	}
}

func TestPlanInputValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      PlanInput
		wantErr string
	}{
		{in: PlanInput{Command: "add", Registry: "@main/quality/eslint"}},
		{in: PlanInput{Command: "init", Registry: "@presets/node"}},
		{in: PlanInput{Command: "update"}},
		{in: PlanInput{Command: "update", Registry: "x", To: "1.2.0", Force: true}},
		{in: PlanInput{Command: "remove", Registry: "@main/x", Force: true}},
		{in: PlanInput{}, wantErr: "command is required: init, add, update or remove"},
		{in: PlanInput{Command: "install"}, wantErr: `command "install" is not one of init, add, update or remove`},
		{in: PlanInput{Command: "add"}, wantErr: "registry is required for add"},
		{in: PlanInput{Command: "init"}, wantErr: "registry is required for init: the template"},
		{in: PlanInput{Command: "remove"}, wantErr: "registry is required for remove"},
		{in: PlanInput{Command: "add", Registry: "@main/../etc"}, wantErr: ".."},
		{in: PlanInput{Command: "add", Registry: "@Main!/x"}, wantErr: "namespace"},
		{in: PlanInput{Command: "add", Registry: "@presets/node"}, wantErr: "is a preset; presets start projects: use command init"},
		{in: PlanInput{Command: "add", Registry: "x", To: "1.0.0"}, wantErr: "to needs command update and one registry"},
		{in: PlanInput{Command: "update", To: "1.0.0"}, wantErr: "to needs command update and one registry"},
		{in: PlanInput{Command: "update", Registry: "x", To: "v1"}, wantErr: `to "v1" is not a full SemVer version (for example 1.2.0)`},
		{in: PlanInput{Command: "add", Registry: "x", Force: true}, wantErr: "force applies to update and remove, not add"},
	}
	for _, tt := range tests {
		err := tt.in.validate()
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("%+v: %v", tt.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%+v: err = %v, want one containing %q", tt.in, err, tt.wantErr)
		}
	}
}

func TestRefuseScripts(t *testing.T) {
	t.Parallel()
	in := PlanInput{Command: "add", Registry: "@main/features/yaml"}
	if err := in.refuseScripts(nil); err != nil {
		t.Fatal(err)
	}
	err := in.refuseScripts([]apply.SkippedScript{{Target: "config.yml", Registry: "@main/features/yaml"}})
	for _, want := range []string{"never runs registry code", "\n  config.yml (@main/features/yaml)", "'jig add @main/features/yaml --allow-scripts'"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to contain %q", err, want)
		}
	}
}

// newPlanned plans adding @main/x in a project below a fresh root and
// stores the plan as the plan tool does.
func newPlanned(t *testing.T) (*server, string, string) {
	t.Helper()
	root := t.TempDir()
	write(t, root, "app/package.json", `{"name":"app"}`+"\n")
	s := &server{opts: Options{Root: root}, plans: newPlanStore(time.Minute, maxPlans, time.Now)}
	id, dir := planAdd(t, s)
	return s, id, dir
}

// planAdd plans adding @main/x in s's project "app" and stores the plan.
func planAdd(t *testing.T, s *server) (string, string) {
	t.Helper()
	dir, err := s.resolveDir("app", false)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := apply.New(oneRegistry{}, apply.WithAllowScripts(false))
	if err != nil {
		t.Fatal(err)
	}
	p, err := eng.Plan(t.Context(), apply.Request{Dir: dir, Template: "@main/x"})
	if err != nil {
		t.Fatal(err)
	}
	id := s.plans.put(&storedPlan{command: cmdAdd, dir: "app", real: dir, plan: p, eng: eng, fp: fingerprintOf(p.Inputs())})
	return id, dir
}

func TestApply(t *testing.T) {
	t.Parallel()
	t.Run("writes the plan once", func(t *testing.T) {
		t.Parallel()
		s, id, dir := newPlanned(t)
		out, err := s.apply(t.Context(), ApplyInput{PlanID: id})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(out.Written, " "); got != "src/x.txt package.json jig.json" {
			t.Errorf("written = %q", got)
		}
		if len(out.Next) != 1 || !strings.Contains(out.Next[0], "'npm install'") {
			t.Errorf("next = %q, want the install to run by hand", out.Next)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "src/x.txt")); string(b) != "hello\n" {
			t.Errorf("src/x.txt = %q", b)
		}
		if _, err := s.apply(t.Context(), ApplyInput{PlanID: id}); err == nil || !strings.Contains(err.Error(), "already applied") {
			t.Errorf("second apply: %v, want refused", err)
		}
	})
	changes := []struct {
		name, want string
		change     func(t *testing.T, root, dir string)
	}{
		{name: "package.json edited", want: "the project changed since plan plan-", change: func(t *testing.T, _, dir string) {
			write(t, dir, "package.json", `{"name":"app2"}`+"\n")
		}},
		{name: "a file it creates appeared", want: "(src/x.txt)", change: func(t *testing.T, _, dir string) {
			write(t, dir, "src/x.txt", "mine\n")
		}},
		{name: "jig.json appeared", want: "(jig.json)", change: func(t *testing.T, _, dir string) {
			write(t, dir, "jig.json", "{}\n")
		}},
		{name: "project swapped for a link outside", want: "is outside the project directory", change: func(t *testing.T, root, dir string) {
			outside := t.TempDir()
			write(t, outside, "package.json", `{"name":"app"}`+"\n")
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, dir); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range changes {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, id, dir := newPlanned(t)
			tt.change(t, s.opts.Root, dir)
			before := testenv.Snapshot(t, s.opts.Root)
			_, err := s.apply(t.Context(), ApplyInput{PlanID: id})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "nothing was written") {
				t.Fatalf("err = %v, want a refusal containing %q", err, tt.want)
			}
			after := testenv.Snapshot(t, s.opts.Root)
			if len(before) != len(after) {
				t.Fatalf("files changed: before %v, after %v", before, after)
			}
			for k, v := range before {
				if after[k] != v {
					t.Errorf("%s changed: %q -> %q", k, v, after[k])
				}
			}
			if _, err := s.apply(t.Context(), ApplyInput{PlanID: id}); err == nil || !strings.Contains(err.Error(), "already applied") {
				t.Errorf("apply after a refusal: %v, want the plan gone", err)
			}
		})
	}
}

func TestApplyConcurrentPlans(t *testing.T) {
	t.Parallel()
	s, first, dir := newPlanned(t)
	second, _ := planAdd(t, s)
	errs := make(chan error, 2)
	for _, id := range []string{first, second} {
		go func() {
			_, err := s.apply(t.Context(), ApplyInput{PlanID: id})
			errs <- err
		}()
	}
	var failed []error
	for range 2 {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) != 1 || !strings.Contains(failed[0].Error(), "the project changed since plan") {
		t.Fatalf("errors = %v, want exactly one refusal because the project changed", failed)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "src/x.txt")); string(b) != "hello\n" {
		t.Errorf("src/x.txt = %q", b)
	}
}
