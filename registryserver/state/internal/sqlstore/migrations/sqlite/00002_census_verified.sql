-- Census reports bound to their repository (issue 40): the OIDC issuer
-- whose token verified a project's report ('' for a report sent with a
-- static token: unverified).
-- +goose Up
ALTER TABLE census_projects ADD COLUMN verified_by TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE census_projects DROP COLUMN verified_by;
