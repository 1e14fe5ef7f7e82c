-- Inspection rules of the bare metal API (1.96): the rule whole in body,
-- the columns lists filter and sort on beside it.
CREATE TABLE inspection_rules (
	id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	uuid       TEXT COLLATE "C" NOT NULL UNIQUE,
	priority   INTEGER NOT NULL DEFAULT 0,
	phase      TEXT COLLATE "C" NOT NULL DEFAULT 'main',
	sensitive  BOOLEAN NOT NULL DEFAULT FALSE,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ,
	body       JSON NOT NULL
);
CREATE INDEX inspection_rules_phase ON inspection_rules (phase);
