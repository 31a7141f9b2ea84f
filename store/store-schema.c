/*
 * store-schema.c: the schema and its forward migrations.
 *
 * PRAGMA user_version is the schema version. store_migrations[i] takes a
 * database from version i to i + 1, in one transaction that also sets
 * user_version, so a crash leaves either the old or the new version. A
 * shipped step is never edited: a change is a new step at the end. A
 * database newer than this code is refused, never touched.
 *
 * Version 1: jobs, attempts, events, meta.
 * Version 2: attempts.cloud_id and attempts.resumed_from, cooldowns, and
 *            the partial indexes that keep live listings fast when most
 *            jobs are finished.
 * Version 3: jobs.gpu_type and jobs.gpu_count, copied from the spec's
 *            accelerator at insert, so a listing never parses specs;
 *            jobs without AUTOINCREMENT (a submit no longer updates a
 *            sqlite_sequence row: one page less per commit).
 * Version 4: fewer B-trees written per submit. jobs_state (every job)
 *            becomes jobs_ended (ended jobs only: a submit, or a move
 *            between live states, no longer writes it); jobs_live also
 *            holds the state, so live counts read only that index; events
 *            is clustered by job (WITHOUT ROWID, key (job_id, seq)): one
 *            B-tree where a table and its events_job index were two.
 * Version 5: jobs.array_id and jobs.task_index: the tasks of a job array
 *            are rows of jobs (doc/DESIGN.md "Arrays and dependencies"),
 *            array_id the id of task 0; jobs_array (partial: tasks only)
 *            counts an array's tasks per state without reading rows.
 * Version 6: what an attempt is billed (doc/DESIGN.md "Accounting"):
 *            attempts.billed_start and billed_end, the cloud's own
 *            start and end of the attempt (0: it gave none), and the
 *            baseline, baseline_hourly_usd (an on-demand Vertex AI
 *            custom job of the same shape in the job's first region)
 *            and baseline_usd (jobs.baseline_usd sums the job's, as
 *            jobs.cost_usd does its cost); jobs_history, the ended
 *            jobs by the time they ended, for gpuq history.
 * Version 7: jobs.nodes and attempts.nodes, the machines of a gang
 *            (doc/DESIGN.md "Gangs"), 1 for every job before them.
 * Version 8: jobs_live, jobs_ended and jobs_history rebuilt on
 *            STORE_LIVE_WHERE and STORE_ENDED_WHERE (comparisons)
 *            instead of an IN list of the live states, which SQLite
 *            turned into a temporary B-tree per index each time a job
 *            row was written: submits and state changes write less.
 * Version 9: deadlines (doc/DESIGN.md "Deadlines"): jobs.deadline, the
 *            spec's deadline in unix seconds (0: none), and the sticky
 *            jobs.deadline_safe, set once the job may no longer use
 *            preemptible capacity; jobs_deadline (partial: live jobs
 *            with a deadline) lets each pass find them without a scan,
 *            jobs_missed (succeeded or failed after their deadline)
 *            counts the misses for metrics.
 * Version 10: attempts.capacity, the kind of capacity the attempt runs
 *            on ("standard", "spot", "flex", "reserved"; doc/DESIGN.md
 *            "Capacity kinds"); NULL before it: spot says Spot or
 *            standard. spot keeps meaning preemptible Spot. The
 *            cooldowns' spot column holds the kind's number (0
 *            standard, 1 Spot as ever, 2 flex, 3 reserved).
 * Version 11: attempts.reservation, the Compute Engine reservation an
 *            attempt consumes (doc/DESIGN.md "Reservations"), NULL for
 *            every other attempt, so a re-launch names it again.
 * Version 12: jobs_owner and jobs_name hold ended jobs only
 *            (STORE_ENDED_WHERE), like jobs_ended: a submit writes three
 *            B-trees (jobs, jobs_live, jobs_runnable), not five, so
 *            each acknowledged submit appends and syncs fewer WAL pages.
 *            A listing by owner or name without a live-state filter
 *            merges jobs_live's walk with theirs (store_list_sql).
 * Version 13: jobs_runnable also holds interruptions, cost_usd, why and
 *            state, all the scheduler reads of a queued job it already
 *            knows (doc/DESIGN.md "The pass"): its read of the whole
 *            queue walks that index alone, about 10 MB at 100,000
 *            jobs, and not every row with its spec (70 MB). state,
 *            though the index's own condition makes it 1, because
 *            SQLite covers a query only with every column it names.
 *            Still three B-trees per submit; a why written to a queued
 *            job writes the index entry too.
 * Version 14: a queued submit writes two B-trees, jobs and
 *            jobs_runnable, not three. jobs_runnable is keyed by id
 *            (the same columns, so it still covers the scheduler's
 *            read, which now orders by priority in C: store-queue.c),
 *            and jobs_live gives way to jobs_others, the live jobs
 *            that are not queued (STORE_OTHERS_WHERE: held, launching,
 *            pending, running, cancelling), which a submit does not
 *            write. The live jobs in id order are the two walks merged
 *            (store_list_sql); live counts read the two and jobs_ended.
 *
 * Steps run with foreign keys off, as SQLite's table rebuild procedure
 * asks (https://sqlite.org/lang_altertable.html#otheralter: dropping the
 * old jobs table must not cascade into attempts and events), and check
 * PRAGMA foreign_key_check before they commit.
 *
 * States and end reasons are stored as their enum numbers (store.h);
 * STORE_LIVE_SQL names the live ones for the partial indexes of versions
 * 2 to 7, STORE_LIVE_WHERE and STORE_ENDED_WHERE those from version 8,
 * STORE_OTHERS_WHERE jobs_others' from version 14.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/xmalloc.h"
#include "store/store-int.h"

static const char *const store_migrations[] = {
	/* 0 → 1 */
	"CREATE TABLE meta ("
	"  key TEXT PRIMARY KEY,"
	"  value TEXT NOT NULL"
	") WITHOUT ROWID;"
	"CREATE TABLE jobs ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  name TEXT,"
	"  state INTEGER NOT NULL,"
	"  priority INTEGER NOT NULL DEFAULT 0,"
	"  owner INTEGER NOT NULL,"
	"  spec TEXT NOT NULL,"
	"  labels TEXT,"
	"  created INTEGER NOT NULL,"
	"  updated INTEGER NOT NULL,"
	"  not_before INTEGER NOT NULL DEFAULT 0,"
	"  attempts INTEGER NOT NULL DEFAULT 0,"
	"  failures INTEGER NOT NULL DEFAULT 0,"
	"  interruptions INTEGER NOT NULL DEFAULT 0,"
	"  cost_usd REAL NOT NULL DEFAULT 0,"
	"  checkpoint TEXT,"
	"  checkpoint_at INTEGER NOT NULL DEFAULT 0,"
	"  why TEXT,"
	"  exit_code INTEGER NOT NULL DEFAULT -1,"
	"  message TEXT"
	");"
	"CREATE INDEX jobs_state ON jobs(state);"
	"CREATE INDEX jobs_owner ON jobs(owner, id);"
	"CREATE INDEX jobs_name ON jobs(name, id);"
	"CREATE TABLE attempts ("
	"  id INTEGER PRIMARY KEY,"
	"  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	"  number INTEGER NOT NULL,"
	"  state INTEGER NOT NULL,"
	"  provider TEXT NOT NULL,"
	"  region TEXT NOT NULL,"
	"  zone TEXT,"
	"  machine_type TEXT,"
	"  gpu TEXT,"
	"  gpu_count INTEGER NOT NULL DEFAULT 0,"
	"  resource TEXT NOT NULL,"
	"  spot INTEGER NOT NULL DEFAULT 0,"
	"  hourly_usd REAL NOT NULL DEFAULT 0,"
	"  created INTEGER NOT NULL,"
	"  started INTEGER NOT NULL DEFAULT 0,"
	"  ended INTEGER,"
	"  end_reason INTEGER NOT NULL DEFAULT 0,"
	"  exit_code INTEGER NOT NULL DEFAULT -1,"
	"  message TEXT,"
	"  cost_usd REAL NOT NULL DEFAULT 0,"
	"  UNIQUE (job_id, number)"
	");"
	"CREATE TABLE events ("
	"  id INTEGER PRIMARY KEY,"
	"  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	"  time INTEGER NOT NULL,"
	"  from_state INTEGER,"
	"  to_state INTEGER NOT NULL,"
	"  message TEXT"
	");"
	"CREATE INDEX events_job ON events(job_id, id);",

	/* 1 → 2 */
	"ALTER TABLE attempts ADD COLUMN cloud_id TEXT;"
	"ALTER TABLE attempts ADD COLUMN resumed_from TEXT;"
	"CREATE TABLE cooldowns ("
	"  zone TEXT NOT NULL,"
	"  gpu TEXT NOT NULL,"
	"  spot INTEGER NOT NULL,"
	"  until INTEGER NOT NULL,"
	"  strikes INTEGER NOT NULL,"
	"  last_strike INTEGER NOT NULL,"
	"  PRIMARY KEY (zone, gpu, spot)"
	") WITHOUT ROWID;"
	"CREATE INDEX jobs_live ON jobs(id)"
	"  WHERE state IN (" STORE_LIVE_SQL ");"
	"CREATE INDEX jobs_runnable ON jobs(priority DESC, id, not_before)"
	"  WHERE state = 1;"
	"CREATE INDEX attempts_live ON attempts(id) WHERE ended IS NULL;"
	"CREATE INDEX attempts_spot ON attempts(ended)"
	"  WHERE spot = 1 AND ended IS NOT NULL;",

	/*
	 * 2 → 3: rebuild jobs. Ids are kept. Without AUTOINCREMENT a new
	 * job gets max(id) + 1; ids are still never reused because jobs
	 * are never deleted (attempts and events point at them forever).
	 */
	"CREATE TABLE jobs_v3 ("
	"  id INTEGER PRIMARY KEY,"
	"  name TEXT,"
	"  state INTEGER NOT NULL,"
	"  priority INTEGER NOT NULL DEFAULT 0,"
	"  owner INTEGER NOT NULL,"
	"  spec TEXT NOT NULL,"
	"  labels TEXT,"
	"  created INTEGER NOT NULL,"
	"  updated INTEGER NOT NULL,"
	"  not_before INTEGER NOT NULL DEFAULT 0,"
	"  attempts INTEGER NOT NULL DEFAULT 0,"
	"  failures INTEGER NOT NULL DEFAULT 0,"
	"  interruptions INTEGER NOT NULL DEFAULT 0,"
	"  cost_usd REAL NOT NULL DEFAULT 0,"
	"  checkpoint TEXT,"
	"  checkpoint_at INTEGER NOT NULL DEFAULT 0,"
	"  why TEXT,"
	"  exit_code INTEGER NOT NULL DEFAULT -1,"
	"  message TEXT,"
	"  gpu_type TEXT,"
	"  gpu_count INTEGER NOT NULL DEFAULT 0"
	");"
	"INSERT INTO jobs_v3 (id, name, state, priority, owner, spec, labels,"
	"  created, updated, not_before, attempts, failures, interruptions,"
	"  cost_usd, checkpoint, checkpoint_at, why, exit_code, message,"
	"  gpu_type, gpu_count)"
	"  SELECT id, name, state, priority, owner, spec, labels, created,"
	"  updated, not_before, attempts, failures, interruptions, cost_usd,"
	"  checkpoint, checkpoint_at, why, exit_code, message,"
	"  CASE WHEN json_valid(spec)"
	"    THEN json_extract(spec, '$.accelerator.type') END,"
	"  CASE WHEN json_valid(spec)"
	"    THEN coalesce(json_extract(spec, '$.accelerator.count'), 0)"
	"    ELSE 0 END"
	"  FROM jobs ORDER BY id;"
	"DROP TABLE jobs;"
	"ALTER TABLE jobs_v3 RENAME TO jobs;"
	"CREATE INDEX jobs_state ON jobs(state);"
	"CREATE INDEX jobs_owner ON jobs(owner, id);"
	"CREATE INDEX jobs_name ON jobs(name, id);"
	"CREATE INDEX jobs_live ON jobs(id)"
	"  WHERE state IN (" STORE_LIVE_SQL ");"
	"CREATE INDEX jobs_runnable ON jobs(priority DESC, id, not_before)"
	"  WHERE state = 1;",

	/*
	 * 3 → 4: events keep their order within a job as seq 1, 2, ...;
	 * the old global ids were never on the wire.
	 */
	"DROP INDEX jobs_state;"
	"CREATE INDEX jobs_ended ON jobs(state, id)"
	"  WHERE state NOT IN (" STORE_LIVE_SQL ");"
	"DROP INDEX jobs_live;"
	"CREATE INDEX jobs_live ON jobs(id, state)"
	"  WHERE state IN (" STORE_LIVE_SQL ");"
	"CREATE TABLE events_v4 ("
	"  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	"  seq INTEGER NOT NULL,"
	"  time INTEGER NOT NULL,"
	"  from_state INTEGER,"
	"  to_state INTEGER NOT NULL,"
	"  message TEXT,"
	"  PRIMARY KEY (job_id, seq)"
	") WITHOUT ROWID;"
	"INSERT INTO events_v4 (job_id, seq, time, from_state, to_state,"
	"  message)"
	"  SELECT job_id, row_number() OVER (PARTITION BY job_id ORDER BY id),"
	"  time, from_state, to_state, message FROM events;"
	"DROP TABLE events;"
	"ALTER TABLE events_v4 RENAME TO events;",

	/* 4 → 5: task rows in jobs; plain jobs keep NULLs (no rewrite). */
	"ALTER TABLE jobs ADD COLUMN array_id INTEGER;"
	"ALTER TABLE jobs ADD COLUMN task_index INTEGER;"
	"CREATE INDEX jobs_array ON jobs(array_id, state)"
	"  WHERE array_id IS NOT NULL;",

	/* 5 → 6 */
	"ALTER TABLE attempts ADD COLUMN billed_start INTEGER NOT NULL"
	"  DEFAULT 0;"
	"ALTER TABLE attempts ADD COLUMN billed_end INTEGER NOT NULL"
	"  DEFAULT 0;"
	"ALTER TABLE attempts ADD COLUMN baseline_hourly_usd REAL NOT NULL"
	"  DEFAULT 0;"
	"ALTER TABLE attempts ADD COLUMN baseline_usd REAL NOT NULL"
	"  DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN baseline_usd REAL NOT NULL DEFAULT 0;"
	"CREATE INDEX jobs_history ON jobs(updated, id)"
	"  WHERE state NOT IN (" STORE_LIVE_SQL ");",

	/*
	 * 6 → 7: gangs. A spec before them has no nodes: one machine.
	 * (Parenthesized: clang's -Wstring-concatenation takes a step of
	 * two literals for a missing comma.)
	 */
	("ALTER TABLE jobs ADD COLUMN nodes INTEGER NOT NULL DEFAULT 1;"
	"ALTER TABLE attempts ADD COLUMN nodes INTEGER NOT NULL DEFAULT 1;"),

	/* 7 → 8: the same partial indexes, on comparisons. */
	("DROP INDEX jobs_ended;"
	"CREATE INDEX jobs_ended ON jobs(state, id)"
	"  WHERE " STORE_ENDED_WHERE("state") ";"
	"DROP INDEX jobs_live;"
	"CREATE INDEX jobs_live ON jobs(id, state)"
	"  WHERE " STORE_LIVE_WHERE("state") ";"
	"DROP INDEX jobs_history;"
	"CREATE INDEX jobs_history ON jobs(updated, id)"
	"  WHERE " STORE_ENDED_WHERE("state") ";"),

	/* 8 → 9: deadlines; jobs before them have none. */
	("ALTER TABLE jobs ADD COLUMN deadline INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN deadline_safe INTEGER NOT NULL"
	"  DEFAULT 0;"
	"CREATE INDEX jobs_deadline ON jobs(id) WHERE deadline > 0"
	"  AND " STORE_LIVE_WHERE("state") ";"
	"CREATE INDEX jobs_missed ON jobs(id) WHERE deadline > 0"
	"  AND (state = 5 OR state = 6) AND updated > deadline;"),

	/* 9 → 10: capacity kinds; NULL for the attempts before them. */
	"ALTER TABLE attempts ADD COLUMN capacity TEXT;",

	/* 10 → 11: reservations; earlier attempts consumed none. */
	"ALTER TABLE attempts ADD COLUMN reservation TEXT;",

	/* 11 → 12: owner and name indexes of ended jobs only. */
	("DROP INDEX jobs_owner;"
	"CREATE INDEX jobs_owner ON jobs(owner, id)"
	"  WHERE " STORE_ENDED_WHERE("state") ";"
	"DROP INDEX jobs_name;"
	"CREATE INDEX jobs_name ON jobs(name, id)"
	"  WHERE " STORE_ENDED_WHERE("state") ";"),

	/* 12 → 13: jobs_runnable covers the scheduler's read. */
	("DROP INDEX jobs_runnable;"
	"CREATE INDEX jobs_runnable ON jobs(priority DESC, id, not_before,"
	"  interruptions, cost_usd, why, state) WHERE state = 1;"),

	/*
	 * 13 → 14: jobs_runnable by id, and jobs_live without the queued
	 * jobs it holds: a queued submit writes jobs and jobs_runnable.
	 */
	("DROP INDEX jobs_runnable;"
	"CREATE INDEX jobs_runnable ON jobs(id, priority, not_before,"
	"  interruptions, cost_usd, why, state) WHERE state = 1;"
	"DROP INDEX jobs_live;"
	"CREATE INDEX jobs_others ON jobs(id, state)"
	"  WHERE " STORE_OTHERS_WHERE("state") ";"),
};
#define STORE_NMIGRATIONS \
	(int)(sizeof store_migrations / sizeof store_migrations[0])

