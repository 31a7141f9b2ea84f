/*
 * cli.h: what the pieces of gpuq(1) share: the command table, the
 * connection to gpuqd, job files (YAML or JSON), tables and formatting.
 *
 * The client knows the wire (common/proto.h) and nothing of the store,
 * the scheduler or the cloud: every decision is the daemon's, and the
 * client only shows what the daemon answers.
 */
#ifndef GPUQ_CLI_H
#define GPUQ_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

struct cli_conn;
struct cli_table;

/* Global state of one gpuq run. */
struct cli {
	const char	*socket;	/* path of gpuqd's socket; borrowed */
	int		 timeout_ms;	/* per request; 0 = wait forever */
	struct cli_conn	*conn;		/* opened by the first request */
};

/*
 * One command. Adding a command is one line in cli_cmds[] (gpuq.c) and
 * a handler: exec gets the command's own arguments, with argv[0] set to
 * "gpuq NAME" (for getopt's messages) and optind reset, and returns the
 * exit status (GPUQ_EXIT_*).
 */
struct cli_cmd {
	const char	*name;
	int		(*exec)(struct cli *, int argc, char **argv);
	const char	*usage;		/* arguments after the name */
	const char	*summary;	/* one line for "gpuq help" */
	const char	*help;		/* option lines for "gpuq CMD --help" */
};

/* The command table, ended by a NULL name. */
extern const struct cli_cmd	 cli_cmds[];

/* Handlers, one file per family (cli-*.c). */
int	cli_submit_exec(struct cli *, int, char **);
int	cli_status_exec(struct cli *, int, char **);
int	cli_show_exec(struct cli *, int, char **);
int	cli_job_exec(struct cli *, int, char **);	/* cancel, hold, release */
int	cli_ping_exec(struct cli *, int, char **);
int	cli_metrics_exec(struct cli *, int, char **);
int	cli_doctor_exec(struct cli *, int, char **);
int	cli_logs_exec(struct cli *, int, char **);	/* cli-logs.c */
int	cli_plan_exec(struct cli *, int, char **);	/* cli-cloud.c */
int	cli_quotas_exec(struct cli *, int, char **);
int	cli_prices_exec(struct cli *, int, char **);
int	cli_help_exec(struct cli *, int, char **);
int	cli_wait_exec(struct cli *, int, char **);	/* cli-wait.c */
int	cli_history_exec(struct cli *, int, char **); /* cli-history.c */
/*
 * Wait for the N jobs IDS to end, at most TIMEOUT_SEC seconds (-1: no
 * limit), printing a line per job unless QUIET. Returns gpuq wait's
 * exit status.
 */
int	cli_wait_jobs(struct cli *, const int64_t *ids, size_t n,
	    int64_t timeout_sec, int quiet);
/* A --timeout argument in seconds, or -1 after saying why not. */
int64_t	cli_wait_timeout(const char *arg);

/* gpuq.c: messages and usage. "gpuq: ..." on stderr, after stdout. */
void	cli_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
/* Print "usage: gpuq CMD ..." for CMD to F. */
void	cli_usage(FILE *f, const struct cli_cmd *cmd);
/* Table entry by name; NULL if unknown. Borrowed. */
const struct cli_cmd *cli_cmd_find(const char *name);
/*
 * getopt_long for a command: handles --help (prints it, returns 'h')
 * and reports bad options as a usage error (returns '?'). Same return
 * values as getopt_long otherwise.
 */
int	cli_getopt(int argc, char **argv, const char *optstring,
	    const struct option *longopts, const struct cli_cmd *cmd);

/*
 * conn.c: one blocking connection to gpuqd with a timeout. Negative
 * errno on failure with *cause set (new string); -ETIMEDOUT when the
 * daemon does not answer in time, -EPIPE when it hung up.
 */
int	cli_conn_open(const char *path, int timeout_ms,
	    struct cli_conn **ret, char **cause);
void	cli_conn_free(struct cli_conn *);
/* Write REQ (borrowed) as one line. */
int	cli_conn_send(struct cli_conn *, json_t *req, char **cause);
/* Read one reply into *ret (new reference). */
int	cli_conn_recv(struct cli_conn *, json_t **ret, char **cause);
/* Read one reply line, unparsed: borrowed until the next read. */
int	cli_conn_recv_line(struct cli_conn *, char **line, size_t *len,
	    char **cause);

/*
 * Request helpers on struct cli (gpuq.c). cli_call connects on first
 * use, sends REQ (takes it) and returns the reply (new reference).
 * When gpuqd cannot be reached or stops answering it prints why, with
 * a hint, and exits GPUQ_EXIT_UNREACHABLE: no command can go on then.
 */
json_t	*cli_call(struct cli *, json_t *req);
/*
 * The same, for replies passed through unparsed: when the reply is ok,
 * returns NULL with *line and *len set (borrowed until the next
 * request); otherwise returns the parsed reply as cli_call does (NULL
 * with *line NULL if nothing could be sent).
 */
