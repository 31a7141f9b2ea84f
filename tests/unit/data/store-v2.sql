-- store-v2.sql: a gpuq store at schema version 2, as gpuqd 0.1 wrote it,
-- with a few rows. tests/unit/test-store.c opens a database made from this
-- text and checks that store_open() migrates it to version 3 (jobs rebuilt
-- without AUTOINCREMENT, with gpu_type and gpu_count read from each spec)
-- and keeps every row, and every attempt and event that points at a job.
-- Never edit the schema part: it is what version 2 was.
BEGIN;
CREATE TABLE meta (  key TEXT PRIMARY KEY,  value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE jobs (  id INTEGER PRIMARY KEY AUTOINCREMENT,  name TEXT,  state INTEGER NOT NULL,  priority INTEGER NOT NULL DEFAULT 0,  owner INTEGER NOT NULL,  spec TEXT NOT NULL,  labels TEXT,  created INTEGER NOT NULL,  updated INTEGER NOT NULL,  not_before INTEGER NOT NULL DEFAULT 0,  attempts INTEGER NOT NULL DEFAULT 0,  failures INTEGER NOT NULL DEFAULT 0,  interruptions INTEGER NOT NULL DEFAULT 0,  cost_usd REAL NOT NULL DEFAULT 0,  checkpoint TEXT,  checkpoint_at INTEGER NOT NULL DEFAULT 0,  why TEXT,  exit_code INTEGER NOT NULL DEFAULT -1,  message TEXT);
CREATE INDEX jobs_state ON jobs(state);
CREATE INDEX jobs_owner ON jobs(owner, id);
CREATE INDEX jobs_name ON jobs(name, id);
CREATE TABLE attempts (  id INTEGER PRIMARY KEY,  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,  number INTEGER NOT NULL,  state INTEGER NOT NULL,  provider TEXT NOT NULL,  region TEXT NOT NULL,  zone TEXT,  machine_type TEXT,  gpu TEXT,  gpu_count INTEGER NOT NULL DEFAULT 0,  resource TEXT NOT NULL,  spot INTEGER NOT NULL DEFAULT 0,  hourly_usd REAL NOT NULL DEFAULT 0,  created INTEGER NOT NULL,  started INTEGER NOT NULL DEFAULT 0,  ended INTEGER,  end_reason INTEGER NOT NULL DEFAULT 0,  exit_code INTEGER NOT NULL DEFAULT -1,  message TEXT,  cost_usd REAL NOT NULL DEFAULT 0, cloud_id TEXT, resumed_from TEXT,  UNIQUE (job_id, number));
CREATE TABLE events (  id INTEGER PRIMARY KEY,  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,  time INTEGER NOT NULL,  from_state INTEGER,  to_state INTEGER NOT NULL,  message TEXT);
CREATE INDEX events_job ON events(job_id, id);
CREATE TABLE cooldowns (  zone TEXT NOT NULL,  gpu TEXT NOT NULL,  spot INTEGER NOT NULL,  until INTEGER NOT NULL,  strikes INTEGER NOT NULL,  last_strike INTEGER NOT NULL,  PRIMARY KEY (zone, gpu, spot)) WITHOUT ROWID;
CREATE INDEX jobs_live ON jobs(id)  WHERE state IN (0,1,2,3,4,7);
CREATE INDEX jobs_runnable ON jobs(priority DESC, id, not_before)  WHERE state = 1;
CREATE INDEX attempts_live ON attempts(id) WHERE ended IS NULL;
CREATE INDEX attempts_spot ON attempts(ended)  WHERE spot = 1 AND ended IS NOT NULL;

INSERT INTO meta VALUES ('install_id', '0badf00d');
-- job 1 succeeded on 2 T4s; job 2 runs on an A100 with a live attempt;
-- job 3 waits; job 4's spec has no accelerator (written by hand).
INSERT INTO jobs (id, name, state, priority, owner, spec, labels, created,
    updated, attempts, cost_usd, exit_code)
    VALUES (1, 'resnet', 5, 0, 1000,
    '{"name":"resnet","image":"x","accelerator":{"type":"nvidia-tesla-t4","count":2}}',
    NULL, 1700000000, 1700009000, 1, 2.5, 0);
INSERT INTO jobs (id, name, state, priority, owner, spec, labels, created,
    updated, attempts)
    VALUES (2, 'bert', 4, 10, 1001,
    '{"name":"bert","image":"x","accelerator":{"type":"nvidia-tesla-a100","count":1}}',
    '{"team":"nlp"}', 1700000100, 1700000200, 1);
INSERT INTO jobs (id, name, state, priority, owner, spec, created, updated,
    why)
    VALUES (3, 'gpt', 1, 5, 1000,
    '{"name":"gpt","image":"x","accelerator":{"type":"nvidia-l4","count":8}}',
    1700000300, 1700000300, 'no quota for nvidia-l4 in us-central1');
INSERT INTO jobs (id, name, state, priority, owner, spec, created, updated)
    VALUES (4, 'cpu', 0, 0, 1002, '{"name":"cpu"}', 1700000400,
    1700000400);
INSERT INTO attempts VALUES (1, 1, 1, 3, 'gce', 'us-central1',
    'us-central1-a', 'n1-standard-8', 'nvidia-tesla-t4', 2,
    'gpuq-0badf00d-1-1', 1, 0.7, 1700000000, 1700000060, 1700009000, 1,
    0, NULL, 2.5, 'gpuq-0badf00d-1-1', NULL);
INSERT INTO attempts VALUES (2, 2, 1, 2, 'vertex', 'us-east1', NULL,
    'a2-highgpu-1g', 'nvidia-tesla-a100', 1, 'gpuq-0badf00d-2-1', 0, 3.9,
    1700000150, 1700000200, NULL, 0, -1, NULL, 0, '1234567', NULL);
INSERT INTO events (job_id, time, from_state, to_state, message) VALUES
    (1, 1700000000, NULL, 1, 'submitted'),
    (1, 1700009000, 4, 5, 'exit 0'),
    (2, 1700000100, NULL, 1, 'submitted'),
    (2, 1700000200, 3, 4, 'running'),
    (3, 1700000300, NULL, 1, 'submitted'),
    (4, 1700000400, NULL, 0, 'submitted, held');
INSERT INTO cooldowns VALUES ('us-central1-a', 'nvidia-tesla-t4', 1,
    1700003600, 1, 1700000000);
PRAGMA user_version = 2;
COMMIT;
