/*
 * sched-offer.h: what each way of running a job costs -- a job's SHAPE
 * and the offers for it, ranked by expected cost (doc/DESIGN.md "Expected
 * cost"). The scheduler's internal header; see sched.h for the split:
 * sched.c decides when, sched-offer.c what each way costs, sched-place.c
 * which job gets which room and why the rest wait.
 *
 * Pure functions: the caller reads the world once (struct sched_market:
 * the enabled providers, [gcp] regions, the GPU's zones, stockout
 * cool-downs, the Spot history, and for each provider x region x Spot
 * the price and quota metric, struct sched_way) and hands it in as plain
 * data; out come the shape's offers, the usable ones first in rank
 * order. Nothing here reads the store, the loop, quota.c or price.c, or
 * keeps state of its own.
 */
#ifndef GPUQ_SCHED_OFFER_H
#define GPUQ_SCHED_OFFER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "providers/gcp/gcp.h"
#include "providers/gcp/quota.h"

struct gpu_type;
struct provider;

#define SCHED_NAME		64	/* region, zone */
#define SCHED_LIST_MAX		4	/* places named in a why */

enum sched_spot {
	SCHED_SPOT_NEVER,
	SCHED_SPOT_ALLOW,
	SCHED_SPOT_REQUIRE,
};

/*
 * Why an offer is set aside, in the order of the pipeline: the why of a
 * job that found nothing names the offers that got furthest. The first
 * ones are the offer's own (sched-offer.c), HOURLY and TOTAL a job's
 * limits, the rest the room a job finds (sched-place.c).
 */
enum sched_reason {
	SCHED_OK = 0,
	SCHED_X_NOT_OFFERED,	/* GPU x count not in the zone/region */
	SCHED_X_NO_METRIC,	/* no quota metric: not sold that way */
	SCHED_X_NO_PRICE,
	SCHED_X_COOLDOWN,	/* stockout cool-down */
	SCHED_X_HOURLY,		/* over the job's max_hourly_usd */
	SCHED_X_TOTAL,		/* expected cost over max_total_usd */
	SCHED_X_AVOID,		/* refused the job lately */
	SCHED_X_QUOTA,		/* GPU quota of the region */
	SCHED_X_QUOTA_ALL,	/* GPUS_ALL_REGIONS */
	SCHED_X_QUOTA_CPU,	/* vCPU quota of the region */
	SCHED_X_CLAIMED,	/* room, but a higher-priority job's */
};

/* An enabled provider, with the services its launches draw on. */
struct sched_seller {
	const struct provider	*prov;		/* name, picks_zone */
	enum gcp_service	 qsvc;		/* quota service */
	enum gcp_service	 psvc;		/* price service */
};

/* An active stockout cool-down of (zone, GPU, kind). */
struct sched_cool {
	char			 zone[SCHED_NAME];
	char			 gpu[SCHED_NAME];
	int			 spot;		/* enum capacity_kind: 0, 1
						   as ever for standard,
						   Spot */
	int64_t			 until;
	int			 strikes;	/* stockouts in a row */
};

/*
 * A place that refused a launch for a stockout, remembered past its
 * cool-down (sched.c keeps them; doc/DESIGN.md "Places that refused"):
 * the cool-down's STRIKES and its end UNTIL. One strike is forgiven per
 * quiet SCHED_STRIKE_QUIET_SEC after UNTIL, as the store forgives them.
 */
struct sched_strike {
	char			 zone[SCHED_NAME];
	char			 gpu[SCHED_NAME];
	int			 spot;		/* capacity_kind */
	int			 strikes;
	int64_t			 until;
};

#define SCHED_STRIKE_QUIET_SEC	3600
/*
 * What a remembered strike adds to an offer's rank (not to its price):
 * a fraction of its expected cost per strike, at most SCHED_STRIKE_MAX
 * strikes. Zones of one region share their price and nearly their λ;
 * the one that refused goes after the one that did not.
 */
#define SCHED_STRIKE_RISK	0.01
#define SCHED_STRIKE_MAX	3

