-- The census and the audit log (see package state).
-- +goose Up
CREATE TABLE census_namespaces (
  ns       TEXT PRIMARY KEY,
  projects INTEGER NOT NULL
);
CREATE TABLE census_reporters (
  ns       TEXT NOT NULL,
  reporter TEXT NOT NULL,
  projects INTEGER NOT NULL,
  PRIMARY KEY (ns, reporter)
);
CREATE TABLE census_projects (
  ns          TEXT NOT NULL,
  project     TEXT NOT NULL,
  reporter    TEXT NOT NULL,
  branch      TEXT NOT NULL,
  commit_id   TEXT NOT NULL,
  jig         TEXT NOT NULL,
  reported_at INTEGER NOT NULL,
  PRIMARY KEY (ns, project)
);
CREATE INDEX census_projects_age ON census_projects (reported_at);
CREATE TABLE census_entries (
  ns          TEXT NOT NULL,
  path        TEXT NOT NULL,
  project     TEXT NOT NULL,
  version     TEXT NOT NULL,
  version_key TEXT NOT NULL,
  state       TEXT NOT NULL,
  drifted     TEXT NOT NULL,
  not_taken   TEXT NOT NULL,
  PRIMARY KEY (ns, path, project)
);
CREATE INDEX census_entries_page ON census_entries (ns, path, version_key DESC, project);
CREATE INDEX census_entries_project ON census_entries (ns, project);
CREATE TABLE census_counts (
  ns       TEXT NOT NULL,
  path     TEXT NOT NULL,
  version  TEXT NOT NULL,
  clean    INTEGER NOT NULL,
  drifted  INTEGER NOT NULL,
  PRIMARY KEY (ns, path, version)
);
CREATE TABLE census_edited (
  ns       TEXT NOT NULL,
  path     TEXT NOT NULL,
  target   TEXT NOT NULL,
  projects INTEGER NOT NULL,
  PRIMARY KEY (ns, path, target)
);
CREATE INDEX census_edited_top ON census_edited (ns, path, projects DESC, target);
CREATE TABLE census_history (
  ns      TEXT NOT NULL,
  path    TEXT NOT NULL,
  day     TEXT NOT NULL,
  version TEXT NOT NULL,
  clean   INTEGER NOT NULL,
  drifted INTEGER NOT NULL,
  PRIMARY KEY (ns, path, day, version)
);
CREATE INDEX census_history_day ON census_history (day);
CREATE TABLE audit (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  at         INTEGER NOT NULL,
  actor      TEXT NOT NULL,
  action     TEXT NOT NULL,
  namespace  TEXT NOT NULL,
  target     TEXT NOT NULL,
  outcome    TEXT NOT NULL,
  request_id TEXT NOT NULL,
  client     TEXT NOT NULL,
  detail     TEXT NOT NULL
);
CREATE INDEX audit_at ON audit (at);
CREATE INDEX audit_actor ON audit (actor, id);
CREATE INDEX audit_namespace ON audit (namespace, id);
CREATE INDEX audit_action ON audit (action, id);
CREATE TABLE claims (
  key TEXT PRIMARY KEY,
  at  INTEGER NOT NULL
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
