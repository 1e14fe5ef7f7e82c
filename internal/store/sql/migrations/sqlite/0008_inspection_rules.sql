-- Inspection rules of the bare metal API (1.96): the rule whole in body,
-- the columns lists filter and sort on beside it.
CREATE TABLE inspection_rules (
	id         INTEGER PRIMARY KEY,
	uuid       TEXT NOT NULL UNIQUE,
	priority   INTEGER NOT NULL DEFAULT 0,
	phase      TEXT NOT NULL DEFAULT 'main',
	sensitive  INTEGER NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL,
	updated_at TEXT,
	body       TEXT NOT NULL
);
CREATE INDEX inspection_rules_phase ON inspection_rules (phase);
