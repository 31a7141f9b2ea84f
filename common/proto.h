/*
 * proto.h: the wire between gpuq and gpuqd, in one place (tmux-protocol.h).
 *
 * Newline-delimited JSON over a SOCK_STREAM Unix socket. One request
 * object per line, one reply per request, in order. Replies are
 * {"ok":true,...} or {"ok":false,"error":{"code","message","field"}}.
 */
#ifndef GPUQ_PROTO_H
#define GPUQ_PROTO_H

#define GPUQ_PROTO_VERSION	1
#define GPUQ_MAX_LINE		(1024 * 1024)	/* bytes, newline excluded */
#define GPUQ_LIST_MAX		1000		/* most jobs in one page */
#define GPUQ_LIST_DEFAULT	100
#define GPUQ_LIST_COMPACT_MAX	100000		/* ... with "compact": true */
#define GPUQ_LIST_PAGE_BYTES	(512 * 1024)	/* a compact page ends past */
#define GPUQ_REPLY_PRECISION	12		/* digits of reals in replies */

/* Default client socket; gpuq and gpuqd agree on it. */
#define GPUQ_SOCKET_DEFAULT	"/run/gpuq/gpuq.sock"
#define GPUQ_SOCKET_ENV		"GPUQ_SOCKET"

/* Error codes in {"ok":false,"error":{"code":...}}. */
#define GPUQ_ERR_BAD_JSON	"bad_json"	/* not JSON, or not an object */
#define GPUQ_ERR_BAD_UTF8	"bad_utf8"	/* line is not valid UTF-8 */
#define GPUQ_ERR_TOO_LONG	"line_too_long"	/* over GPUQ_MAX_LINE */
#define GPUQ_ERR_UNKNOWN_OP	"unknown_op"
#define GPUQ_ERR_BAD_REQUEST	"bad_request"	/* wrong or missing field */
#define GPUQ_ERR_INVALID_JOB	"invalid_job"	/* spec validation failed */
#define GPUQ_ERR_NOT_FOUND	"not_found"
#define GPUQ_ERR_FORBIDDEN	"forbidden"
#define GPUQ_ERR_CONFLICT	"conflict"	/* not allowed in this state */
#define GPUQ_ERR_BUSY		"busy"		/* store busy or shutting down */
#define GPUQ_ERR_INTERNAL	"internal"
#define GPUQ_ERR_UNAVAILABLE	"unavailable"	/* no cloud configured */

/* Client exit codes, gpuq(1). */
#define GPUQ_EXIT_OK		0
#define GPUQ_EXIT_FAILED	1
#define GPUQ_EXIT_USAGE		2
#define GPUQ_EXIT_UNREACHABLE	3
#define GPUQ_EXIT_TIMEOUT	124	/* gpuq wait: time ran out */

#endif

/*
 * Shapes on the wire (besides doc/DESIGN.md "The wire").
 *
 * A job in list/show replies:
 *   {"id":142, "name":"resnet", "state":"queued", "priority":0,
 *    "owner":1000, "created":1790000000, "updated":1790000000,
 *    "attempts":0, "failures":0, "interruptions":0, "cost_usd":0.0,
 *    "checkpoint":"gs://b/gpuq/142/checkpoints/ckpt-00000600" | null,
 *    "checkpoint_at":1790000000 | 0, "why":"no provider configured" | null,
 *    "exit_code":-1, "message":null,
 *    "accelerator":{"type":"nvidia-tesla-t4","count":2},
 *    "nodes":1,                          (machines of a gang: 1..64)
 *    "current":{attempt} | null}        (the live attempt, if any)
 * show adds "spec":{normalized spec}, "attempts_list":[attempt...],
 * "events":[{"time":…, "from":"queued"|null, "to":"launching",
 *            "message":"…"}].
 * An attempt: {"number":1, "state":"running", "provider":"gce",
 *    "region":"us-central1", "zone":"us-central1-a", "resource":"gpuq-…",
 *    "machine_type":"n1-highmem-8", "spot":true, "hourly_usd":1.23,
 *    "created":…, "started":…, "ended":…, "end_reason":"preempted"|null,
 *    "exit_code":-1, "message":…, "resumed_from":…, "cost_usd":0.5,
 *    "gpu":"nvidia-tesla-t4", "gpu_count":2 (per machine), "nodes":1,
 *    "node_list":[{"rank":0, "zone":"us-central1-a"|null,
 *                  "state":"running"}...]}   (one per machine)
 *
 * list request: {"op":"list", "state":["queued",…] (default: live
 * states; "all" for every state), "owner":uid, "name":"…", "limit":100,
 * "after":141}. Reply {"ok":true,"jobs":[…],"next":242} ("next" absent
 * on the last page), plus "counts":{"queued":3,…} of the whole queue.
 * With "compact":true: {"ok":true,"next":…,"counts":{…},"columns":[…],
 * "rows":[[142,"resnet","queued",…],…]}, each row the values of the
 * named columns (doc/DESIGN.md "The wire"); "limit" up to
 * GPUQ_LIST_COMPACT_MAX, a page ending past GPUQ_LIST_PAGE_BYTES.
 * submit: {"op":"submit","job":{…},"hold":false} → {"ok":true,"id":142}.
 * cancel/hold/release: {"op":"cancel","id":142} → {"ok":true,
 * "state":"cancelled"}.
 * ping → {"ok":true,"version":"0.1.0","proto":1,"install":"…"}.
 */
