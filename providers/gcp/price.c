/*
 * price.c: GPU and host VM prices from the Cloud Billing Catalog, with the
 * bundled table (data/prices.csv) as the fallback.
 *
 * The catalog lists SKUs (DESIGN GF); the ones gpuq needs are recognised
 * by their descriptions, as Google words them:
 *   "Nvidia Tesla T4 GPU running in Americas"                  GPU
 *   "Nvidia Tesla T4 GPU attached to Spot Preemptible VMs ..."  GPU, Spot
 *   "N1 Predefined Instance Core running in Americas"          per vCPU
 *   "Spot Preemptible N1 Predefined Instance Ram running in …" per GiB
 *   "A2 Instance Core running in Belgium", "G2 Instance Ram …"
 *   "Vertex AI: Training/Pipelines on NVIDIA Tesla T4 in Iowa"  Vertex
 *   "Vertex AI: Training/Pipelines on A3 Instance Core in Iowa"
 * with usageType OnDemand or Preemptible (= Spot) and the regions in
 * serviceRegions, and Vertex AI's management fee, which it bills on top
 * of a Compute Engine SKU where it has no all-in SKU of its own (Spot, DWS):
 *   "Vertex AI: Training/Pipelines management fee on NVIDIA H100 80GB
 *    in Iowa", "... management fee on A3 Instance Core in Iowa"
 * and flex-start's own Compute Engine SKUs (doc/DESIGN.md "Capacity
 * kinds"), which Vertex AI bills too, with its management fee:
 *   "Nvidia H100 80GB GPU attached to DWS Defined Duration VMs running
 *    in Americas", "DWS Defined Duration A3 Core running in Americas"
 * Commitments, other DWS SKUs, reservations, sole tenancy and custom
 * shapes are skipped. GPU models are matched against
 * gpu.h's sku_name word for word, in any order ("H100 80GB Mega" is
 * "H100 Mega 80GB"), so "Nvidia H100 80GB" never matches the Mega SKU.
 *
 * A read builds a new table from all pages of both services and replaces
 * the old one only if every page arrived. Knows nothing of jobs or of
 * which offer the scheduler picks.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <uv.h>

#include "common/clock.h"
#include "common/gpu.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "providers/gcp/price.h"

#define PRICE_RETRY_S		600	/* after a failed read */
#define PRICE_PAGE_MAX		5000	/* Billing's pageSize maximum */
#define PRICE_FIELDS \
	"skus(description,category,serviceRegions,pricingInfo),nextPageToken"

enum price_class {
	PC_COMPUTE,
	PC_VERTEX,
	PC_VERTEX_FEE,	/* Vertex's management fee on Compute SKUs */
};

enum price_kind {
	PK_GPU,
	PK_MACHINE,
	PK_CORE,
	PK_RAM,
};

static const char *const price_class_names[] = { "compute", "vertex",
    "vertex-fee" };
static const char *const price_kind_names[] = { "gpu", "machine", "core",
    "ram" };

struct price_entry {
	enum price_class	 cls;
	enum price_kind		 kind;
	char			*name;		/* gpu type, machine, series */
	char			*region;
	double			 od, spot;	/* < 0: unknown */
	double			 flex;		/* DWS SKU; < 0: unknown */
	int			 vcpus;		/* PK_MACHINE */
	double			 mem;
};

struct price_table {
	struct price_entry	*v;
	size_t			 n, cap;
	int			 sorted;
};

struct price_waiter {
	price_cb		 cb;
	void			*arg;
	struct price_waiter	*next;
};

struct price {
	struct http		*http;		/* borrowed */
	struct gcp_conf		*conf;		/* owned copy */
	uv_timer_t		 timer;		/* next catalog read */
	int			 started;
	int			 dead;		/* price_free() called */
	int			 timer_closed;
	int			 inflight;	/* requests out */

	struct price_table	 bundled;
	char			 data_of[16];	/* "2026-06" */
	struct price_table	 catalog;
	time_t			 fetched;
	uint64_t		 reads;		/* catalogs taken in */
	size_t			 nskus;
	char			 source[96];

	/* The read under way. */
	int			 fetching;
	int			 chains;	/* services still paging */
	struct price_table	 next;
	size_t			 next_skus;
	char			*error;
	struct price_waiter	*waiters;
};

struct price_chain {
	struct price		*p;
	enum price_class	 cls;
	const char		*service;	/* Billing service id */
};

static void	price_maybe_free(struct price *);

static void
price_table_clear(struct price_table *t)
{
	size_t	i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].name);
		free(t->v[i].region);
	}
	free(t->v);
	memset(t, 0, sizeof *t);
}

static int
price_entry_cmp(const void *a, const void *b)
{
	const struct price_entry	*x = a, *y = b;
	int				 c;

	if (x->cls != y->cls)
		return (int)x->cls - (int)y->cls;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	return strcmp(x->region, y->region);
}

static void
price_table_sort(struct price_table *t)
{
	if (t->n > 1)
		qsort(t->v, t->n, sizeof *t->v, price_entry_cmp);
	t->sorted = 1;
}

static struct price_entry *
price_table_find(struct price_table *t, enum price_class cls,
    enum price_kind kind, const char *name, const char *region)
{
	struct price_entry	 key;
	size_t			 i;

