/*
 * store-names.c: the words for job states, attempt states and end
 * reasons, as gpuq prints them and the wire carries them. The numbers
 * are what the database stores: never reorder an enum without a
 * migration.
 */
#include "config.h"

#include <string.h>

#include "store/store.h"

static const char *const job_state_names[JOB_NSTATES] = {
	[JOB_HELD] = "held",
	[JOB_QUEUED] = "queued",
	[JOB_LAUNCHING] = "launching",
	[JOB_PENDING] = "pending",
	[JOB_RUNNING] = "running",
	[JOB_SUCCEEDED] = "succeeded",
	[JOB_FAILED] = "failed",
	[JOB_CANCELLING] = "cancelling",
	[JOB_CANCELLED] = "cancelled",
};

static const char *const attempt_state_names[] = {
	[ATTEMPT_LAUNCHING] = "launching",
	[ATTEMPT_PENDING] = "pending",
	[ATTEMPT_RUNNING] = "running",
	[ATTEMPT_ENDED] = "ended",
};

static const char *const attempt_end_names[] = {
	[END_NONE] = "none",
	[END_SUCCEEDED] = "succeeded",
	[END_FAILED] = "failed",
	[END_PREEMPTED] = "preempted",
	[END_MAINTENANCE] = "maintenance",
	[END_LOST] = "lost",
	[END_STOCKOUT] = "stockout",
	[END_LAUNCH_ERROR] = "launch_error",
	[END_CANCELLED] = "cancelled",
	[END_LIMIT] = "limit",
	[END_QUOTA] = "quota",
	[END_PENDING] = "pending",
};
#define NEND	(int)(sizeof attempt_end_names / sizeof attempt_end_names[0])
_Static_assert(NEND == END_NREASONS, "a name for every end reason");
#define NATT	(int)(sizeof attempt_state_names / sizeof attempt_state_names[0])

/* Name of job state STATE, "?" if out of range. */
const char *
job_state_name(int state)
{
	if (state < 0 || state >= JOB_NSTATES)
		return "?";
	return job_state_names[state];
}

/* Job state called S, or -1. */
int
job_state_parse(const char *s)
{
	int	i;

	if (s == NULL)
		return -1;
	for (i = 0; i < JOB_NSTATES; i++) {
		if (strcmp(s, job_state_names[i]) == 0)
			return i;
	}
	return -1;
}

/* Name of attempt state STATE, "?" if out of range. */
const char *
attempt_state_name(int state)
{
	if (state < 0 || state >= NATT)
		return "?";
	return attempt_state_names[state];
}

/* Name of end reason END, "?" if out of range. */
const char *
attempt_end_name(int end)
{
	if (end < 0 || end >= NEND)
		return "?";
	return attempt_end_names[end];
}

/* End reason called S, or -1. */
int
attempt_end_parse(const char *s)
{
	int	i;

	if (s == NULL)
		return -1;
	for (i = 0; i < NEND; i++) {
		if (strcmp(s, attempt_end_names[i]) == 0)
			return i;
	}
	return -1;
}

/* 1 if END is an interruption: it counts against max_interruptions, not
 * against the failure budget. */
int
attempt_end_is_interruption(int end)
{
	switch (end) {
	case END_PREEMPTED:
	case END_MAINTENANCE:
	case END_LOST:
	case END_STOCKOUT:
		return 1;
	default:
		return 0;
	}
}

/*
 * 1 if an attempt that STARTED (0: never ran) and ended for END counts
 * against the job's max_interruptions and its interruption back-off
 * (doc/DESIGN.md "Outcomes"). A stockout before the attempt ran (a
 * Batch job whose VM could not be created) interrupted no work: it is
 * a refused create found late, and costs the zone a cool-down only, as
 * a refused create does. Counted, a burst of them wore jobs out on Spot
 * and sent them to flex-start at twice the price.
 */
int
attempt_end_counts(int end, int64_t started)
{
	if (end == END_STOCKOUT && started <= 0)
		return 0;
	return attempt_end_is_interruption(end);
}
