-- Runbooks (Ironic API 1.92, traits 1.112): named steps for manual
-- cleaning and servicing. The runbook whole in body (steps, traits, extra,
-- description, disable_ramdisk); beside it the columns that identify it
-- and that a project's list filters on (its owner, or public).
CREATE TABLE runbooks (
	id         INTEGER PRIMARY KEY,
	uuid       TEXT NOT NULL UNIQUE,
	name       TEXT NOT NULL UNIQUE,
	owner      TEXT,
	public     INTEGER NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL,
	updated_at TEXT,
	body       TEXT NOT NULL
);
CREATE INDEX runbooks_owner ON runbooks (owner);