	key.cls = cls;
	key.kind = kind;
	key.name = (char *)name;
	key.region = (char *)region;
	if (t->sorted)
		return bsearch(&key, t->v, t->n, sizeof *t->v,
		    price_entry_cmp);
	for (i = 0; i < t->n; i++)
		if (price_entry_cmp(&key, &t->v[i]) == 0)
			return &t->v[i];
	return NULL;
}

/* The entry for the key, added (prices unknown) if missing. */
static struct price_entry *
price_table_get(struct price_table *t, enum price_class cls,
    enum price_kind kind, const char *name, const char *region)
{
	struct price_entry	*e;

	if ((e = price_table_find(t, cls, kind, name, region)) != NULL)
		return e;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->v = xreallocarray(t->v, t->cap, sizeof *t->v);
	}
	e = &t->v[t->n++];
	memset(e, 0, sizeof *e);
	e->cls = cls;
	e->kind = kind;
	e->name = xstrdup(name);
	e->region = xstrdup(region);
	e->od = e->spot = e->flex = -1;
	t->sorted = 0;
	return e;
}

/* -- the bundled table ------------------------------------------------ */

static double
price_field_num(const char *s)
{
	char	*end;
	double	 d;

	if (s == NULL || *s == '\0')
		return -1;
	d = strtod(s, &end);
	return end != s && d >= 0 ? d : -1;
}

/* Split LINE at commas in place into at most MAX fields. */
static int
price_split(char *line, char **f, int max)
{
	int	n = 0;

	line[strcspn(line, "\r\n")] = '\0';
	while (n < max) {
		f[n++] = line;
		if ((line = strchr(line, ',')) == NULL)
			break;
		*line++ = '\0';
	}
	return n;
}

/* The bundled table's fee kinds: vertex-fee-gpu, -core, -ram. */
static int
price_fee_kind(const char *s, enum price_kind *ret)
{
	if (strcmp(s, "vertex-fee-gpu") == 0)
		*ret = PK_GPU;
	else if (strcmp(s, "vertex-fee-core") == 0)
		*ret = PK_CORE;
	else if (strcmp(s, "vertex-fee-ram") == 0)
		*ret = PK_RAM;
	else
		return -ENOENT;
	return 0;
}

static int
price_load_bundled(struct price *p, const char *path, char **cause)
{
	FILE			*fp;
	char			 line[1024], *f[9], *s;
	struct price_entry	*e;
	enum price_class	 cls;
	enum price_kind		 kind;
	int			 n, lineno = 0, rc;

	if ((fp = fopen(path, "r")) == NULL) {
		rc = -errno;
		if (cause != NULL)
			*cause = xprintf("price table %s: %s (it comes with "
			    "gpuq; reinstall, or point [gcp] price_table at "
			    "a copy)", path, strerror(errno));
		return rc;
	}
	while (fgets(line, sizeof line, fp) != NULL) {
		lineno++;
		if (line[0] == '#') {
			if ((s = strstr(line, "data of ")) != NULL)
				snprintf(p->data_of, sizeof p->data_of,
				    "%.7s", s + 8);
			continue;
		}
		if (strncmp(line, "kind,", 5) == 0 || line[0] == '\n')
			continue;
		n = price_split(line, f, 9);
		if (n < 7) {
			fclose(fp);
			if (cause != NULL)
				*cause = xprintf("price table %s:%d: %d "
				    "fields, want 9", path, lineno, n);
			return -EINVAL;
		}
		cls = PC_COMPUTE;
		if (strcmp(f[0], "gpu") == 0)
			kind = PK_GPU;
		else if (strcmp(f[0], "machine") == 0)
			kind = PK_MACHINE;
		else if (strcmp(f[0], "vertex-gpu") == 0) {
			cls = PC_VERTEX;
			kind = PK_GPU;
		} else if (strcmp(f[0], "vertex-core") == 0) {
			cls = PC_VERTEX;
			kind = PK_CORE;
		} else if (strcmp(f[0], "vertex-ram") == 0) {
			cls = PC_VERTEX;
			kind = PK_RAM;
		} else if (price_fee_kind(f[0], &kind) == 0)
			cls = PC_VERTEX_FEE;
		else
			continue;	/* a newer kind: not ours to read */
		e = price_table_get(&p->bundled, cls, kind, f[1], f[2]);
		e->vcpus = atoi(f[3]);
		e->mem = price_field_num(f[4]);
		e->od = price_field_num(f[5]);
		e->spot = price_field_num(f[6]);
	}
	fclose(fp);
	if (p->bundled.n == 0) {
		if (cause != NULL)
			*cause = xprintf("price table %s: no prices in it",
			    path);
		return -EINVAL;
	}
	price_table_sort(&p->bundled);
	return 0;
}

/* -- reading the catalog ------------------------------------------------ */

