/*
 * bench-fill.c: make a queue database of many jobs for bench/status,
 * through the store's own API (store/store.h), so the file is exactly
 * what gpuqd would have written: N jobs, all but ACTIVE of them
 * finished (succeeded, failed or cancelled, with their events), the
 * ACTIVE ones queued or held. With a fourth argument 1 each finished
 * job also has one ended attempt with the cloud's billed times, cost
 * and Vertex AI baseline (bench/history).
 *
 * There is no op to finish a job without the cloud, hence this program.
 * Fill on a tmpfs (each store call commits with synchronous=FULL) and
 * copy the file to the state directory afterwards.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"

#define FILL_BATCH	1000

/* A normalized spec, as daemon/spec.c stores one. */
static const char fill_spec[] =
    "{\"name\":\"bench-%06ld\",\"image\":"
    "\"pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime\","
    "\"command\":[\"torchrun\",\"--nproc_per_node=2\",\"train.py\"],"
    "\"args\":[\"--lr\",\"0.01\"],\"env\":{\"EPOCHS\":\"90\"},"
    "\"accelerator\":{\"type\":\"nvidia-tesla-t4\",\"count\":2},"
    "\"machine_type\":\"n1-highmem-8\",\"spot\":\"allow\","
    "\"max_hourly_usd\":3.0,\"estimated_hours\":1.0,"
    "\"max_runtime\":86400,\"max_interruptions\":20,\"max_failures\":0,"
    "\"checkpoint\":{\"interval\":1800},\"priority\":0,"
    "\"labels\":{\"team\":\"vision\"}}";

static void __attribute__((noreturn))
fail(const char *what, int rc, char *cause)
{
	fprintf(stderr, "bench-fill: %s: %s (%d)\n", what,
	    cause ? cause : "error", rc);
	exit(1);
}

int
main(int argc, char **argv)
{
	struct store_job_new	 nj[FILL_BATCH];
	struct store		*st;
	char			*specs[FILL_BATCH], names[FILL_BATCH][32];
	char			*cause = NULL;
	int64_t			 ids[FILL_BATCH];
	long			 n, active, done = 0, i, k, m, finished = 0;
	struct store_attempt	 a;
	struct store_end	 e;
	int			 rc, to, with_attempts;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: bench-fill DBFILE JOBS ACTIVE "
		    "[ATTEMPTS]\n");
		return 2;
	}
	with_attempts = argc == 5 && atoi(argv[4]) != 0;
	n = atol(argv[2]);
	active = atol(argv[3]);
	if ((rc = store_open(argv[1], &st, &cause)) != 0)
		fail(argv[1], rc, cause);
	while (done < n) {
		m = n - done < FILL_BATCH ? n - done : FILL_BATCH;
		for (i = 0; i < m; i++) {
			snprintf(names[i], sizeof names[i], "bench-%06ld",
			    done + i + 1);
			if (asprintf(&specs[i], fill_spec, done + i + 1) < 0)
				fail("asprintf", -1, NULL);
			memset(&nj[i], 0, sizeof nj[i]);
			nj[i].name = names[i];
			nj[i].owner = (uid_t)(1000 + (done + i) % 7);
			nj[i].spec = specs[i];
			nj[i].labels = "{\"team\":\"vision\"}";
			nj[i].held = (done + i) % 50 == 0;
		}
		rc = store_jobs_insert(st, nj, (size_t)m, ids, &cause);
		if (rc != 0)
			fail("insert", rc, cause);
		for (i = 0; i < m; i++) {
			free(specs[i]);
			/*
			 * Spread the active ones over the whole id range,
			 * as a real queue's stragglers are.
			 */
			k = done + i;
			if ((k * active) / n != ((k + 1) * active) / n)
				continue;
			to = k % 20 == 0 ? JOB_FAILED : k % 20 == 1 ?
			    JOB_CANCELLED : JOB_SUCCEEDED;
			if (with_attempts && to != JOB_CANCELLED) {
				memset(&a, 0, sizeof a);
				a.job_id = ids[i];
				a.provider = k % 3 == 0 ? "gce" : k % 3 == 1 ?
				    "batch" : "vertex";
				a.region = "us-central1";
				a.machine_type = "n1-highmem-8";
				a.gpu = "nvidia-tesla-t4";
				a.gpu_count = 2;
				a.resource = names[i];
				a.spot = 1;
				a.hourly_usd = 0.5;
				a.baseline_hourly_usd = 1.6;
				a.exit_code = -1;
				rc = store_attempt_insert(st, &a, &cause);
				if (rc == 0)
					rc = store_attempt_set_billed(st, a.id,
					    1000000 + k, &cause);
				memset(&e, 0, sizeof e);
				e.attempt_id = a.id;
				e.when = 1000000 + k + 3600;
				e.reason = to == JOB_FAILED ? END_FAILED :
				    END_SUCCEEDED;
				e.exit_code = to == JOB_FAILED ? 1 : 0;
				e.cost_usd = 0.5;
				e.billed_end = 1000000 + k + 3600;
				e.baseline_usd = 1.6;
				if (rc == 0)
					rc = store_attempt_end_with(st, &e,
					    &cause);
				if (rc != 0)
					fail("attempt", rc, cause);
			}
			rc = store_job_transition(st, ids[i],
			    JOB_MASK(JOB_QUEUED) | JOB_MASK(JOB_HELD), to,
			    "finished by bench-fill", NULL, &cause);
			if (rc != 0)
				fail("transition", rc, cause);
			finished++;
		}
		done += m;
	}
	store_close(st);
	printf("%s: %ld jobs, %ld finished, %ld active\n", argv[1], n,
	    finished, n - finished);
	return 0;
}