json_t	*cli_call_raw(struct cli *, json_t *req, const char **line,
	    size_t *len);
/*
 * cli_call(), then the reply when it is ok (new reference); NULL when
 * it is not, having said why as "gpuq: WHAT: ...".
 */
json_t	*cli_call_ok(struct cli *, json_t *req, const char *what);
/*
 * A command that takes no operands and only --help (and --json when
 * JSON is not NULL: set to 1 when given): send {"op": OP} and return
 * its ok reply (new reference). NULL when there is nothing to show:
 * then *RC is the exit code to return (a usage error or a failed
 * reply, said already; GPUQ_EXIT_OK after --help).
 */
json_t	*cli_call_simple(struct cli *, int argc, char **argv, const char *op,
	    int *json, int *rc);
/* 1 if REPLY is {"ok":true,...}. */
int	cli_reply_ok(json_t *reply);
/*
 * Print a failed reply as "gpuq: WHAT: FIELD: MESSAGE" (WHAT may be
 * NULL). Returns GPUQ_EXIT_FAILED for the caller to return.
 */
int	cli_reply_warn(json_t *reply, const char *what, ...)
	    __attribute__((format(printf, 2, 3)));
/* Print each string of REPLY's "warnings" array as "gpuq: TEXT". */
void	cli_reply_warnings(json_t *reply);
/* Parse a job id ("142"); 0 or -EINVAL. */
int	cli_parse_id(const char *, int64_t *ret);
/* "42" or "42.3" as the wire's "id": new value, NULL if neither. */
json_t	*cli_job_ref(const char *);

/*
 * jobfile.c: job files. A file holds one job or several (a sweep): YAML
 * documents separated by "---", a JSON object, a JSON array of
 * objects, or JSON objects one after another. The format is told by
 * content, not by name.
 */
struct cli_doc {
	json_t	*job;		/* owned reference */
	int	 line;		/* where it starts in the file; 0 unknown */
};
struct cli_docs {
	struct cli_doc	*v;
	size_t		 n;
};
void	cli_docs_done(struct cli_docs *);
/*
 * Parse BUF (LEN bytes, from file NAME) into jobs. 0, or -EINVAL with
 * *cause "NAME:LINE:COLUMN: problem" (new string).
 */
int	cli_jobfile_parse(const char *name, const char *buf, size_t len,
	    struct cli_docs *ret, char **cause);
/* Read PATH ("-" = standard input) and parse it as above. */
int	cli_jobfile_read(const char *path, struct cli_docs *ret,
	    char **cause);

/*
 * yaml.c: YAML text to JSON values, one per document (a new array in
 * *ret, with each document's 1-based start line in LINES, new array
 * the caller frees). Plain scalars are typed as YAML 1.1 types them
 * (null, booleans, integers, floats); quoted and block scalars stay
 * strings. 0, or -EINVAL with *cause "NAME:LINE:COLUMN: problem".
 */
int	cli_yaml_load(const char *name, const char *buf, size_t len,
	    json_t **ret, int **lines, char **cause);
/*
 * The JSON value a plain scalar stands for (new reference), as above;
 * NULL if it cannot be represented in JSON (.inf, .nan, out of range).
 */
json_t	*cli_yaml_plain(const char *s, size_t len);

/*
 * yaml-out.c: V written to F as block YAML that cli_yaml_load reads
 * back as V (strings quoted when they would not read back plain).
 */
void	cli_yaml_write(FILE *f, json_t *v);

/*
 * convert.c: a job file of another service turned into a gpuq job.
 * FROM is "vertex" (a CustomJob, its CustomJobSpec, or an AI Platform
 * Job/TrainingInput) or "batch" (a Cloud Batch Job); IN is borrowed.
 * 0 with the job in *RET (new) and the fields accepted without effect,
 * each a sentence naming its path, in *NOTES (new array; NOTES may be
 * NULL); or -EINVAL with *cause "PATH: what is wrong and what to do"
 * (new string). Nothing of the file is dropped without a note.
 */
int	cli_convert(const char *from, json_t *in, json_t **ret,
	    json_t **notes, char **cause);
/*
 * Every document of DOCS (read from FILE) converted in place. 0 with
 * the notes of all in *NOTES (new), or -EINVAL with *cause "FILE[:LINE]:
 * PATH: ..." (new) and DOCS partly converted (free it all the same).
 */
int	cli_convert_docs(const char *from, const char *file,
	    struct cli_docs *docs, json_t **notes, char **cause);

/*
 * jscan.c: values in JSON text found without parsing it all. Member
 * KEY of the object OBJ: 1 with its text in *val and *vlen, 0 if absent, -1
 * if OBJ is not well formed.
 */
int	cli_jscan_member(const char *obj, size_t len, const char *key,
	    const char **val, size_t *vlen);
/*
 * Elements of an array: start with *pos at its '[', call until 0 (end)
 * or -1 (malformed); each 1 gives an element's text in *val and *vlen.
 */
int	cli_jscan_next(const char **pos, const char *end, const char **val,
	    size_t *vlen);
