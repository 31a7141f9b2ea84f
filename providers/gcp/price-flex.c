/*
 * price-flex.c: what flex-start capacity costs (doc/DESIGN.md "Capacity
 * kinds"): from the catalog's flex-start SKUs ("DWS Defined Duration",
 * price_dws_hourly()) where it has them, which is what Google bills;
 * else (the bundled table, a catalog without them) from the on-demand
 * prices price.c knows, less the discount Google publishes for the
 * discounted series (API-NOTES K.2; data/README.md). The discount alone
 * is wrong where the on-demand row is itself the DWS price (the H100
 * rows data/README.md flags ondemand_equals_dws_flexstart_sku): it
 * would count the discount twice.
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

	if (price_dws_hourly(p, svc, region, gpu, count, mt, ret) == 0)
		return 0;
	if (price_gpu_hourly(p, svc, region, gpu, count, 0, &g) != 0 ||
	    price_host_hourly(p, svc, region, mt, 0, &h) != 0)
		return -ENOENT;
	*ret = (g + h) * price_flex_factor(mt);
	return 0;
}