/* Spot history of one (provider, region, GPU) or one of its zones. */
struct sched_hist {
	char			*key;		/* "gce/us-central1/nvidia-l4",
						   provider/region/GPU, or
						   ".../us-central1-a" */
	uint64_t		 hash;		/* sched_hash(key) */
	double			 hours;
	int			 interruptions;
};

/*
 * What a shape costs and draws on from one seller in one region, Spot
 * or not: read by the caller (price.c, quota.c) into the shape's grid,
 * sched_offer_way() gives the index.
 */
struct sched_way {
	int			 metric;	/* a GPU quota metric exists */
	int			 priced;	/* hourly is known */
	double			 hourly;	/* GPU + host, USD */
	char			 gpu_metric[QUOTA_METRIC_MAX];
	char			 cpu_metric[QUOTA_METRIC_MAX]; /* "": none */
};

/*
 * A Compute Engine reservation whose VMs are the shape's machine with
 * its GPUs, and how many of them are free (reservation.h): read by the
 * caller per shape (doc/DESIGN.md "Reservations").
 */
struct sched_resv {
	char			 name[SCHED_NAME];
	char			 zone[SCHED_NAME];
	char			 region[SCHED_NAME];
	int64_t			 free_vms;	/* count-in use-held */
	int64_t			 count;		/* VMs reserved */
};

/* The world as the offers see it, read once per pass (or plan). */
struct sched_market {
	const struct sched_seller *sellers;	/* enabled, in order */
	size_t			 nsellers;
	const char *const	*regions;	/* [gcp] regions; 0: any */
	size_t			 nregions;
	const struct quota_zone	*zones;		/* of the shape's GPU, every
						   region */
	int			 nzones;	/* < 0: not read yet */
	const char		*zones_error;	/* why not, or NULL */
	const struct sched_cool	*cool;
	size_t			 ncool;
	const struct sched_hist	*hist;
	size_t			 nhist;
	const struct sched_strike *strike;	/* places that refused */
	size_t			 nstrike;
	int64_t			 now;		/* strikes decay to */
	double			 prior;		/* λ with no history, 1/h */
	double			 restart_overhead; /* s, per interruption */
	int64_t			 spot_wait;	/* [scheduler] spot_wait, s */
	const struct sched_resv	*resv;		/* the shape's */
	size_t			 nresv;
};

/* One way to run a shape. */
struct sched_offer {
	const struct provider	*prov;
	enum gcp_service	 qsvc;		/* quota service */
	char			 region[SCHED_NAME];
	char			 zone[SCHED_NAME];	/* "": service picks */
	int			 spot;		/* capacity == SPOT */
	int			 capacity;	/* enum capacity_kind */
	double			 hourly;
	double			 per_hour;	/* expected USD per estimated
						   hour of work */
	double			 lambda;
	double			 rank_usd;	/* per_hour and refusal
						   risk: what ranks it */
	int			 strikes;	/* sched_offer_strikes() */
	unsigned		 probe_gen;	/* pass that sent a job
						   to it while struck */
	int			 recent;	/* interruptions in history */
	int			 order;		/* of enumeration: ties */
	int			 way;		/* index in the shape's ways */
	int			 gpu_b, all_b, cpu_b;	/* buckets, -1 none
							   (sched-place.c) */
	int			 reason;	/* enum sched_reason */
	int64_t			 until;		/* cool-down end */
	/* A reserved offer: a standard (spot 0) launch that consumes
	 * this Compute Engine reservation in zone, at $0 marginal, never
	 * preempted; "" for every other offer (doc/DESIGN.md
	 * "Reservations"). */
	char			 reservation[SCHED_NAME];
	int64_t			 resv_free;	/* its free VMs */
	int64_t			 resv_count;	/* its VMs */
};

/* The machines of shape SH, 1 when unset (doc/DESIGN.md "Gangs"). */
#define SCHED_NODES(sh)	((sh)->nodes > 1 ? (sh)->nodes : 1)
/* The GPUs and vCPUs all of them draw on. */
#define SCHED_GPUS(sh)	((sh)->count * SCHED_NODES(sh))
#define SCHED_VCPUS(sh)	((sh)->vcpus * SCHED_NODES(sh))