/* Lower-case words of S up to LEN, sorted, joined: a match key. */
static char *
price_words(const char *s, size_t len)
{
	char	*w[16], *buf, *out, *tok, *save = NULL, *tmp;
	size_t	 i, j, n = 0, olen = 0;

	buf = xstrndup(s, len);
	for (i = 0; buf[i] != '\0'; i++)
		buf[i] = (char)tolower((unsigned char)buf[i]);
	for (tok = strtok_r(buf, " ", &save); tok != NULL && n < 16;
	    tok = strtok_r(NULL, " ", &save))
		w[n++] = tok;
	for (i = 1; i < n; i++)		/* insertion sort, n is tiny */
		for (j = i; j > 0 && strcmp(w[j - 1], w[j]) > 0; j--) {
			tmp = w[j];
			w[j] = w[j - 1];
			w[j - 1] = tmp;
		}
	out = xcalloc(1, len + n + 1);
	for (i = 0; i < n; i++) {
		memcpy(out + olen, w[i], strlen(w[i]));
		olen += strlen(w[i]);
		out[olen++] = ' ';
	}
	out[olen] = '\0';
	free(buf);
	return out;
}

/* The GPU whose SKU name is MODEL (LEN bytes), or NULL. */
static const struct gpu_type *
price_match_gpu(const char *model, size_t len)
{
	const struct gpu_type	*tab;
	char			*want, *have;
	int			 i, n;

	tab = gpu_table(&n);
	want = price_words(model, len);
	for (i = 0; i < n; i++) {
		have = price_words(tab[i].sku_name, strlen(tab[i].sku_name));
		if (strcmp(want, have) == 0) {
			free(have);
			free(want);
			return &tab[i];
		}
		free(have);
	}
	free(want);
	return NULL;
}

/* Price of one usage unit: the last pricingInfo's first paid tier. */
static double
price_sku_unit_price(json_t *sku, const char **ret_unit)
{
	json_t	*pi, *expr, *tiers, *tier, *money, *units;
	double	 d = -1;
	size_t	 i;

	pi = json_object_get(sku, "pricingInfo");
	if (!json_is_array(pi) || json_array_size(pi) == 0)
		return -1;
	expr = json_object_get(json_array_get(pi, json_array_size(pi) - 1),
	    "pricingExpression");
	*ret_unit = json_string_value(json_object_get(expr, "usageUnit"));
	tiers = json_object_get(expr, "tieredRates");
	json_array_foreach(tiers, i, tier) {
		money = json_object_get(tier, "unitPrice");
		units = json_object_get(money, "units");
		d = 0;
		if (json_is_string(units))
			d = strtod(json_string_value(units), NULL);
		else if (json_is_number(units))
			d = json_number_value(units);
		d += json_number_value(json_object_get(money, "nanos")) / 1e9;
		if (d > 0)
			break;		/* skip a free first tier */
	}
	return d;
}

static int
price_has_word(const char *s, const char *const *words)
{
	for (; *words != NULL; words++)
		if (strcasestr(s, *words) != NULL)
			return 1;
	return 0;
}

/* Add what SKU says to the table being built. */
static void
price_sku_add(struct price *p, enum price_class cls, json_t *sku)
{
	static const char *const skip[] = { "Commitment", "DWS", "Reserved",
	    "Sole Tenancy", "Custom", "Extended", "Virtual Workstation",
	    "Premium", "Licens", "Flex", "Calendar", NULL };
	static const char *const vertex_fee =
	    "Vertex AI: Training/Pipelines management fee on ";
	const char		*vertex_prefix =
	    "Vertex AI: Training/Pipelines on ";
	const struct gpu_type	*g = NULL;
	struct price_entry	*e;
	enum price_kind		 kind;
	json_t			*regions, *r;
	const char		*desc, *usage, *unit = NULL, *s, *q, *region;
	char			 series[16];
	double			 unitp;
	int			 spot, flex;
	size_t			 i, n;

	desc = json_string_value(json_object_get(sku, "description"));
	usage = json_string_value(json_object_get(json_object_get(sku,
	    "category"), "usageType"));
	if (desc == NULL || usage == NULL)
		return;
	if (strcmp(usage, "OnDemand") == 0)
		spot = 0;
	else if (strcmp(usage, "Preemptible") == 0)
		spot = 1;
	else
		return;
	/* Flex-start (DWS "Defined Duration") Compute Engine SKUs. */
	flex = cls == PC_COMPUTE && spot == 0 &&
	    strstr(desc, PRICE_DWS_WORDS) != NULL;
	if (!flex && price_has_word(desc, skip))
		return;
	s = desc;
	if (flex && strncmp(s, PRICE_DWS_WORDS " ",
	    strlen(PRICE_DWS_WORDS) + 1) == 0)
		s += strlen(PRICE_DWS_WORDS) + 1;
	if (cls == PC_VERTEX && strncmp(s, vertex_fee,
	    strlen(vertex_fee)) == 0) {
		cls = PC_VERTEX_FEE;
		vertex_prefix = vertex_fee;
	} else if (strcasestr(desc, "management fee") != NULL)
		return;		/* a fee of another kind */
	if (cls != PC_COMPUTE) {
		if (strncmp(s, vertex_prefix, strlen(vertex_prefix)) != 0)
			return;
		s += strlen(vertex_prefix);
	}
	if (strncmp(s, "Spot Preemptible ", 17) == 0)
		s += 17;
	else if (strncmp(s, "Preemptible ", 12) == 0)
		s += 12;

	/* "<SERIES> [Predefined ]Instance Core|Ram|RAM ..." */
	n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
	if (n > 0 && n < sizeof series && s[n] == ' ') {
		q = s + n + 1;
		if (strncmp(q, "Predefined ", 11) == 0)
			q += 11;
		/* DWS words it "A3 Core running in ...", no "Instance". */
		if (flex && strncmp(q, "Instance ", 9) != 0 &&
		    (strncmp(q, "Core ", 5) == 0 ||
		    strncasecmp(q, "Ram ", 4) == 0))
			kind = *q == 'C' ? PK_CORE : PK_RAM;
		else if (strncmp(q, "Instance Core ", 14) == 0)
			kind = PK_CORE;
		else if (strncasecmp(q, "Instance Ram ", 13) == 0)
			kind = PK_RAM;
		else
			goto gpu;
		for (i = 0; i < n; i++)
			series[i] = (char)tolower((unsigned char)s[i]);
		series[n] = '\0';
		goto found;
	}
gpu:
	if (cls == PC_COMPUTE)
		q = strstr(s, " GPU");
	else {
		q = NULL;
		for (s = strstr(s, " in "); s != NULL; s = strstr(s + 1,
		    " in "))
			q = s;
		s = desc + strlen(vertex_prefix);
		if (strncmp(s, "Preemptible ", 12) == 0)
			s += 12;
	}
	if (q == NULL || (g = price_match_gpu(s, (size_t)(q - s))) == NULL)
		return;
	kind = PK_GPU;

found:
	unitp = price_sku_unit_price(sku, &unit);
	if (unitp < 0 || unit == NULL)
		return;
	if (kind == PK_RAM ? strcmp(unit, "GiBy.h") != 0 :
	    strcmp(unit, "h") != 0)
		return;
	regions = json_object_get(sku, "serviceRegions");
	json_array_foreach(regions, i, r) {
		if ((region = json_string_value(r)) == NULL ||
		    !gcp_conf_has_region(p->conf, region))
			continue;
		e = price_table_get(&p->next, cls, kind,
		    kind == PK_GPU ? g->name : series, region);
		if (flex)
			e->flex = unitp;
		else if (spot)
			e->spot = unitp;
		else
			e->od = unitp;
	}
}

