/*
 * logging.h: reading a job's output from Cloud Logging v2 entries.list
 * (DESIGN GJ): the filter clause that selects one attempt's lines on
 * each service, the request body of one page, and what gpuq reads of a
 * LogEntry.
 *
 * Knows the services' log shapes (Batch task logs with the job's labels,
 * Vertex AI ml_job resources, docker's gcplogs driver on a Compute
 * Engine VM); nothing of the store or of who follows which job.
 */
#ifndef GPUQ_LOGGING_H
#define GPUQ_LOGGING_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "providers/gcp/gcp.h"

struct http;
struct http_resp;

/* Google's documented ceiling of one filter (DESIGN GJ.2). */
#define LOGGING_FILTER_MAX	20000
/* Entries a page asks for: the API's default is 50. */
#define LOGGING_PAGE_MAX	1000
/* The Batch log of the runnables' stdout and stderr (DESIGN GJ.5). */
#define LOGGING_BATCH_LOG	"batch_task_logs"
/* docker's gcplogs driver writes this log (DESIGN GJ.7). */
#define LOGGING_DOCKER_LOG	"gcplogs-docker-driver"

/* A LogEntry as gpuq reads it; strings borrowed from the entry. */
struct logging_entry {
	int64_t		 sec;		/* timestamp, unix seconds */
	long		 nsec;		/* and nanoseconds */
	const char	*insert_id;	/* "" if none */
	const char	*text;		/* textPayload or jsonPayload.message;
					   NULL: see json */
	json_t		*json;		/* jsonPayload without a message */
	int		 node;		/* replica / task index, 0 if none */
};

/*
 * The clause selecting one attempt's output on SERVICE, for PROJECT:
 * Batch by the job labels Batch copies onto its task log entries
 * (install, job, attempt), Vertex AI by the CustomJob's numeric id (the
 * last segment of CLOUD_ID), Compute Engine by the VM's instance id
 * (CLOUD_ID). New string, or NULL when the attempt has no cloud id yet
 * (Vertex, Compute Engine) or a value would need quoting: nothing can
 * be read of it then.
 */
char	*logging_clause(const char *project, enum gcp_service service,
	    const char *install, int64_t job, int attempt,
	    const char *cloud_id);
/*
 * The key every entry of that attempt carries (logging_entry_key gives
 * the same string for them): "batch:I:J:A", "vertex:ID", "gce:ID". New
 * string or NULL, as above.
 */
char	*logging_attempt_key(enum gcp_service service, const char *install,
	    int64_t job, int attempt, const char *cloud_id);
/* The attempt key of ENTRY (borrowed), or NULL if it names none. New. */
char	*logging_entry_key(json_t *entry);
/* Read ENTRY into *RET (borrowing from it): 0, or -EINVAL if it has no
 * usable timestamp. */
int	 logging_entry_parse(json_t *entry, struct logging_entry *ret);

/* RFC 3339 text to seconds and nanoseconds: 0 or -EINVAL. */
int	 logging_time_parse(const char *s, int64_t *ret_sec, long *ret_nsec);
/* "2026-11-25T10:00:00.123456789Z" into BUF (at least 32 bytes). */
void	 logging_time_format(int64_t sec, long nsec, char *buf, size_t len);

/*
 * The ListLogEntriesRequest of one page: resourceNames
 * ["projects/PROJECT"], FILTER, orderBy "timestamp asc", PAGE_SIZE and
 * TOKEN (NULL on the first page; every other field must then be the
 * same, DESIGN GJ.1). New reference.
 */
json_t	*logging_request_body(const char *project, const char *filter,
	    int page_size, const char *token);

/*
 * Start one entries.list page with BODY (borrowed). No retries here:
 * the caller owns the pace (one combined query per interval, backing
 * off on 429). Returns 0 and calls CB once, later, or a negative errno
 * without calling it.
 */
int	 logging_list(struct http *, const struct gcp_conf *, json_t *body,
	    void (*cb)(const struct http_resp *, void *), void *arg);

#endif