/* Jobs alike enough to share one ranked offer list per pass. */
struct sched_shape {
	char			*key;		/* equal keys, equal shapes */
	int			 refs;		/* jobs pointing here */
	const struct gpu_type	*gpu;
	int			 count;		/* GPUs per machine */
	int			 nodes;		/* machines of a gang, >= 1:
						   quota and price are
						   drawn nodes times */
	char			*machine;
	int			 vcpus;		/* -1 unknown; per machine */
	int			 spot;		/* enum sched_spot */
	unsigned		 capacity;	/* CAPACITY_BIT()s allowed */
	int64_t			 max_runtime;	/* s; 0 unknown */
	int64_t			 interval;	/* checkpoint interval, s */
	char		       **regions;	/* job's, sorted; NULL: any */
	size_t			 nregions;
	char		       **providers;	/* job's; NULL: any */
	size_t			 nproviders;

	/* sched_offer_build(): the offers, ranked. */
	unsigned		 gen;		/* pass the offers are of */
	uint64_t		 stamp;		/* of what they were built on
						   (sched.c); 0: never built */
	struct sched_offer	*offers;	/* ranked OK ones first */
	size_t			 n, nok, cap;
	char			*why;		/* when nok == 0 */
	double			 min_hourly;	/* of the OK offers */
	double			 min_per_hour;
	/*
	 * The cheapest Spot offer set aside only by a stockout cool-down:
	 * its expected $/h and the cool-down's end (0: none); and how long
	 * a job waits for it before a dearer offer (sched_place()).
	 */
	double			 spot_cooled_per_hour;
	int64_t			 spot_cooled_until;
	int64_t			 spot_wait;
	/* On-demand Vertex AI in the first region priced; 0 unknown
	 * (doc/DESIGN.md "Accounting"). */
	double			 baseline_hourly;
	struct sched_way	*ways;		/* sellers x regions x
						   CAPACITY_NKINDS */
	size_t			 nways, capways;
	/* What the ways were read on (sched.c): the market's part that
	 * gives the regions and quota metrics, and the catalog's read
	 * (price_reads()). */
	uint64_t		 ways_stamp;
	uint64_t		 ways_price_at;
	/* Whose quota buckets the offers hold (sched-place.c). */
	const void		*bucket_ctx;
	unsigned		 bucket_epoch;

	/* The first job of this shape that found nothing, this pass
	 * (sched-place.c: the backfill shortcut). */
	unsigned		 fail_gen;
	double			 fail_hourly, fail_total, fail_hours;
	char			*fail_why;
	int			 fail_quota;	/* blocked by quota/claims */
	int64_t			 fail_claim_id;	/* who holds its buckets */
	int			 fail_claim_prio;
	char			*fail_claim_what;
	uint64_t		 fail_why_hash;	/* sched_hash(fail_why) */
	uint64_t		 fail_claim_hash; /* of the claim's why */
};

/* A 64-bit hash of S, 0 for NULL (so "no text" hashes apart from any
 * text). */
uint64_t	 sched_hash(const char *s);
/* The same of the N bytes at S (no NUL needed); sched_hash(S) is
 * sched_hash_n(S, strlen(S)). */
uint64_t	 sched_hash_n(const char *s, size_t n);
/* Copy S (NULL: "") into DST of SCHED_NAME bytes. */
void		 sched_name(char *dst, const char *s);
/* "HH:MM" of T in local time into BUF. */
void		 sched_clock(int64_t t, char *buf, size_t len);
/* Is TOKEN one of the comma-separated items of LIST? */
int		 sched_in_csv(const char *list, const char *token);
/* "a,b,c" of V into a new string. */
char		*sched_strv_join(char **v, size_t n);
void		 sched_strv_free(char **v, size_t n);

/*
 * The shape of normalized job SPEC (borrowed): new, refs 0, no offers;
 * NULL and *WHY (new) if the spec cannot be run at all. Equal shapes
 * have equal keys.
 */
struct sched_shape *sched_offer_shape_new(json_t *spec, char **why);
/* Free SH and its offers (NULL ok). */
void		 sched_offer_shape_free(struct sched_shape *sh);
/* Does SH allow provider P? */
int		 sched_offer_allows(const struct sched_shape *sh,
		    const struct provider *p);