static void	price_chain_request(struct price_chain *, const char *token);
static void	price_on_timer(uv_timer_t *);

/* Tell every waiter, then arm the next read. */
static void
price_fetch_done(struct price *p)
{
	struct price_waiter	*w, *list;
	struct tm		 tm;
	char			*cause = p->error;
	int			 error = 0;
	uint64_t		 next;

	p->fetching = 0;
	p->error = NULL;
	if (cause == NULL && p->next.n == 0)
		cause = xstrdup("the catalog had no GPU prices gpuq knows");
	if (cause == NULL) {
		price_table_clear(&p->catalog);
		p->catalog = p->next;
		price_table_sort(&p->catalog);
		p->fetched = clock_now();
		p->reads++;
		p->nskus = p->next_skus;
		localtime_r(&p->fetched, &tm);
		snprintf(p->source, sizeof p->source, "catalog (fetched "
		    "%02d:%02d, %zu SKUs)", tm.tm_hour, tm.tm_min, p->nskus);
		log_debug("price: %zu prices from %zu catalog SKUs",
		    p->catalog.n, p->nskus);
		next = (uint64_t)p->conf->price_refresh * 1000;
	} else {
		price_table_clear(&p->next);
		error = -EIO;
		log_debug("price: %s", cause);
		next = (uint64_t)(p->conf->price_refresh < PRICE_RETRY_S ?
		    p->conf->price_refresh : PRICE_RETRY_S) * 1000;
	}
	memset(&p->next, 0, sizeof p->next);
	if (p->started && !p->dead)
		uv_timer_start(&p->timer, price_on_timer, clock_real_ms(next),
		    0);
	list = p->waiters;
	p->waiters = NULL;
	while ((w = list) != NULL) {
		list = w->next;
		if (w->cb != NULL)
			w->cb(error, cause, w->arg);
		free(w);
	}
	free(cause);
}

static void
price_on_page(const struct http_resp *r, void *arg)
{
	struct price_chain	*ch = arg;
	struct price		*p = ch->p;
	json_t			*skus, *sku;
	const char		*tok;
	char			*text;
	size_t			 i;

	p->inflight--;
	if (p->dead) {
		free(ch);
		price_maybe_free(p);
		return;
	}
	if (r->status == 200 && json_is_object(r->json)) {
		skus = json_object_get(r->json, "skus");
		json_array_foreach(skus, i, sku) {
			price_sku_add(p, ch->cls, sku);
			p->next_skus++;
		}
		tok = json_string_value(json_object_get(r->json,
		    "nextPageToken"));
		if (tok != NULL && *tok != '\0') {
			price_chain_request(ch, tok);
			return;
		}
	} else if (p->error == NULL) {
		text = gcp_error_text(&r->err);
		p->error = xprintf("reading the %s price catalog failed: %s",
		    price_class_names[ch->cls], text);
		free(text);
	}
	free(ch);
	if (--p->chains == 0)
		price_fetch_done(p);
}

