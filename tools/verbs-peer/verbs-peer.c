/* See verbs-peer.h.  err(3) names the program in each message. */
#include "verbs-peer.h"

#include <err.h>
#include <string.h>

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

void verbs_peer_exchange(int sock, const void *out, void *in, size_t len)
{
	tcp_setup_send(sock, out, len);
	tcp_setup_recv(sock, in, len);
}