/*
 * The regions SH may run in on market M: the job's, within [gcp]
 * regions when that is set; with neither, every region whose zones
 * offer the GPU, sorted. New list (sched_strv_free); NULL if none.
 */
char		**sched_offer_regions(const struct sched_shape *sh,
		    const struct sched_market *m, size_t *ret_n);
/* Does SH allow capacity KIND (enum capacity_kind)? */
int		 sched_offer_kind_allowed(const struct sched_shape *sh,
		    int kind);
/*
 * Why SH gets no offer of KIND from seller P (NULL: any seller), or NULL
 * if it may: "job disallows", "not offered by this service ...",
 * "max_runtime over 7 days". Static words.
 */
const char	*sched_offer_kind_refusal(const struct sched_shape *sh,
		    const struct provider *p, int kind);
/*
 * Size SH's ways for M's sellers x NREGIONS x the kinds of capacity
 * (enum capacity_kind), all
 * zeroed (unknown), for the caller to fill those of the sellers SH
 * allows; sched_offer_way() is the index of one. Returns SH->ways.
 */
struct sched_way *sched_offer_ways(struct sched_shape *sh,
		    const struct sched_market *m, size_t nregions);
size_t		 sched_offer_way(size_t seller, size_t region, int kind,
		    size_t nregions);
/*
 * λ (1/h) and recent interruptions of provider P in ZONE of REGION for
 * GPU: the zone's own history, else (no history there, or ZONE NULL or
 * "": the service picks the zone) the region's, else the prior.
 */
double		 sched_offer_lambda(const struct sched_market *m,
		    const struct provider *p, const char *region,
		    const char *zone, const char *gpu, int *ret_recent);
/* The strikes of S not forgiven at NOW (one per quiet hour past its
 * cool-down). */
int		 sched_offer_strike_left(const struct sched_strike *s, int64_t now);
/*
 * The strikes M remembers of (ZONE, GPU, kind SPOT) that are not
 * forgiven at M->now (struct sched_strike): 0 for a place that never
 * refused or has been quiet since.
 */
int		 sched_offer_strikes(const struct sched_market *m,
		    const char *zone, const char *gpu, int spot);
/*
 * Remember the strikes of the running cool-downs COOL (N of them) at
 * NOW in V (*NV entries, *CAP allocated; returns V): a place's entry is
 * replaced by its newer cool-down, and entries fully forgiven go.
 */
struct sched_strike *sched_offer_strikes_note(struct sched_strike *v,
		    size_t *nv, size_t *cap, const struct sched_cool *cool,
		    size_t n, int64_t now);
/*
 * Add one row of store_spot_history() to V (*N entries; returns V
 * grown): the zone's own entry, and its hours and interruptions to the
 * (provider, region, GPU) sum, made when the row starts a new one.
 */
struct sched_hist *sched_offer_hist_add(struct sched_hist *v, size_t *n,
		    const char *provider, const char *region, const char *zone,
		    const char *gpu, double hours, int interruptions);
/*
 * Build SH's offers on M (REGIONS: sched_offer_regions(); SH->ways
 * filled): every allowed seller x region x zone (or region, when the
 * service picks the zone) x Spot or standard as SH's policy allows; set
 * aside those not offered, with no metric, no price or cooling down;
 * price the rest (cost.h) and rank them: cheapest expected cost per
 * hour of work first, then fewer recent interruptions, then the order
 * of enumeration. M->resv adds reserved offers at $0 (full ones set
 * aside). SH->nok are usable, SH->why says why when none is.
 */
void		 sched_offer_build(struct sched_shape *sh,
		    const struct sched_market *m, char *const *regions,
		    size_t nregions);
/* The ranking of two offers, for qsort: usable first and cheapest;
 * the set-aside ones by how far they got, then in order. */
int		 sched_offer_cmp(const void *a, const void *b);
/* "us-central1, europe-west4" (then "and N more") of the distinct
 * regions of SH's offers [FROM, TO) set aside for REASON (< 0: any).
 * New. */
char		*sched_offer_where(const struct sched_shape *sh, size_t from,
		    size_t to, int reason);

#endif
