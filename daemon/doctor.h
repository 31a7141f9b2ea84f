/*
 * doctor.h: `gpuq doctor` -- everything a first launch in a real project
 * needs, checked against the real APIs, one line per check, each ok or
 * the fix (doc/DESIGN.md "A real project"; API-NOTES M).
 *
 * Knows the cloud's facade (cloud.h) and the gcp layer's HTTP client,
 * credentials, quotas and prices; nothing of sockets or the store.
 */
#ifndef GPUQ_DOCTOR_H
#define GPUQ_DOCTOR_H

#include <jansson.h>

struct cloud;

/*
 * The report: {"checks":[{"check","ok","detail","fix"}...],"passed":N,
 * "failed":M}, borrowed for the call.
 */
typedef void	(*doctor_cb)(json_t *report, void *arg);

/*
 * Run every check for CLOUD with CHECKPOINT_ROOT ([gcp] checkpoint_root,
 * may be NULL or ""; copied). Calls CB exactly once, later -- also when
 * the cloud is freed meanwhile (the requests then end cancelled and say
 * so).
 */
void	 doctor_run(struct cloud *cloud, const char *checkpoint_root,
	    doctor_cb cb, void *arg);
/* The report of a daemon without [gcp] project: one failing line. New. */
json_t	*doctor_no_project(void);

/*
 * May gpuqd's credentials act as [gcp] job_service_account
 * (iam.serviceAccounts.actAs, testIamPermissions on the account)? CB
 * gets NULL when yes (or no account is set, or the answer could not be
 * had: launches then say for themselves), else the sentence saying
 * why not and the fix (borrowed). Called exactly once: at once when no
 * account is set, else later.
 */
void	 doctor_act_as(struct cloud *cloud,
	    void (*cb)(const char *why, void *arg), void *arg);

#endif
