/* See verbs-peer.h.  err(3) names the program in each message. */
#include "verbs-peer.h"

#include <arpa/inet.h>
#include <err.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CONNECT_TRIES 200
#define CONNECT_RETRY_US 50000

struct ibv_context *verbs_peer_open_usiw0(void)
{
	int n;
	struct ibv_device **list = ibv_get_device_list(&n);

	for (int i = 0; list && i < n; i++) {
		if (!strcmp(ibv_get_device_name(list[i]), "usiw0")) {
			struct ibv_context *ctx = ibv_open_device(list[i]);
			ibv_free_device_list(list);
			if (!ctx)
				err(1, "ibv_open_device(usiw0)");
			return ctx;
		}
	}
	errx(1, "no usiw0 device (run through tools/usiw-run or tools/usiw-pair)");
}

int verbs_peer_accept(int port)
{
	int one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int l = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
		err(1, "cannot listen on TCP port %d", port);
	int s = accept(l, NULL, NULL);
	if (s < 0)
		err(1, "accept on TCP port %d", port);
	close(l);
	return s;
}

int verbs_peer_connect(const char *server_ipv4, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	if (inet_pton(AF_INET, server_ipv4, &a.sin_addr) != 1)
		errx(1, "'%s' is not an IPv4 address", server_ipv4);
	for (int tries = 0; tries < CONNECT_TRIES; tries++) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a)) == 0)
			return s;
		if (s >= 0)
			close(s);
		usleep(CONNECT_RETRY_US);
	}
	err(1, "cannot connect to %s:%d", server_ipv4, port);
}

void verbs_peer_exchange(int sock, const void *out, void *in, size_t len)
{
	if (write(sock, out, len) != (ssize_t)len)
		err(1, "TCP write to the peer");
	for (size_t got = 0; got < len;) {
		ssize_t n = read(sock, (char *)in + got, len - got);
		if (n < 0)
			err(1, "TCP read from the peer");
		if (n == 0)
			errx(1, "the peer closed the TCP connection");
		got += (size_t)n;
	}
}
