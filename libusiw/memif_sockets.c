/* memif's unix sockets in this process (memif_sockets.h).
 *
 * Why a memif client must not close a connection its server has not
 * answered yet: DPDK 22.11's memif server (up to its current version) sends
 * its hello as soon as it accepts a connection, and if that send fails
 * (EPIPE: the client has closed it meanwhile) it closes the socket and
 * frees the channel but leaves the channel's interrupt callback registered.
 * The next time EAL's interrupt thread rebuilds its epoll set it meets the
 * closed descriptor and panics ("Error adding fd N epoll_ctl, Bad file
 * descriptor"), taking the whole server process down.  A client of ours that
 * gave up waiting for a slow server's accept, to connect anew (port.c,
 * memif_link.c), did exactly that to the impair forwarder under MPI's ranks
 * (test: memif client of a server that is slow to accept).  Any process that
 * connects and closes at once does it too; only our own clients are ours to
 * keep from it. */
#define _GNU_SOURCE
#include "memif_sockets.h"

#include <dirent.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Whether a unix socket address is our memif socket's name, abstract (no
 * NUL after it: memif binds the whole sun_path) or a path. */
static bool is_memif_name(const struct sockaddr_un *sa, socklen_t len,
			  const struct usiw_memif_args *a)
{
	const size_t off = offsetof(struct sockaddr_un, sun_path);

	if (sa->sun_family != AF_UNIX || len <= off)
		return false;
	const char *name = sa->sun_path;
	size_t n = len - off;
	if (a->abstract) {
		if (name[0] != '\0')
			return false;
		name++;
		n--;
	}
	n = strnlen(name, n);
	return n == strlen(a->socket) && memcmp(name, a->socket, n) == 0;
}

static bool socket_named(int fd, bool peer, const struct usiw_memif_args *a)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	int rc = peer ? getpeername(fd, (struct sockaddr *)&sa, &len)
		      : getsockname(fd, (struct sockaddr *)&sa, &len);

	return rc == 0 && is_memif_name(&sa, len, a);
}

/* A server's listener and the connection it accepted carry the socket's
 * name, a client's connection has it as its peer's; /proc/self/fd lists
 * every descriptor. */
unsigned usiw_memif_sockets(const struct usiw_memif_args *a, struct pollfd *fds, unsigned max)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;
	unsigned n = 0;

	if (!dir)
		return 0;
	while (n < max && (de = readdir(dir))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		int type;
		socklen_t type_len = sizeof(type);

		if (*end || end == de->d_name || fd == dirfd(dir) ||
		    getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &type_len) != 0 ||
		    type != SOCK_SEQPACKET)
			continue;
		if (socket_named((int)fd, false, a) || socket_named((int)fd, true, a))
			fds[n++] = (struct pollfd){ .fd = (int)fd, .events = POLLIN };
	}
	closedir(dir);
	return n;
}

bool usiw_memif_client_awaits_server(const struct usiw_memif_args *a)
{
	struct pollfd fds[USIW_MEMIF_SOCKETS_MAX];
	const unsigned n = usiw_memif_sockets(a, fds, USIW_MEMIF_SOCKETS_MAX);

	for (unsigned i = 0; i < n; i++)
		fds[i].events = POLLRDHUP;
	if (poll(fds, n, 0) < 0)
		return false;
	for (unsigned i = 0; i < n; i++) {
		if (!(fds[i].revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)))
			return true;
	}
	return false;
}
