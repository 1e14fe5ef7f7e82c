-- A process with the api role alone registers too, so that conductors see
-- the node locks it holds as alive; it runs no periodic work and is left
-- out of the hash ring and of GET /v1/conductors.
ALTER TABLE conductors ADD COLUMN api_only BOOLEAN NOT NULL DEFAULT FALSE;
