/*
 * xmalloc.c: allocation wrappers that exit on OOM (tmux xmalloc.c).
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/xmalloc.h"

void *
xmalloc(size_t size)
{
	void	*p;

	if (size == 0)
		size = 1;
	if ((p = malloc(size)) == NULL)
		fatal("xmalloc: allocating %zu bytes", size);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void	*p;

	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	if ((p = calloc(nmemb, size)) == NULL)
		fatal("xcalloc: allocating %zu * %zu bytes", nmemb, size);
	return p;
}

void *
xrealloc(void *ptr, size_t size)
{
	return xreallocarray(ptr, 1, size);
}

void *
xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	void	*p;

	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	if (size != 0 && nmemb > SIZE_MAX / size)
		fatalx("xreallocarray: %zu * %zu overflows", nmemb, size);
	if ((p = realloc(ptr, nmemb * size)) == NULL)
		fatal("xreallocarray: allocating %zu * %zu bytes", nmemb, size);
	return p;
}

char *
xstrdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		fatal("xstrdup");
	return p;
}

char *
xstrndup(const char *s, size_t n)
{
	char	*p;

	if ((p = strndup(s, n)) == NULL)
		fatal("xstrndup");
	return p;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal("xasprintf");
	return n;
}

char *
xprintf(const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		fatal("xprintf");
	va_end(ap);
	return s;
}

void
freezero_str(char *s)
{
	if (s == NULL)
		return;
#ifdef HAVE_EXPLICIT_BZERO
	explicit_bzero(s, strlen(s));
#else
	memset(s, 0, strlen(s));
#endif
	free(s);
}
