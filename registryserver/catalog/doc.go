// Package catalog is jig's own starter catalog: a small set of registries and
// presets, written by this project and embedded in the server binary, so a
// first run of jig-server against an empty storage serves something real.
//
// [FS] returns the catalog laid out exactly like the storage (see
// [github.com/jigkit/jig/registryserver/storage]):
//
//	@main/<seg>…/versions.json
//	@main/<seg>…/1.0.0/registry.json
//	@main/<seg>…/1.0.0/templates/<file>
//	presets/<name>/preset.json
//
// and [Seed] copies it into a [storage.Storage] that holds no keys at all.
//
// # Registries
//
// Every registry is in the @main namespace at version 1.0.0. Presets and
// registryDependencies name registries by full identifier
// ("@main/runtimes/node") so that clients whose default namespace is not
// @main still resolve them.
//
//	@main/runtimes/node           (runtime, 1)  ES module package for Node.js >=20.19 ("type": "module", engines),
//	                                            .nvmrc, .gitignore, src/index.ts or src/index.js (languages ts/js)
//	@main/runtimes/typescript     (runtime, 1)  typescript, a strict NodeNext tsconfig.json, "typecheck" script;
//	                                            depends on runtimes/node
//	@main/build/typescript        (build, 3)    tsconfig.build.json (src → dist), "build" script;
//	                                            depends on runtimes/typescript
//	@main/build/library           (build, 3)    package.json main/types/exports/files, declarations in the build,
//	                                            "prepack" script; depends on build/typescript
//	@main/features/github-actions (feature, 4)  .github/workflows/ci.yml running npm ci and the project's scripts;
//	                                            depends on runtimes/node
//	@main/testing/vitest          (testing, 5)  vitest, vitest.config and test/index.test (languages ts/js),
//	                                            "test" scripts; depends on runtimes/node
//	@main/quality/eslint          (quality, 6)  eslint, @eslint/js, globals, eslint.config.js flat config
//	                                            (typescript-eslint for ts), "lint" scripts; depends on runtimes/node
//	@main/quality/prettier        (quality, 6)  prettier, .prettierrc, .prettierignore, "format" scripts
//	@main/quality/editorconfig    (quality, 6)  .editorconfig
//	@main/services/go-service     (framework, 2) ecosystem go: main.go with a /healthz route and its test,
//	                                            config.yaml, a distroless Dockerfile, .github/workflows/ci.yml
//	                                            (go vet, go test); jig writes go.mod, no package.json
//	@main/services/python-service (framework, 2) ecosystem python: pyproject.toml (uv, ruff, pytest),
//	                                            src/app, tests, CI; pytest and ruff as dev requirements
//
// The number after the type is the registry's priority, following the
// suggested order of the types.
//
// # Presets
//
//	node          runtimes/node, runtimes/typescript, build/typescript, testing/vitest, quality/eslint,
//	              quality/prettier, quality/editorconfig, features/github-actions (8 registries)
//	node-library  the node preset plus build/library (9 registries)
//	go-service      services/go-service (ecosystem go)
//	python-service  services/python-service (ecosystem python)
//
// A project assembled from either preset passes npm install, eslint .,
// tsc --noEmit, vitest run, prettier --check . and npm run build; the
// package's tests check this against the real npm registry when
// JIG_TEST_NPM=1 is set.
package catalog
