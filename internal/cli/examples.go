package cli

// Help texts with examples, one per command ("jig <command> --help" shows
// them under the flags). TestEveryCommandHasExamples keeps them complete.

func (c *InitCmd) Help() string {
	return `Examples:
  jig init -t @presets/node -n my-app          # a new directory from a preset
  jig init -t @presets/node -n . -f            # into the current, non-empty directory
  jig init -t quality/eslint -n my-lib --ci    # no prompts, no install, no git
  jig init -t @presets/node -n demo --dry-run  # show the plan, write nothing
  jig init --frozen -n copy                    # re-create a project from its jig.json`
}

func (c *AddCmd) Help() string {
	return `Examples:
  jig add quality/eslint
  jig add @team/features/auth@1.2.0:ts
  jig add testing/vitest --dry-run --json`
}

func (c *UpdateCmd) Help() string {
	return `Examples:
  jig update                        # every installed registry to its latest version
  jig update quality/eslint --to 1.1.0
  jig update --dry-run --json
  jig update --abort                # undo the last update that left conflicts`
}

func (c *ResolveCmd) Help() string {
	return `Examples:
  jig resolve src/index.ts --theirs   # take the new version's file
  jig resolve .env.example --ours     # keep yours as it was before the update
  jig resolve tsconfig.json --base    # go back to the installed version's file`
}

func (c *RemoveCmd) Help() string {
	return `Examples:
  jig remove quality/prettier
  jig remove quality/prettier --dry-run
  jig rm @team/features/auth --force   # also delete the files you changed`
}

func (c *CheckCmd) Help() string {
	return `Examples:
  jig check          # exit 3 when a file or package.json entry drifted
  jig check --json   # exit 0 no drift, 3 drift, 1 error (e.g. no jig.json)
  jig check --report # in CI: also tell each namespace's server (jig fleet status)`
}

func (c *FleetStatusCmd) Help() string {
	return `Examples:
  jig fleet status                          # one line per registry of each namespace in the rc file
  jig fleet status @acme                    # the same for @acme
  jig fleet status @acme/runtimes/node      # its versions and projects
  jig fleet status @acme/runtimes/node --behind --json
  jig fleet status @acme --history          # how each registry's latest version spread, last 90 days
  jig fleet status @acme/runtimes/node --history=30d`
}

func (c *DiffCmd) Help() string {
	return `Examples:
  jig diff
  jig diff quality/eslint --to 1.1.0`
}

func (c *OutdatedCmd) Help() string {
	return `Examples:
  jig outdated                      # only what is outdated
  jig outdated --all                # every installed registry
  jig outdated --json --exit-code   # exit 3 when something is outdated (CI)`
}

func (c *ConfigListCmd) Help() string {
	return `Examples:
  jig config list
  jig config ls --json`
}

func (c *ConfigGetCmd) Help() string {
	return `Examples:
  jig config get @main
  jig config get @company --json`
}

func (c *ConfigSetCmd) Help() string {
	return `Examples:
  jig config set @company --url https://registry.company.com --token <token>
  jig config set @company --token '${COMPANY_TOKEN}'   # read from the environment each time jig runs
  jig config set @company --header "X-Team: web"
  jig config set @main --url http://localhost:9000      # override a built-in
  jig config set @presets --default-namespace @rack     # its presets' shorthand (runtimes/node) means @rack/runtimes/node`
}

func (c *ConfigRemoveCmd) Help() string {
	return `Examples:
  jig config remove @company
  jig config rm @company -f
  jig config rm @main -f    # drop an override of a built-in; the default comes back`
}

func (c *ListCmd) Help() string {
	return `Examples:
  jig list                  # every namespace you may read, through every configured source
  jig list --registry @team # the namespaces of one source
  jig list @main            # registries in a namespace
  jig list @presets         # presets
  jig list @company --json`
}

