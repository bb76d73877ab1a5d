/* A memif server that is slow to start: its socket listens as soon as EAL
 * has probed the device, and its port starts DELAY_MS later, as a server
 * that creates its pools in between does.  A client that connects in that
 * window must still come up once the port starts (libusiw/port.c).
 *   memif-late-start DELAY_MS RUN_S EAL-ARGS...
 * Exits 0 once a client's link was up and went down again (the client
 * exited), 1 if no client came up within RUN_S seconds. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

static bool link_up(uint16_t port)
{
	struct rte_eth_link link;

	return rte_eth_link_get_nowait(port, &link) == 0 && link.link_status;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: memif-late-start DELAY_MS RUN_S EAL-ARGS...\n");
		return 2;
	}
	const unsigned delay_ms = (unsigned)atoi(argv[1]), run_s = (unsigned)atoi(argv[2]);
	argv[2] = argv[0];
	if (rte_eal_init(argc - 2, argv + 2) < 0 || rte_eth_dev_count_avail() != 1) {
		fprintf(stderr, "memif-late-start: EAL or its one memif port did not come up\n");
		return 1;
	}
	struct rte_mempool *pool = rte_pktmbuf_pool_create("late", 1024, 0, 0,
							   RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	struct rte_eth_conf conf = { 0 };
	rte_delay_ms(delay_ms);
	if (!pool || rte_eth_dev_configure(0, 1, 1, &conf) ||
	    rte_eth_rx_queue_setup(0, 0, 256, 0, NULL, pool) ||
	    rte_eth_tx_queue_setup(0, 0, 256, 0, NULL) || rte_eth_dev_start(0)) {
		fprintf(stderr, "memif-late-start: the port did not start\n");
		return 1;
	}
	printf("memif-late-start: port started after %u ms\n", delay_ms);
	fflush(stdout);

	const uint64_t end = rte_get_timer_cycles() + (uint64_t)run_s * rte_get_timer_hz();
	bool was_up = false;
	while (rte_get_timer_cycles() < end) {
		struct rte_mbuf *burst[32];
		uint16_t n = rte_eth_rx_burst(0, 0, burst, 32);

		rte_pktmbuf_free_bulk(burst, n);
		if (link_up(0)) {
			was_up = true;
		} else if (was_up) {
			printf("memif-late-start: a client was connected, and has gone\n");
			return 0;
		}
		usleep(1000);
	}
	fprintf(stderr, "memif-late-start: %s within %u s\n",
		was_up ? "the client did not go" : "no client came up", run_s);
	return 1;
}