static void
price_chain_request(struct price_chain *ch, const char *token)
{
	struct price	*p = ch->p;
	struct http_req	 req;
	char		*url;
	int		 rc;

	if (token == NULL)
		url = gcp_url(p->conf, GCP_API_BILLING, NULL,
		    "services/%s/skus?currencyCode=USD&pageSize=%d&fields=%s",
		    ch->service, http_page_size(p->http, PRICE_PAGE_MAX),
		    PRICE_FIELDS);
	else
		url = gcp_url(p->conf, GCP_API_BILLING, NULL,
		    "services/%s/skus?currencyCode=USD&pageSize=%d&fields=%s"
		    "&pageToken=%s", ch->service,
		    http_page_size(p->http, PRICE_PAGE_MAX), PRICE_FIELDS,
		    token);
	memset(&req, 0, sizeof req);
	req.url = url;
	req.flags = HTTP_AUTH;
	req.api = GCP_API_BILLING;
	rc = http_request_start(p->http, &req, price_on_page, ch);
	free(url);
	if (rc < 0) {
		if (p->error == NULL)
			p->error = xprintf("reading the price catalog: %s",
			    strerror(-rc));
		free(ch);
		if (--p->chains == 0)
			price_fetch_done(p);
		return;
	}
	p->inflight++;
}

static void
price_chain_start(struct price *p, enum price_class cls, const char *service)
{
	struct price_chain	*ch;

	ch = xcalloc(1, sizeof *ch);
	ch->p = p;
	ch->cls = cls;
	ch->service = service;
	p->chains++;
	price_chain_request(ch, NULL);
}

int
price_refresh(struct price *p, price_cb cb, void *arg)
{
	struct price_waiter	*w, **pw;

	if (p->dead)
		return -ESHUTDOWN;
	w = xcalloc(1, sizeof *w);
	w->cb = cb;
	w->arg = arg;
	for (pw = &p->waiters; *pw != NULL; pw = &(*pw)->next)
		;
	*pw = w;
	if (p->fetching)
		return 0;
	p->fetching = 1;
	p->next_skus = 0;
	memset(&p->next, 0, sizeof p->next);
	/* Both chains are counted before either can finish. */
	p->chains = 1;
	price_chain_start(p, PC_COMPUTE, GCP_COMPUTE_SERVICE_ID);
	if (gcp_conf_has_provider(p->conf, "vertex"))
		price_chain_start(p, PC_VERTEX, GCP_VERTEX_SERVICE_ID);
	if (--p->chains == 0)
		price_fetch_done(p);
	return 0;
}

static void
price_on_timer(uv_timer_t *t)
{
	struct price	*p = t->data;

	(void)price_refresh(p, NULL, NULL);
}

void
price_start(struct price *p)
{
	if (p->dead || p->started)
		return;
	p->started = 1;
	(void)price_refresh(p, NULL, NULL);
}

/* -- looking prices up -------------------------------------------------- */

static double
price_pick(const struct price_entry *e, int spot)
{
	if (e == NULL)
		return -1;
	return spot ? e->spot : e->od;
}

/* A fee row's price (the same for Spot and on demand when the SKU has
 * only one); < 0 if none. */
static double
price_fee_in(struct price_table *t, enum price_kind kind, const char *name,
    const char *region)
{
	struct price_entry	*e;

	e = price_table_find(t, PC_VERTEX_FEE, kind, name, region);
	if (e == NULL)
		return -1;
	return e->od >= 0 ? e->od : e->spot;
}

/*
 * Vertex AI's management fee for one GPU (KIND PK_GPU, NAME the GPU) or
 * one host (PK_CORE, NAME the series, VCPUS and MEM its shape; VCPUS 0 when
 * the shape is unknown), where Vertex has no all-in SKU and bills the
 * Compute Engine SKU (PRICE, per hour) plus the fee (DESIGN GF.2). The
 * fee SKUs, from the catalog or the bundled table, are priced on the
 * on-demand list price whatever the VM's provisioning: a Spot VM pays the
 * whole fee, which is what makes a Vertex Spot offer dearer than the
 * Compute Spot price x 1.15. Without a fee SKU it is (PRICE_VERTEX_PREMIUM
 * - 1) x the Compute Engine on-demand price OD (PRICE if OD is unknown):
 * the ratio the known fee SKUs show.
 */
static double
price_vertex_fee(struct price *p, enum price_kind kind, const char *name,
    const char *region, double od, double price, int vcpus, double mem)
{
	struct price_table	*t[2] = { &p->catalog, &p->bundled };
	double			 core, ram;
	size_t			 i;

	for (i = 0; i < 2; i++) {
		if (kind == PK_GPU) {
			if ((core = price_fee_in(t[i], PK_GPU, name,
			    region)) >= 0)
				return core;
			continue;
		}
		core = price_fee_in(t[i], PK_CORE, name, region);
		ram = price_fee_in(t[i], PK_RAM, name, region);
		if (vcpus > 0 && core >= 0 && ram >= 0)
			return vcpus * core + mem * ram;
	}
	return (PRICE_VERTEX_PREMIUM - 1) * (od >= 0 ? od : price);
}

/* Per-GPU price of G in REGION for CLS from one table; < 0 if none. */
static double
price_gpu_in(struct price_table *t, enum price_class cls,
    const char *region, const struct gpu_type *g, int spot)
{
	return price_pick(price_table_find(t, cls, PK_GPU, g->name, region),
	    spot);
}