/*
 * Walk the members of object OBJ, calling CB with each key (raw, not
 * unescaped) and value text. Returns 0, CB's first non-zero return, or
 * -1 if OBJ is malformed.
 */
typedef int (*cli_jscan_cb)(const char *key, size_t klen, const char *val,
	    size_t vlen, void *arg);
int	cli_jscan_object(const char *obj, size_t len, cli_jscan_cb cb,
	    void *arg);
/*
 * As cli_jscan_object, up to member LAST, which is not scanned: 1 with
 * *ret_last at its value (the rest of OBJ from there is the caller's),
 * 0 if OBJ has no LAST, -1 if malformed (or CB returned non-zero).
 */
int	cli_jscan_head(const char *obj, size_t len, const char *last,
	    cli_jscan_cb cb, void *arg, const char **ret_last);
/* A string value decoded: new string; NULL if not a string (or null). */
char	*cli_jscan_string(const char *val, size_t vlen);
/* A number value, or DEF if it is not one. */
int64_t	 cli_jscan_int(const char *val, size_t vlen, int64_t def);
double	 cli_jscan_num(const char *val, size_t vlen, double def);

/*
 * table.c: columns sized to their content. Cells are copied and made
 * safe to print (control characters become '?').
 */
enum cli_align {
	CLI_LEFT,
	CLI_RIGHT,
};
struct cli_col {
	const char	*header;
	enum cli_align	 align;
};
struct cli_table *cli_table_new(const struct cli_col *, int ncols);
void	cli_table_free(struct cli_table *);
/* Add one cell (copied); rows fill left to right. NULL prints "-". */
void	cli_table_add(struct cli_table *, const char *);
void	cli_table_addf(struct cli_table *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* Print N spaces before each line. */
void	cli_table_set_indent(struct cli_table *, int n);
/*
 * ON: when the table does not fit the width cli_table_print is given,
 * the last column leaves it (and its header) instead of being cut: each
 * non-empty last cell is printed whole under its row, indented four
 * spaces, broken between words to fit the width.
 */
void	cli_table_set_below(struct cli_table *, int on);
/* Rows added so far. */
size_t	cli_table_rows(const struct cli_table *);
/*
 * Drop column COL from every full row, the table then having COLS
 * (borrowed, one fewer): for a column that turned out empty.
 */
void	cli_table_drop(struct cli_table *, const struct cli_col *cols,
	    int col);
/*
 * Print with a header row. With WIDTH > 0, the last column is cut so
 * lines fit WIDTH columns (never below a few characters), or moved
 * under each row (cli_table_set_below).
 */
void	cli_table_print(struct cli_table *, FILE *, int width, int header);
/* Columns on the screen: $COLUMNS when set to a number, else stdout's
 * terminal width, 0 if not a tty (no limit). */
int	cli_table_width(void);
/* Display width of UTF-8 text S (LEN bytes). */
size_t	cli_table_strwidth(const char *s, size_t len);
/* New copy of S with control characters and bad UTF-8 made '?'. */
char	*cli_table_clean(const char *s);

/*
 * fmt.c: values as people read them, into BUF (returned).
 */
char	*cli_fmt_time(int64_t unix_sec, char *buf, size_t len);
char	*cli_fmt_age(int64_t sec, char *buf, size_t len);
char	*cli_fmt_usd(double usd, char *buf, size_t len);
/* "$41.20, saved $66.10 (62%) against Vertex AI on-demand"; the cost
 * alone when BASELINE is 0 (unknown). */
char	*cli_fmt_saving(double cost, double baseline, char *buf,
	    size_t len);
/* "2xT4" from {"type":"nvidia-tesla-t4","count":2}; "-" if absent. */
char	*cli_fmt_gpu(json_t *accelerator, char *buf, size_t len);
char	*cli_fmt_gpu_s(const char *type, int64_t count, char *buf, size_t len);
/* A gang's GPUs: "2×(4xA100)" for NODES machines of GPU (the text of
 * cli_fmt_gpu*()), GPU itself for one machine. Into BUF; BUF. */
char	*cli_fmt_gang(const char *gpu, int64_t nodes, char *buf, size_t len);
/* "gce/us-central1-a" from an attempt; "-" if absent. */
char	*cli_fmt_where(json_t *attempt, char *buf, size_t len);
/* The same from its parts; the region stands in for a NULL zone, and a
 * NULL provider leaves only the place ("us-central1-a"). */
char	*cli_fmt_where_s(const char *provider, const char *zone,
	    const char *region, char *buf, size_t len);
/* Owner uid as "name" or the number when it has no name. */
char	*cli_fmt_user(int64_t uid, char *buf, size_t len);
/* Integer member of OBJ, or DEF when absent or not a number. */
int64_t	 cli_json_int(json_t *obj, const char *key, int64_t def);
/* String member of OBJ, or NULL (borrowed). */
const char *cli_json_str(json_t *obj, const char *key);
/* Number member of OBJ (integer or real), or DEF. */
double	 cli_json_num(json_t *obj, const char *key, double def);

#endif
