-- The database the postgres suite replays against: load it, then point
-- RECALL_CONFORMANCE_PG_DSN at it as a role that is neither a superuser nor BYPASSRLS.
CREATE TABLE articles (
  id integer PRIMARY KEY,
  title text NOT NULL,
  body text NOT NULL,
  updated_at timestamptz NOT NULL,
  valid_until timestamptz,
  replaced_by integer,
  search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', title), 'A') || to_tsvector('english', body)
  ) STORED
);
CREATE INDEX articles_search ON articles USING gin (search);
INSERT INTO articles (id, title, body, updated_at, valid_until, replaced_by) VALUES
 (1, 'Backup policy', 'Nightly database backups run at 02:00 and are kept for thirty days.',
  '2025-03-01T00:00:00Z', NULL, NULL),
 (2, 'Old backup policy', 'Weekly database backups were kept for a year.',
  '2024-01-01T00:00:00Z', NULL, 1),
 (3, 'Kubernetes outage postmortem', 'The cluster lost quorum after an etcd upgrade; restore took an hour.',
  '2025-02-01T00:00:00Z', NULL, NULL),
 (4, 'Restore drill', 'Quarterly restore drill: restore the newest backup and compare checksums. '
  || 'Record the time each step takes, and file the report in the operations log before the next drill.',
  '2025-04-01T00:00:00Z', NULL, NULL),
 (5, 'Tape backups', 'Tape backups were retired at the end of 2020.',
  '2019-06-01T00:00:00Z', '2020-12-31T00:00:00Z', NULL);
-- a view that takes a second per row, so a search of it is still running when a cancel arrives
CREATE FUNCTION slow_body(body text) RETURNS text LANGUAGE sql VOLATILE AS
  $$ SELECT pg_sleep(1); SELECT body $$;
CREATE VIEW slow_articles AS SELECT id, title, slow_body(body) AS body, updated_at FROM articles;
GRANT SELECT ON articles, slow_articles TO PUBLIC;
ANALYZE articles;
