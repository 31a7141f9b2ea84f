-- store-v13.sql: a gpuq store at schema version 13 with jobs in every
-- state, of four priorities, two owners and three names, some in
-- backoff, some with a why. tests/unit/test-store.c reads its listings
-- with plain SQL, opens it (store_open() migrates it to the newest
-- version) and checks the store lists the same jobs in the same order.
-- Never edit the schema part: it is what version 13 was.
BEGIN;
CREATE TABLE meta (  key TEXT PRIMARY KEY,  value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE attempts (  id INTEGER PRIMARY KEY,  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,  number INTEGER NOT NULL,  state INTEGER NOT NULL,  provider TEXT NOT NULL,  region TEXT NOT NULL,  zone TEXT,  machine_type TEXT,  gpu TEXT,  gpu_count INTEGER NOT NULL DEFAULT 0,  resource TEXT NOT NULL,  spot INTEGER NOT NULL DEFAULT 0,  hourly_usd REAL NOT NULL DEFAULT 0,  created INTEGER NOT NULL,  started INTEGER NOT NULL DEFAULT 0,  ended INTEGER,  end_reason INTEGER NOT NULL DEFAULT 0,  exit_code INTEGER NOT NULL DEFAULT -1,  message TEXT,  cost_usd REAL NOT NULL DEFAULT 0, cloud_id TEXT, resumed_from TEXT, billed_start INTEGER NOT NULL  DEFAULT 0, billed_end INTEGER NOT NULL  DEFAULT 0, baseline_hourly_usd REAL NOT NULL  DEFAULT 0, baseline_usd REAL NOT NULL  DEFAULT 0, nodes INTEGER NOT NULL DEFAULT 1, capacity TEXT, reservation TEXT,  UNIQUE (job_id, number));
CREATE TABLE cooldowns (  zone TEXT NOT NULL,  gpu TEXT NOT NULL,  spot INTEGER NOT NULL,  until INTEGER NOT NULL,  strikes INTEGER NOT NULL,  last_strike INTEGER NOT NULL,  PRIMARY KEY (zone, gpu, spot)) WITHOUT ROWID;
CREATE INDEX attempts_live ON attempts(id) WHERE ended IS NULL;
CREATE INDEX attempts_spot ON attempts(ended)  WHERE spot = 1 AND ended IS NOT NULL;
CREATE TABLE IF NOT EXISTS "jobs" (  id INTEGER PRIMARY KEY,  name TEXT,  state INTEGER NOT NULL,  priority INTEGER NOT NULL DEFAULT 0,  owner INTEGER NOT NULL,  spec TEXT NOT NULL,  labels TEXT,  created INTEGER NOT NULL,  updated INTEGER NOT NULL,  not_before INTEGER NOT NULL DEFAULT 0,  attempts INTEGER NOT NULL DEFAULT 0,  failures INTEGER NOT NULL DEFAULT 0,  interruptions INTEGER NOT NULL DEFAULT 0,  cost_usd REAL NOT NULL DEFAULT 0,  checkpoint TEXT,  checkpoint_at INTEGER NOT NULL DEFAULT 0,  why TEXT,  exit_code INTEGER NOT NULL DEFAULT -1,  message TEXT,  gpu_type TEXT,  gpu_count INTEGER NOT NULL DEFAULT 0, array_id INTEGER, task_index INTEGER, baseline_usd REAL NOT NULL DEFAULT 0, nodes INTEGER NOT NULL DEFAULT 1, deadline INTEGER NOT NULL DEFAULT 0, deadline_safe INTEGER NOT NULL  DEFAULT 0);
CREATE TABLE IF NOT EXISTS "events" (  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,  seq INTEGER NOT NULL,  time INTEGER NOT NULL,  from_state INTEGER,  to_state INTEGER NOT NULL,  message TEXT,  PRIMARY KEY (job_id, seq)) WITHOUT ROWID;
CREATE INDEX jobs_array ON jobs(array_id, state)  WHERE array_id IS NOT NULL;
CREATE INDEX jobs_ended ON jobs(state, id)  WHERE (state > 4 AND state <> 7);
CREATE INDEX jobs_live ON jobs(id, state)  WHERE (state < 5 OR state = 7);
CREATE INDEX jobs_history ON jobs(updated, id)  WHERE (state > 4 AND state <> 7);
CREATE INDEX jobs_deadline ON jobs(id) WHERE deadline > 0  AND (state < 5 OR state = 7);
CREATE INDEX jobs_missed ON jobs(id) WHERE deadline > 0  AND (state = 5 OR state = 6) AND updated > deadline;
CREATE INDEX jobs_owner ON jobs(owner, id)  WHERE (state > 4 AND state <> 7);
CREATE INDEX jobs_name ON jobs(name, id)  WHERE (state > 4 AND state <> 7);
CREATE INDEX jobs_runnable ON jobs(priority DESC, id, not_before,  interruptions, cost_usd, why, state) WHERE state = 1;
PRAGMA user_version = 13;

INSERT INTO meta VALUES ('install_id', '0badc0de');
-- Job i: state i % 9 (every state), priority (i % 4) * 5 - 5, owner
-- 1000 + i % 2, name n0..n2, in backoff when i % 5 = 0, a why when
-- i % 3 = 0.
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n
    WHERE i < 60)
INSERT INTO jobs (id, name, state, priority, owner, spec, created,
    updated, not_before, interruptions, cost_usd, why, gpu_type,
    gpu_count)
    SELECT i, 'n' || (i % 3), i % 9, (i % 4) * 5 - 5, 1000 + i % 2,
    '{"name":"n' || (i % 3) || '","image":"x","accelerator":{"type":"nvidia-tesla-t4","count":1}}',
    1700000000 + i, 1700000000 + 2 * i,
    CASE WHEN i % 5 = 0 THEN 2000000000 ELSE 0 END, i % 4, i * 0.25,
    CASE WHEN i % 3 = 0 THEN 'waiting for ' || i END,
    'nvidia-tesla-t4', 1 FROM n;
COMMIT;
