-- The attributes an introspection is looked up by when its report arrives:
-- MAC addresses (kind 'mac') and BMC addresses (kind 'bmc'), in lower case.
-- SaveIntrospection keeps them in step with the introspection's body.
CREATE TABLE introspection_lookup (
	node_uuid TEXT NOT NULL REFERENCES introspections (node_uuid) ON DELETE CASCADE,
	kind      TEXT NOT NULL,
	value     TEXT NOT NULL,
	PRIMARY KEY (node_uuid, kind, value)
);
CREATE INDEX introspection_lookup_value ON introspection_lookup (kind, value);
