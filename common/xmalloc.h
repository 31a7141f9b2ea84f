/*
 * xmalloc.h: allocation that cannot fail (it logs and exits on OOM),
 * and a few string helpers both binaries use.
 */
#ifndef GPUQ_XMALLOC_H
#define GPUQ_XMALLOC_H

#include <stddef.h>

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
int	 xasprintf(char **, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* New string, like xasprintf but returns it. */
char	*xprintf(const char *, ...) __attribute__((format(printf, 1, 2)));
/* Wipe then free: for tokens, keys and anything secret. */
void	 freezero_str(char *);

#endif
