/* See tcp-setup.h. */
#include "tcp-setup.h"

#include <arpa/inet.h>
#include <err.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#define CONNECT_TRIES 200
#define CONNECT_RETRY_US 50000
#define LISTEN_BACKLOG 4

static struct sockaddr_in ipv4_address(const char *ipv4, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	if (port <= 0 || port > UINT16_MAX)
		errx(1, "the TCP port is 1 to %u, not %d", UINT16_MAX, port);
	a.sin_port = htons((uint16_t)port);
	if (ipv4 && inet_pton(AF_INET, ipv4, &a.sin_addr) != 1)
		errx(1, "'%s' is not an IPv4 address", ipv4);
	return a;
}

/* The set-up is a few small messages each way, each awaited by the peer:
 * Nagle's delay would only add to every step. */
static void no_delay(int sock)
{
	int one = 1;

	if (setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		err(1, "TCP_NODELAY");
}

int tcp_setup_listen(const char *ipv4, int port)
{
	int one = 1;
	struct sockaddr_in a = ipv4_address(ipv4, port);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, LISTEN_BACKLOG))
		err(1, "cannot listen on TCP %s:%d", ipv4 ? ipv4 : "*", port);
	return l;
}

int tcp_setup_accept(int listener)
{
	int s;

	do
		s = accept(listener, NULL, NULL);
	while (s < 0 && errno == EINTR);
	if (s < 0)
		err(1, "accepting a TCP connection");
	no_delay(s);
	return s;
}

int tcp_setup_accept_one(int port)
{
	int l = tcp_setup_listen(NULL, port);
	int s = tcp_setup_accept(l);

	close(l);
	return s;
}

int tcp_setup_connect(const char *ipv4, int port)
{
	struct sockaddr_in a = ipv4_address(ipv4, port);

	for (int tries = 0; tries < CONNECT_TRIES; tries++) {
		int s = socket(AF_INET, SOCK_STREAM, 0);

		if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a)) == 0) {
			no_delay(s);
			return s;
		}
		if (s >= 0)
			close(s);
		usleep(CONNECT_RETRY_US);
	}
	err(1, "cannot connect to TCP %s:%d", ipv4, port);
}

void tcp_setup_send(int sock, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(sock, p, len);

		if (n < 0 && errno != EINTR)
			err(1, "writing to the peer's TCP connection");
		if (n > 0) {
			p += n;
			len -= (size_t)n;
		}
	}
}

void tcp_setup_recv(int sock, void *buf, size_t len)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = read(sock, p, len);

		if (n == 0)
			errx(1, "the peer closed the TCP connection (see its output)");
		if (n < 0 && errno != EINTR)
			err(1, "reading from the peer's TCP connection");
		if (n > 0) {
			p += n;
			len -= (size_t)n;
		}
	}
}
