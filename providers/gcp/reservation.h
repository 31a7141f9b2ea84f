/*
 * reservation.h: the Compute Engine reservations the project holds, and
 * how many of their VMs are free (doc/DESIGN.md "Reservations").
 *
 * One reservations.aggregatedList (all pages) per refresh, whatever the
 * number of jobs (DESIGN L.1). quota.c starts the refresh in its round,
 * so the scheduler's pass waits for both and both age by quota_ttl.
 * Between a launch into a reservation and the next listing that counts
 * it in inUseCount, the launch's VMs are held, so two jobs never take
 * the last free VM twice.
 *
 * Knows HTTP and jansson; nothing of the daemon.
 */
#ifndef GPUQ_RESERVATION_H
#define GPUQ_RESERVATION_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "providers/gcp/gcp.h"

struct http;
struct resv;

#define RESV_NAME_MAX	64	/* RFC 1035 name + NUL */

/* One reservation, as resv_next() lists it. Strings borrowed until the
 * next refresh or resv_free(). */
struct resv_row {
	const char	*name;
	const char	*zone;
	const char	*region;
	const char	*machine_type;	/* instanceProperties's */
	const char	*gpu;		/* acceleratorType, or "" */
	int		 gpus_per_vm;	/* acceleratorCount, or 0 */
	int64_t		 count;		/* VMs reserved */
	int64_t		 in_use;	/* inUseCount */
	int64_t		 held;		/* launched, not counted */
	int64_t		 free_vms;	/* count-in_use-held, >=0 */
	int		 specific_required; /* specificReservationRequired */
	int		 wanted;	/* [gcp] reservations allows it */
};

/* A refresh ended: ERROR 0, or < 0 with CAUSE (borrowed). */
typedef void	(*resv_cb)(int error, const char *cause, void *arg);

/* New cache using HTTP (borrowed) and CONF (copied). No network. */
int	 resv_new(struct http *http, const struct gcp_conf *conf,
	    struct resv **ret);
/* Free (NULL ok); a refresh under way ends without its callback. */
void	 resv_free(struct resv *);
/* Does [gcp] reservations let gpuq list reservations at all (not
 * "none")? */
int	 resv_enabled(const struct resv *);
/*
 * Read the reservations when the last reading is older than TTL_MS (or
 * FORCE): 1 if it is not (CB is not called), 0 if a refresh runs (CB is
 * called once, later), or a negative errno without calling CB
 * (-ENOTSUP: [gcp] reservations = none).
 */
int	 resv_refresh(struct resv *, int force, uint64_t ttl_ms, resv_cb cb,
	    void *arg);
/*
 * Add the reservations of one aggregatedList page (its "items" object)
 * to the list being built; entries that carry only a warning (an
 * unreachable zone) are noted and skipped. Returns how many were added.
 * For tests and for the refresh.
 */
int	 resv_page_apply(struct resv *, json_t *page);
/* The built list replaces the last reading (the last page was read). */
void	 resv_page_done(struct resv *);
/* Next reservation after *ITER (start at 0): 1 and *RET, or 0. */
int	 resv_next(struct resv *, size_t *iter, struct resv_row *ret);
/*
 * Free VMs of reservation NAME in ZONE for a VM of MACHINE_TYPE with
 * GPUS cards of GPU (Compute spelling): its free_vms when it is READY,
 * wanted, and its VMs are that shape; else -ENOENT.
 */
int	 resv_free_vms(struct resv *, const char *zone, const char *name,
	    const char *machine_type, const char *gpu, int gpus,
	    int64_t *ret);
/* A launch of VMS machines into NAME in ZONE: held until a listing that
 * started after now counts them. */
void	 resv_hold(struct resv *, const char *zone, const char *name,
	    int64_t vms);
/* Unreachable zones the last listing warned of: "z1, z2", or NULL. */
const char *resv_warning(struct resv *);
/*
 * The reservations as JSON for `gpuq quotas`, filtered by REGION and
 * GPU (either may be NULL): [{"name","zone","region","machine_type",
 * "gpu","gpus_per_vm","count","in_use","held","free_vms","free_gpus",
 * "total_gpus","specific_required","wanted"}...]. New reference.
 */
json_t	*resv_to_json(struct resv *, const char *region, const char *gpu);

#endif