/* Schema version this code writes. */
int
store_schema_version(void)
{
	return STORE_NMIGRATIONS;
}

static int
store_schema_get(struct store *st, int *ret, char **cause)
{
	sqlite3_stmt	*s;
	int		 rc;

	rc = sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return store_fail(st, rc, cause, "read schema version");
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		rc = store_fail(st, rc, cause, "read schema version");
		sqlite3_finalize(s);
		return rc;
	}
	*ret = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return 0;
}

/*
 * After step FROM, inside its transaction: every foreign key must still
 * hold (the step ran with them off). 0, or -EIO naming the first orphan.
 */
static int
store_schema_fk_check(struct store *st, int from, char **cause)
{
	sqlite3_stmt	*s;
	int		 rc;

	rc = sqlite3_prepare_v2(st->db, "PRAGMA foreign_key_check", -1, &s,
	    NULL);
	if (rc != SQLITE_OK)
		return store_fail(st, rc, cause, "check migration to %d",
		    from + 1);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		if (cause != NULL)
			*cause = xprintf("%s: after migration to schema %d, "
			    "%s row %lld points at a missing %s row; nothing "
			    "was changed (fix or delete that row)", st->path,
			    from + 1,
			    sqlite3_column_text(s, 0),
			    (long long)sqlite3_column_int64(s, 1),
			    sqlite3_column_text(s, 2));
		sqlite3_finalize(s);
		return -EIO;
	}
	if (rc != SQLITE_DONE) {
		rc = store_fail(st, rc, cause, "check migration to %d",
		    from + 1);
		sqlite3_finalize(s);
		return rc;
	}
	sqlite3_finalize(s);
	return 0;
}

