/*
 * bench-client.c: the least a client process per job can be, for
 * bench-submit's floor "spawn + connect + 1-row commit": connect to the
 * Unix socket SOCKET, send one submit line, wait for its reply line and
 * exit 0 if it says {"ok":true. Links libc alone and does nothing else,
 * so spawning it costs what spawning /bin/true costs plus the round
 * trip: the figure gpuq submit would reach if it had no start-up of its
 * own and the daemon only committed one row.
 *
 *   bench-client SOCKET
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <string.h>
#include <unistd.h>

/* The same line as bench-submit's BENCH_REQ. */
#define CLIENT_REQ \
	"{\"op\":\"submit\",\"job\":{\"name\":\"bench\"," \
	"\"image\":\"pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime\"," \
	"\"command\":[\"python\",\"train.py\"]," \
	"\"accelerator\":{\"type\":\"nvidia-tesla-t4\",\"count\":1}}}\n"
#define CLIENT_OK	"{\"ok\":true"

int
main(int argc, char **argv)
{
	struct sockaddr_un	sun;
	char			buf[512];
	size_t			len = 0;
	ssize_t			k;
	int			fd;

	if (argc != 2 || strlen(argv[1]) >= sizeof sun.sun_path)
		return 2;
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, argv[1]);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1 ||
	    write(fd, CLIENT_REQ, strlen(CLIENT_REQ)) !=
	    (ssize_t)strlen(CLIENT_REQ))
		return 1;
	while (len < sizeof buf && memchr(buf, '\n', len) == NULL) {
		if ((k = read(fd, buf + len, sizeof buf - len)) <= 0)
			return 1;
		len += (size_t)k;
	}
	return len >= strlen(CLIENT_OK) &&
	    memcmp(buf, CLIENT_OK, strlen(CLIENT_OK)) == 0 ? 0 : 1;
}