func (c *SearchCmd) Help() string {
	return `Examples:
  jig search eslint
  jig search test --type registry:testing --json
  jig search auth --namespace @team`
}

func (c *InfoCmd) Help() string {
	return `Examples:
  jig info quality/eslint
  jig info @team/features/auth@1.2.0 --json`
}

func (c *DoctorCmd) Help() string {
	return `Examples:
  jig doctor
  jig doctor --json`
}

func (c *PublishCmd) Help() string {
	return `Examples:
  jig publish ./my-registry
  jig publish my-registry-1.0.0.tar.gz --registry @company
  jig publish ./presets/node --json
  jig publish ./my-registry --dry-run
  jig publish ./my-registry --force`
}

func (c *RegistryTestCmd) Help() string {
	return `Examples:
  jig registry test
  jig registry test ./registries/eslint ./registries/prettier
  jig registry test ./my-registry --run
  jig registry test ./my-registry --json`
}

func (c *RegistryNewCmd) Help() string {
	return `Examples:
  jig registry new greeter
  jig registry new tools/greeter --namespace @team --type registry:feature
  jig registry new eslint --type registry:quality --dir registries/eslint`
}

func (c *CacheLsCmd) Help() string {
	return `Examples:
  jig cache ls
  jig cache ls --json`
}

func (c *CacheVerifyCmd) Help() string {
	return `Examples:
  jig cache verify
  JIG_CACHE_DIR=/tmp/jig-cache jig cache verify --json`
}

func (c *CacheCleanCmd) Help() string {
	return `Examples:
  jig cache clean`
}

func (c *CacheImportCmd) Help() string {
	return `The versions are cached as if fetched from the server configured for the bundle's
namespace (jig config set @ns --url <url>, or JIG_REGISTRY_URL), so 'jig --offline init'
and the other commands find them there. The whole bundle is checked first: every entry
against its manifest, every file against its version's digest index, the signatures
against your trust policy (jig trust), and versions already cached must have the same
content. On any problem nothing is written.

Examples:
  jig cache import acme.tar
  jig cache import acme.tar && jig --offline init -t @acme/runtimes/node -n app`
}

func (c *CacheExportCmd) Help() string {
	return `Writes every version of the namespace that the cache holds whole (digest index,
manifest and every file), as fetched from the server configured for the namespace, in
the bundle format of 'jig-server mirror export'. Versions whose files were not all
fetched are left out and listed.

Examples:
  jig cache export --namespace @acme -o acme.tar`
}

func (c *FleetUpdateCmd) Help() string {
	return `Examples:
  jig fleet update @team/ci/node@1.4.0 --repos repos.txt --dry-run    # plan only
  jig fleet update @team/ci/node@1.4.0 --repos repos.txt --wave 10 --max-failures 2
  jig fleet update @team/ci/node --repos repos.txt --forge gitlab --on-conflict draft
  jig fleet update @team/ci/node@1.4.0 --repos repos.txt --pr-command 'tea pr create --head "$JIG_FLEET_BRANCH" --title "$JIG_FLEET_TITLE"'
  jig fleet update @team/ci/node@1.4.0 --repos repos.txt    # again: finishes what is not done
  jig fleet update @team/ci/node --from-census --allow-host git.example.com --dry-run`
}

func (c *TrustAddCmd) Help() string {
	return `Examples:
  jig trust add @company --key "$(cat alice.pub)" --principal alice@example.com
  jig trust add @company --key @alice.pub --principal alice@example.com --require
  jig trust add @company --allowed-signers ~/.config/jig/company.allowed_signers`
}

func (c *TrustListCmd) Help() string {
	return `Examples:
  jig trust list
  jig trust ls @company --json`
}

func (c *TrustRemoveCmd) Help() string {
	return `Examples:
  jig trust remove @company --key SHA256:Xb9V...   # the fingerprint 'jig trust list' shows
  jig trust rm @company                           # the whole policy`
}