/* Run one migration step, FROM → FROM + 1, in its own transaction. */
static int
store_schema_step(struct store *st, int from, char **cause)
{
	char	*sql;
	int	 rc, now;

	rc = sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return store_fail(st, rc, cause, "begin migration to %d",
		    from + 1);
	/* Another process may have migrated while we waited. */
	if ((rc = store_schema_get(st, &now, cause)) != 0)
		goto fail;
	if (now != from) {
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return 0;
	}
	rc = sqlite3_exec(st->db, store_migrations[from], NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		rc = store_fail(st, rc, cause, "migrate schema %d to %d",
		    from, from + 1);
		goto fail;
	}
	if ((rc = store_schema_fk_check(st, from, cause)) != 0)
		goto fail;
	sql = xprintf("PRAGMA user_version = %d", from + 1);
	rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
	free(sql);
	if (rc != SQLITE_OK) {
		rc = store_fail(st, rc, cause, "set schema version %d",
		    from + 1);
		goto fail;
	}
	rc = sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		rc = store_fail(st, rc, cause, "commit migration to %d",
		    from + 1);
		goto fail;
	}
	return 0;

fail:
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/*
 * Bring the database to store_schema_version(). -EPROTO if it is newer
 * than this code knows. Call with foreign keys off (store_open turns
 * them on afterwards): a step may rebuild a table others point at.
 */
int
store_schema_migrate(struct store *st, char **cause)
{
	int	rc, v;

	if ((rc = store_schema_get(st, &v, cause)) != 0)
		return rc;
	if (v > STORE_NMIGRATIONS) {
		if (cause != NULL)
			*cause = xprintf("%s: schema version %d is newer than "
			    "this gpuqd understands (%d); run the gpuqd that "
			    "wrote it, or a newer one", st->path, v,
			    STORE_NMIGRATIONS);
		return -EPROTO;
	}
	if (v < 0) {
		if (cause != NULL)
			*cause = xprintf("%s: bad schema version %d", st->path,
			    v);
		return -EIO;
	}
	if (v == STORE_NMIGRATIONS)
		return 0;
	for (; v < STORE_NMIGRATIONS; v++) {
		if ((rc = store_schema_step(st, v, cause)) != 0)
			return rc;
	}
	/*
	 * A step may rewrite a whole table: give the WAL that grew for it
	 * back to the file system rather than keep it while gpuqd runs.
	 * Only a reader elsewhere can stop that, and then it stays.
	 */
	(void)sqlite3_exec(st->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL,
	    NULL, NULL);
	return 0;
}
