-- The census and the audit log (see package state).
-- +goose Up
CREATE TABLE census_namespaces (
  ns       TEXT COLLATE "C" PRIMARY KEY,
  projects BIGINT NOT NULL
);
CREATE TABLE census_reporters (
  ns       TEXT COLLATE "C" NOT NULL,
  reporter TEXT COLLATE "C" NOT NULL,
  projects BIGINT NOT NULL,
  PRIMARY KEY (ns, reporter)
);
CREATE TABLE census_projects (
  ns          TEXT COLLATE "C" NOT NULL,
  project     TEXT COLLATE "C" NOT NULL,
  reporter    TEXT COLLATE "C" NOT NULL,
  branch      TEXT COLLATE "C" NOT NULL,
  commit_id   TEXT COLLATE "C" NOT NULL,
  jig         TEXT COLLATE "C" NOT NULL,
  reported_at BIGINT NOT NULL,
  PRIMARY KEY (ns, project)
);
CREATE INDEX census_projects_age ON census_projects (reported_at);
CREATE TABLE census_entries (
  ns          TEXT COLLATE "C" NOT NULL,
  path        TEXT COLLATE "C" NOT NULL,
  project     TEXT COLLATE "C" NOT NULL,
  version     TEXT COLLATE "C" NOT NULL,
  version_key TEXT COLLATE "C" NOT NULL,
  state       TEXT COLLATE "C" NOT NULL,
  drifted     TEXT COLLATE "C" NOT NULL,
  not_taken   TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (ns, path, project)
);
CREATE INDEX census_entries_page ON census_entries (ns, path, version_key DESC, project);
CREATE INDEX census_entries_project ON census_entries (ns, project);
CREATE TABLE census_counts (
  ns       TEXT COLLATE "C" NOT NULL,
  path     TEXT COLLATE "C" NOT NULL,
  version  TEXT COLLATE "C" NOT NULL,
  clean    BIGINT NOT NULL,
  drifted  BIGINT NOT NULL,
  PRIMARY KEY (ns, path, version)
);
CREATE TABLE census_edited (
  ns       TEXT COLLATE "C" NOT NULL,
  path     TEXT COLLATE "C" NOT NULL,
  target   TEXT COLLATE "C" NOT NULL,
  projects BIGINT NOT NULL,
  PRIMARY KEY (ns, path, target)
);
CREATE INDEX census_edited_top ON census_edited (ns, path, projects DESC, target);
CREATE TABLE census_history (
  ns      TEXT COLLATE "C" NOT NULL,
  path    TEXT COLLATE "C" NOT NULL,
  day     TEXT COLLATE "C" NOT NULL,
  version TEXT COLLATE "C" NOT NULL,
  clean   BIGINT NOT NULL,
  drifted BIGINT NOT NULL,
  PRIMARY KEY (ns, path, day, version)
);
CREATE INDEX census_history_day ON census_history (day);
CREATE TABLE audit (
  id         BIGSERIAL PRIMARY KEY,
  at         BIGINT NOT NULL,
  actor      TEXT COLLATE "C" NOT NULL,
  action     TEXT COLLATE "C" NOT NULL,
  namespace  TEXT COLLATE "C" NOT NULL,
  target     TEXT COLLATE "C" NOT NULL,
  outcome    TEXT COLLATE "C" NOT NULL,
  request_id TEXT COLLATE "C" NOT NULL,
  client     TEXT COLLATE "C" NOT NULL,
  detail     TEXT COLLATE "C" NOT NULL
);
CREATE INDEX audit_at ON audit (at);
CREATE INDEX audit_actor ON audit (actor, id);
CREATE INDEX audit_namespace ON audit (namespace, id);
CREATE INDEX audit_action ON audit (action, id);
CREATE TABLE claims (
  key TEXT COLLATE "C" PRIMARY KEY,
  at  BIGINT NOT NULL
);

-- +goose Down
DROP TABLE claims;
DROP TABLE audit;
DROP TABLE census_history;
DROP TABLE census_edited;
DROP TABLE census_counts;
DROP TABLE census_entries;
DROP TABLE census_projects;
DROP TABLE census_reporters;
DROP TABLE census_namespaces;
