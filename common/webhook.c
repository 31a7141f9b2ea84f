/*
 * webhook.c: the check of a notification URL. Knows nothing of HTTP
 * clients or configuration files.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "common/webhook.h"
#include "common/xmalloc.h"

/* Is the host of an http:// URL, HOST (LEN bytes), this machine? */
static int
webhook_host_local(const char *host, size_t len)
{
	size_t	i;

	if (len == 9 && strncasecmp(host, "localhost", 9) == 0)
		return 1;
	if (len == 5 && strncmp(host, "[::1]", 5) == 0)
		return 1;
	if (len < 4 || strncmp(host, "127.", 4) != 0)
		return 0;
	for (i = 4; i < len; i++)
		if ((host[i] < '0' || host[i] > '9') && host[i] != '.')
			return 0;
	return 1;
}

int
webhook_url_check(const char *url, char **cause)
{
	const char	*host, *p;
	size_t		 len;
	int		 https;

	for (p = url; *p != '\0'; p++) {
		if ((unsigned char)*p <= ' ' || *p == 0x7f) {
			if (cause != NULL)
				*cause = xprintf("a URL has no spaces or control "
				    "characters; percent-encode them");
			return -EINVAL;
		}
	}
	if (strncasecmp(url, "https://", 8) == 0) {
		https = 1;
		host = url + 8;
	} else if (strncasecmp(url, "http://", 7) == 0) {
		https = 0;
		host = url + 7;
	} else {
		if (cause != NULL)
			*cause = xprintf("not an http(s) URL; write "
			    "https://host/path");
		return -EINVAL;
	}
	if (strchr(host, '@') != NULL &&
	    strchr(host, '@') < host + strcspn(host, "/?#")) {
		if (cause != NULL)
			*cause = xprintf("a user name or password in "
			    "the URL would be logged; put the secret in the "
			    "path the service gives");
		return -EINVAL;
	}
	if (*host == '[')
		len = strchr(host, ']') != NULL ?
		    (size_t)(strchr(host, ']') - host) + 1 : strlen(host);
	else
		len = strcspn(host, ":/?#");
	if (len == 0) {
		if (cause != NULL)
			*cause = xprintf("no host; write "
			    "https://host/path");
		return -EINVAL;
	}
	if (!https && !webhook_host_local(host, len)) {
		if (cause != NULL)
			*cause = xprintf("plain http is only for this "
			    "machine (localhost, 127.0.0.1, [::1]); use "
			    "https://");
		return -EINVAL;
	}
	return 0;
}
