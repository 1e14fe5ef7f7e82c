-- Deploy templates (Ironic API 1.55): a trait-named set of deploy steps.
CREATE TABLE deploy_templates (
	id         INTEGER PRIMARY KEY,
	uuid       TEXT NOT NULL UNIQUE,
	name       TEXT NOT NULL UNIQUE,
	created_at TEXT NOT NULL,
	updated_at TEXT,
	body       TEXT NOT NULL
);