/* Per-GPU price and the source that gave it; < 0 if none. */
static double
price_gpu_lookup(struct price *p, enum gcp_service svc, const char *region,
    const struct gpu_type *g, int spot, const char **ret_source)
{
	const char	*od_source;
	double		 d;

	if (svc == GCP_SERVICE_VERTEX) {
		if ((d = price_gpu_in(&p->catalog, PC_VERTEX, region, g,
		    spot)) >= 0) {
			*ret_source = "catalog";
			return d;
		}
		if ((d = price_gpu_in(&p->bundled, PC_VERTEX, region, g,
		    spot)) >= 0) {
			*ret_source = "bundled";
			return d;
		}
		d = price_gpu_lookup(p, GCP_SERVICE_GCE, region, g, spot,
		    ret_source);
		if (d < 0)
			return d;
		return d + price_vertex_fee(p, PK_GPU, g->name, region,
		    price_gpu_lookup(p, GCP_SERVICE_GCE, region, g, 0,
		    &od_source), d, 1, 0);
	}
	if ((d = price_gpu_in(&p->catalog, PC_COMPUTE, region, g, spot)) >= 0) {
		*ret_source = "catalog";
		return d;
	}
	if ((d = price_gpu_in(&p->bundled, PC_COMPUTE, region, g, spot)) >= 0) {
		*ret_source = "bundled";
		return d;
	}
	return -1;
}

int
price_gpu_hourly(struct price *p, enum gcp_service svc, const char *region,
    const char *gpu, int count, int spot, double *ret)
{
	const struct gpu_type	*g;
	const char		*src;
	double			 d;

	if ((g = gpu_lookup(gpu)) == NULL || count < 1)
		return -ENOENT;
	if ((d = price_gpu_lookup(p, svc, region, g, spot, &src)) < 0)
		return -ENOENT;
	*ret = d * count;
	return 0;
}

/*
 * vCPUs and GiB of MT: from the bundled machine rows, else from the
 * predefined shapes' rules (n1-standard-8: 8 x 3.75 GiB). -ENOENT if
 * unknown.
 */
static int
price_shape(struct price *p, const char *mt, int *ret_vcpus, double *ret_mem)
{
	static const struct {
		const char	*series, *cls;
		double		 per;
	} rules[] = {
		{ "n1", "standard", 3.75 }, { "n1", "highmem", 6.5 },
		{ "n1", "highcpu", 0.9 }, { "g2", "standard", 4 },
		{ "n2", "standard", 4 }, { "n2", "highmem", 8 },
		{ "n2", "highcpu", 1 }, { "n2d", "standard", 4 },
		{ "e2", "standard", 4 }, { "c2", "standard", 4 },
	};
	char	 ser[16], cls[16];
	size_t	 i;
	int	 n, mb;

	for (i = 0; i < p->bundled.n; i++) {
		if (p->bundled.v[i].kind == PK_MACHINE &&
		    strcmp(p->bundled.v[i].name, mt) == 0 &&
		    p->bundled.v[i].vcpus > 0 && p->bundled.v[i].mem > 0) {
			*ret_vcpus = p->bundled.v[i].vcpus;
			*ret_mem = p->bundled.v[i].mem;
			return 0;
		}
	}
	/* custom-8-30720, n2-custom-8-30720 (memory in MiB) */
	if (sscanf(mt, "custom-%d-%d", &n, &mb) == 2 ||
	    sscanf(mt, "%15[a-z0-9]-custom-%d-%d", ser, &n, &mb) == 3) {
		if (n > 0 && mb > 0) {
			*ret_vcpus = n;
			*ret_mem = mb / 1024.0;
			return 0;
		}
	}
	if (sscanf(mt, "%15[a-z0-9]-%15[a-z]-%d", ser, cls, &n) != 3 ||
	    n <= 0)
		return -ENOENT;
	for (i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		if (strcmp(ser, rules[i].series) == 0 &&
		    strcmp(cls, rules[i].cls) == 0) {
			*ret_vcpus = n;
			*ret_mem = n * rules[i].per;
			return 0;
		}
	}
	return -ENOENT;
}

/* The series of a machine type: "n1" of n1-highmem-8, "n1" of custom-. */
static void
price_series(const char *mt, char *buf, size_t len)
{
	size_t	n;

	if (strncmp(mt, "custom-", 7) == 0) {
		snprintf(buf, len, "n1");
		return;
	}
	n = strcspn(mt, "-");
	snprintf(buf, len, "%.*s", (int)n, mt);
}

/* vCPU + RAM price of a shape from one table's core/ram rows. */
static double
price_host_in(struct price_table *t, enum price_class cls, const char *series,
    const char *region, int vcpus, double mem, int spot)
{
	double	core, ram;

	core = price_pick(price_table_find(t, cls, PK_CORE, series, region),
	    spot);
	ram = price_pick(price_table_find(t, cls, PK_RAM, series, region),
	    spot);
	if (core < 0 || ram < 0)
		return -1;
	return vcpus * core + mem * ram;
}

