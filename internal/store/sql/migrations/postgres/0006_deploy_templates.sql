-- Deploy templates (Ironic API 1.55): a trait-named set of deploy steps.
CREATE TABLE deploy_templates (
	id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	uuid       TEXT COLLATE "C" NOT NULL UNIQUE,
	name       TEXT COLLATE "C" NOT NULL UNIQUE,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ,
	body       JSON NOT NULL
);
