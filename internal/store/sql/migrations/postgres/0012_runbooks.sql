-- Runbooks (Ironic API 1.92, traits 1.112): named steps for manual
-- cleaning and servicing. The runbook whole in body (steps, traits, extra,
-- description, disable_ramdisk); beside it the columns that identify it
-- and that a project's list filters on (its owner, or public).
CREATE TABLE runbooks (
	id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	uuid       TEXT COLLATE "C" NOT NULL UNIQUE,
	name       TEXT COLLATE "C" NOT NULL UNIQUE,
	owner      TEXT COLLATE "C",
	public     BOOLEAN NOT NULL DEFAULT FALSE,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ,
	body       JSON NOT NULL
);
CREATE INDEX runbooks_owner ON runbooks (owner);