static double
price_host_lookup(struct price *p, enum gcp_service svc, const char *region,
    const char *mt, int spot, const char **ret_source)
{
	const char	*od_source;
	char	 series[16];
	int	 vcpus = 0, shaped;
	double	 mem = 0, d;

	price_series(mt, series, sizeof series);
	shaped = price_shape(p, mt, &vcpus, &mem) == 0;
	if (svc == GCP_SERVICE_VERTEX) {
		if (shaped && (d = price_host_in(&p->catalog, PC_VERTEX,
		    series, region, vcpus, mem, spot)) >= 0) {
			*ret_source = "catalog";
			return d;
		}
		if (shaped && (d = price_host_in(&p->bundled, PC_VERTEX,
		    series, region, vcpus, mem, spot)) >= 0) {
			*ret_source = "bundled";
			return d;
		}
		d = price_host_lookup(p, GCP_SERVICE_GCE, region, mt, spot,
		    ret_source);
		if (d < 0)
			return d;
		if (!shaped)
			vcpus = 0;
		return d + price_vertex_fee(p, PK_CORE, series, region,
		    price_host_lookup(p, GCP_SERVICE_GCE, region, mt, 0,
		    &od_source), d, vcpus, mem);
	}
	if (shaped && (d = price_host_in(&p->catalog, PC_COMPUTE, series,
	    region, vcpus, mem, spot)) >= 0) {
		*ret_source = "catalog";
		return d;
	}
	d = price_pick(price_table_find(&p->bundled, PC_COMPUTE, PK_MACHINE,
	    mt, region), spot);
	if (d >= 0)
		*ret_source = "bundled";
	return d;
}

int
price_host_hourly(struct price *p, enum gcp_service svc, const char *region,
    const char *mt, int spot, double *ret)
{
	const char	*src;
	double		 d;

	if (mt == NULL || region == NULL)
		return -ENOENT;
	if ((d = price_host_lookup(p, svc, region, mt, spot, &src)) < 0)
		return -ENOENT;
	*ret = d;
	return 0;
}

/* DWS price of KIND NAME in REGION from the catalog; < 0 if none. */
static double
price_dws_in(struct price *p, enum price_kind kind, const char *name,
    const char *region)
{
	struct price_entry	*e;

	e = price_table_find(&p->catalog, PC_COMPUTE, kind, name, region);
	return e != NULL ? e->flex : -1;
}

int
price_dws_hourly(struct price *p, enum gcp_service svc, const char *region,
    const char *gpu, int count, const char *mt, double *ret)
{
	const struct gpu_type	*g;
	const char		*src;
	char			 series[16];
	double			 gd, core, ram, host, mem = 0;
	int			 vcpus = 0;

	if ((g = gpu_lookup(gpu)) == NULL || count < 1 || mt == NULL ||
	    region == NULL)
		return -ENOENT;
	price_series(mt, series, sizeof series);
	if (price_shape(p, mt, &vcpus, &mem) != 0)
		return -ENOENT;
	gd = price_dws_in(p, PK_GPU, g->name, region);
	core = price_dws_in(p, PK_CORE, series, region);
	ram = price_dws_in(p, PK_RAM, series, region);
	if (gd < 0 || core < 0 || ram < 0)
		return -ENOENT;
	host = vcpus * core + mem * ram;
	if (svc == GCP_SERVICE_VERTEX) {
		/* The Compute Engine SKU plus the fee (DESIGN GF.2). */
		gd += price_vertex_fee(p, PK_GPU, g->name, region,
		    price_gpu_lookup(p, GCP_SERVICE_GCE, region, g, 0, &src),
		    gd, 1, 0);
		host += price_vertex_fee(p, PK_CORE, series, region,
		    price_host_lookup(p, GCP_SERVICE_GCE, region, mt, 0, &src),
		    host, vcpus, mem);
	}
	*ret = gd * count + host;
	return 0;
}

const char *
price_source(struct price *p)
{
	if (p->fetched == 0)
		snprintf(p->source, sizeof p->source, "bundled table (data of "
		    "%s)", p->data_of[0] != '\0' ? p->data_of : "unknown");
	return p->source;
}

time_t
price_fetched_at(struct price *p)
{
	return p->fetched;
}

uint64_t
price_reads(struct price *p)
{
	return p->reads;
}

int
price_next(struct price *p, size_t *iter, struct price_row *ret)
{
	struct price_entry	*e;
	size_t			 i = *iter;

	if (i < p->catalog.n)
		e = &p->catalog.v[i];
	else if (i - p->catalog.n < p->bundled.n)
		e = &p->bundled.v[i - p->catalog.n];
	else
		return 0;
	memset(ret, 0, sizeof *ret);
	ret->service = price_class_names[e->cls];
	ret->kind = price_kind_names[e->kind];
	ret->name = e->name;
	ret->region = e->region;
	ret->ondemand = e->od;
	ret->spot = e->spot;
	ret->vcpus = e->vcpus;
	ret->memory_gib = e->mem > 0 ? e->mem : 0;
	ret->source = i < p->catalog.n ? "catalog" : "bundled";
	*iter = i + 1;
	return 1;
}

static json_t *
price_json_num(double d)
{
	return d >= 0 ? json_real(d) : json_null();
}

