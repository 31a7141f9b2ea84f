-- store-v1.sql: a gpuq store at schema version 1, as the first release
-- wrote it, with a few rows. tests/unit/test-store.c opens a database made
-- from this text and checks that store_open() migrates it and keeps the
-- rows. Never edit the schema part: it is what version 1 was.
BEGIN;
CREATE TABLE meta (  key TEXT PRIMARY KEY,  value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE jobs (  id INTEGER PRIMARY KEY AUTOINCREMENT,  name TEXT,  state INTEGER NOT NULL,  priority INTEGER NOT NULL DEFAULT 0,  owner INTEGER NOT NULL,  spec TEXT NOT NULL,  labels TEXT,  created INTEGER NOT NULL,  updated INTEGER NOT NULL,  not_before INTEGER NOT NULL DEFAULT 0,  attempts INTEGER NOT NULL DEFAULT 0,  failures INTEGER NOT NULL DEFAULT 0,  interruptions INTEGER NOT NULL DEFAULT 0,  cost_usd REAL NOT NULL DEFAULT 0,  checkpoint TEXT,  checkpoint_at INTEGER NOT NULL DEFAULT 0,  why TEXT,  exit_code INTEGER NOT NULL DEFAULT -1,  message TEXT);
CREATE INDEX jobs_state ON jobs(state);
CREATE INDEX jobs_owner ON jobs(owner, id);
CREATE INDEX jobs_name ON jobs(name, id);
CREATE TABLE attempts (  id INTEGER PRIMARY KEY,  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,  number INTEGER NOT NULL,  state INTEGER NOT NULL,  provider TEXT NOT NULL,  region TEXT NOT NULL,  zone TEXT,  machine_type TEXT,  gpu TEXT,  gpu_count INTEGER NOT NULL DEFAULT 0,  resource TEXT NOT NULL,  spot INTEGER NOT NULL DEFAULT 0,  hourly_usd REAL NOT NULL DEFAULT 0,  created INTEGER NOT NULL,  started INTEGER NOT NULL DEFAULT 0,  ended INTEGER,  end_reason INTEGER NOT NULL DEFAULT 0,  exit_code INTEGER NOT NULL DEFAULT -1,  message TEXT,  cost_usd REAL NOT NULL DEFAULT 0,  UNIQUE (job_id, number));
CREATE TABLE events (  id INTEGER PRIMARY KEY,  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,  time INTEGER NOT NULL,  from_state INTEGER,  to_state INTEGER NOT NULL,  message TEXT);
CREATE INDEX events_job ON events(job_id, id);

INSERT INTO meta VALUES ('install_id', '0badcafe');
-- job 1 succeeded after one preempted Spot attempt; job 2 runs; job 3 waits.
INSERT INTO jobs (id, name, state, priority, owner, spec, labels, created,
    updated, attempts, interruptions, cost_usd, exit_code, message)
    VALUES (1, 'resnet', 5, 0, 1000, '{"name":"resnet"}', NULL,
    1700000000, 1700009000, 2, 1, 3.5, 0, NULL);
INSERT INTO jobs (id, name, state, priority, owner, spec, labels, created,
    updated, attempts)
    VALUES (2, 'bert', 4, 10, 1001, '{"name":"bert"}', '{"team":"nlp"}',
    1700000100, 1700000200, 1);
INSERT INTO jobs (id, name, state, priority, owner, spec, created, updated,
    why)
    VALUES (3, 'gpt', 1, 5, 1000, '{"name":"gpt"}', 1700000300,
    1700000300, 'no quota for nvidia-tesla-a100 in us-central1');
INSERT INTO attempts VALUES (1, 1, 1, 3, 'gce', 'us-central1',
    'us-central1-a', 'n1-standard-8', 'nvidia-tesla-t4', 1,
    'gpuq-0badcafe-1-1', 1, 0.35, 1700000000, 1700000060, 1700003660, 3,
    -1, 'preempted', 1.0);
INSERT INTO attempts VALUES (2, 1, 2, 3, 'gce', 'us-central1',
    'us-central1-b', 'n1-standard-8', 'nvidia-tesla-t4', 1,
    'gpuq-0badcafe-1-2', 1, 0.35, 1700003700, 1700003760, 1700009000, 1,
    0, NULL, 2.5);
INSERT INTO attempts VALUES (3, 2, 1, 2, 'vertex', 'us-east1', NULL,
    'a2-highgpu-1g', 'nvidia-tesla-a100', 1, 'gpuq-0badcafe-2-1', 0, 3.9,
    1700000150, 1700000200, NULL, 0, -1, NULL, 0);
INSERT INTO events (job_id, time, from_state, to_state, message) VALUES
    (1, 1700000000, NULL, 1, 'submitted'),
    (1, 1700009000, 4, 5, 'exit 0'),
    (2, 1700000100, NULL, 1, 'submitted'),
    (2, 1700000200, 3, 4, 'running'),
    (3, 1700000300, NULL, 1, 'submitted');
PRAGMA user_version = 1;
COMMIT;
