-- Chassis, as Ironic's: nodes name theirs in their body's chassis_uuid.
CREATE TABLE chassis (
	id         INTEGER PRIMARY KEY,
	uuid       TEXT NOT NULL UNIQUE,
	created_at TEXT NOT NULL,
	updated_at TEXT,
	body       TEXT NOT NULL
);
