/*
 * price-flex.c: what flex-start capacity costs (doc/DESIGN.md "Capacity
 * kinds"). The Billing catalog read here has no flex-start SKUs of its
 * own that we know the wording of, so flex-start is priced from the
 * on-demand prices price.c knows, less the discount Google publishes
 * for the discounted series (API-NOTES K.2; data/README.md).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "providers/gcp/price.h"

double
price_flex_factor(const char *mt)
{
	static const char *const series[] = { "a2-", "a3-", "a4-" };
	size_t	i;

	for (i = 0; mt != NULL && i < sizeof series / sizeof series[0]; i++)
		if (strncmp(mt, series[i], strlen(series[i])) == 0)
			return 1.0 - PRICE_FLEX_DISCOUNT;
	return 1.0;
}

int
price_flex_hourly(struct price *p, enum gcp_service svc, const char *region,
    const char *gpu, int count, const char *mt, double *ret)
{
	double	g, h;

	if (price_gpu_hourly(p, svc, region, gpu, count, 0, &g) != 0 ||
	    price_host_hourly(p, svc, region, mt, 0, &h) != 0)
		return -ENOENT;
	*ret = (g + h) * price_flex_factor(mt);
	return 0;
}