func (c *TrustRequireCmd) Help() string {
	return `Examples:
  jig trust require @company on    # refuse unsigned or untrusted versions
  jig trust require @company off   # install unsigned versions; bad signatures are still refused`
}

func (c *TrustForgetCmd) Help() string {
	return `Examples:
  jig trust forget @company/runtimes/node          # after an intended rollback of the server
  jig trust forget @company/runtimes/node@1.2.0    # after 1.2.0 was re-signed on purpose
  jig trust forget @company`
}

func (c *TrustLogCmd) Help() string {
	return `Every version of the namespace installed or updated to must then be in the namespace's
transparency log on its server, proven against a checkpoint the log key signed, and that
checkpoint must extend the last one this machine saw (a fork or rollback is refused).
Take the verifier line from the server's operator (GET /log/key shows the server's own).

Examples:
  jig trust log add @company registry.example.com+1a2b3c4d+AbCdEf...
  jig trust log remove @company`
}

func (c *TrustLogAddCmd) Help() string {
	return `With --witness, every checkpoint of the log this machine accepts (lookups, proofs kept in the
cache or carried by a bundle, jig log monitor) must also carry valid cosignatures of at least
--min-witnesses of those witnesses: a tree head the witnesses never saw (a split view) is
refused, with nothing written.

Examples:
  jig trust log add @company registry.example.com+1a2b3c4d+AbCdEf...
  jig trust log add @company @log.pub --witness @w1.pub --witness @w2.pub --witness @w3.pub --min-witnesses 2
  jig trust log remove @company   # stop checking`
}

func (c *LogWitnessKeygenCmd) Help() string {
	return `Give the printed verifier key to the server's operator (LOG_WITNESSES) and to the clients
(jig trust log add @ns <log verifier> --witness <verifier key>); keep the key file secret.

Examples:
  jig log witness keygen witness.example.com -o /etc/jig/witness.key`
}

func (c *LogWitnessCosignCmd) Help() string {
	return `Reads the namespace's checkpoint (signed by the trusted log key), checks from the log's tiles
that it extends the tree head this witness cosigned before (the state file), records it, then
cosigns it and POSTs the cosignature. A fork or rollback is refused naming both tree heads (exit 1,
nothing cosigned). Run it often, from a scheduled job: a checkpoint grown by a publish carries no
cosignature until the witnesses run again.

Examples:
  jig log witness cosign @acme --key /etc/jig/witness.key
  jig log witness cosign @acme --key witness.key --state /var/lib/jig/witness.state --json`
}

func (c *TrustLogRemoveCmd) Help() string {
	return `Examples:
  jig trust log remove @company`
}

func (c *VerifyCmd) Help() string {
	return `Examples:
  jig verify          # signatures and recorded digests of every installed version
  jig verify --json   # {"ok": false, "registries": [...]}; exit 3 on any failure
  jig --offline verify`
}

func (c *CacheCmd) Help() string {
	return `Examples:
  jig cache ls             # the cached manifests, digest indexes and presets
  jig cache verify         # re-hash every entry (exit 1 when one is corrupt)
  jig cache clean          # empty the cache`
}

func (c *ConfigCmd) Help() string {
	return `Examples:
  jig config list
  jig config set @company --url https://registry.company.com --token '${COMPANY_TOKEN}'
  jig config get @company
  jig config rm @company -f`
}

func (c *TrustCmd) Help() string {
	return `Examples:
  jig trust add @company --key @alice.pub --principal alice@example.com
  jig trust require @company on
  jig trust list`
}

func (c *FleetCmd) Help() string {
	return `Examples:
  jig fleet status @company
  jig fleet update @company/runtimes/node@2.0.0 --repos repos.txt --dry-run`
}

func (c *RegistryCmd) Help() string {
	return `Examples:
  jig registry new tools/greeter --namespace @team
  jig registry test registries/greeter`
}