/* {"gpu_ondemand","gpu_spot","host_ondemand","host_spot","source"}. */
static json_t *
price_json_service(struct price *p, enum gcp_service svc, const char *region,
    const struct gpu_type *g, const char *host)
{
	const char	*src = NULL, *s2 = NULL;
	json_t		*o;
	double		 od, sp;

	od = price_gpu_lookup(p, svc, region, g, 0, &src);
	sp = price_gpu_lookup(p, svc, region, g, 1, &s2);
	o = json_object();
	json_object_set_new(o, "gpu_ondemand", price_json_num(od));
	json_object_set_new(o, "gpu_spot", price_json_num(sp));
	json_object_set_new(o, "source", json_string(src != NULL ? src :
	    (s2 != NULL ? s2 : "none")));
	od = host != NULL ? price_host_lookup(p, svc, region, host, 0, &src) :
	    -1;
	sp = host != NULL ? price_host_lookup(p, svc, region, host, 1, &src) :
	    -1;
	json_object_set_new(o, "host_ondemand", price_json_num(od));
	json_object_set_new(o, "host_spot", price_json_num(sp));
	return o;
}

static int
price_str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *
price_to_json(struct price *p, const char *region, const char *gpu)
{
	const struct gpu_type	*tab, *want = NULL;
	struct price_table	*tabs[2] = { &p->catalog, &p->bundled };
	const char		**regions = NULL, *src, *host;
	json_t			*out, *rows, *row;
	size_t			 nr = 0, i, j, k;
	int			 ng, gi, count;

	if (gpu != NULL && (want = gpu_lookup(gpu)) == NULL)
		want = (const struct gpu_type *)-1;	/* matches nothing */
	/* Every region some GPU has a Compute price in, once. */
	for (k = 0; k < 2; k++) {
		for (i = 0; i < tabs[k]->n; i++) {
			if (tabs[k]->v[i].kind != PK_GPU)
				continue;
			if (region != NULL &&
			    strcmp(tabs[k]->v[i].region, region) != 0)
				continue;
			for (j = 0; j < nr; j++)
				if (strcmp(regions[j], tabs[k]->v[i].region)
				    == 0)
					break;
			if (j < nr)
				continue;
			regions = xreallocarray(regions, nr + 1,
			    sizeof *regions);
			regions[nr++] = tabs[k]->v[i].region;
		}
	}
	if (nr > 1)
		qsort(regions, nr, sizeof *regions, price_str_cmp);

	rows = json_array();
	tab = gpu_table(&ng);
	for (gi = 0; gi < ng; gi++) {
		if (want != NULL && want != &tab[gi])
			continue;
		count = tab[gi].hosts[0].count;
		host = tab[gi].hosts[0].machine_type;
		for (j = 0; j < nr; j++) {
			src = NULL;
			if (price_gpu_lookup(p, GCP_SERVICE_GCE, regions[j],
			    &tab[gi], 0, &src) < 0 && price_gpu_lookup(p,
			    GCP_SERVICE_GCE, regions[j], &tab[gi], 1,
			    &src) < 0)
				continue;
			row = json_object();
			json_object_set_new(row, "gpu", json_string(
			    tab[gi].name));
			json_object_set_new(row, "region", json_string(
			    regions[j]));
			json_object_set_new(row, "count", json_integer(count));
			json_object_set_new(row, "host", host != NULL ?
			    json_string(host) : json_null());
			json_object_set_new(row, "gce", price_json_service(p,
			    GCP_SERVICE_GCE, regions[j], &tab[gi], host));
			json_object_set_new(row, "vertex", price_json_service(
			    p, GCP_SERVICE_VERTEX, regions[j], &tab[gi],
			    host));
			json_array_append_new(rows, row);
		}
	}
	free(regions);
	out = json_object();
	json_object_set_new(out, "source", json_string(price_source(p)));
	json_object_set_new(out, "fetched_at", json_integer(
	    (json_int_t)p->fetched));
	json_object_set_new(out, "vertex_premium",
	    json_real(PRICE_VERTEX_PREMIUM));
	json_object_set_new(out, "prices", rows);
	return out;
}

/* -- life -------------------------------------------------------------- */

int
price_new(struct http *http, const struct gcp_conf *conf, struct price **ret,
    char **cause)
{
	struct price	*p;
	int		 rc;

	p = xcalloc(1, sizeof *p);
	p->http = http;
	p->conf = gcp_conf_dup(conf);
	if ((rc = price_load_bundled(p, p->conf->price_table, cause)) < 0) {
		price_table_clear(&p->bundled);
		gcp_conf_free(p->conf);
		free(p);
		return rc;
	}
	uv_timer_init(http_loop(http), &p->timer);
	p->timer.data = p;
	*ret = p;
	return 0;
}

static void
price_on_close(uv_handle_t *h)
{
	struct price	*p = h->data;

	p->timer_closed = 1;
	price_maybe_free(p);
}

/* The last of the timer and the requests in flight frees P. */
static void
price_maybe_free(struct price *p)
{
	if (!p->dead || !p->timer_closed || p->inflight > 0)
		return;
	price_table_clear(&p->bundled);
	price_table_clear(&p->catalog);
	price_table_clear(&p->next);
	free(p->error);
	gcp_conf_free(p->conf);
	free(p);
}

void
price_free(struct price *p)
{
	struct price_waiter	*w;

	if (p == NULL || p->dead)
		return;
	p->dead = 1;
	while ((w = p->waiters) != NULL) {
		p->waiters = w->next;
		if (w->cb != NULL)
			w->cb(-ECANCELED, "cancelled: prices closed", w->arg);
		free(w);
	}
	uv_timer_stop(&p->timer);
	uv_close((uv_handle_t *)&p->timer, price_on_close);
}
