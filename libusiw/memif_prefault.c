/* memif's packet buffers live in a memfd that each peer maps on connect, and
 * the kernel maps its pages lazily: the first pass of traffic through the
 * rings takes a page fault for each new buffer, in the writer and again in
 * the reader.  Over a 1024-slot ring that made the first ~1000 round trips
 * of every connection 6 us instead of 1.9 us (64 B ib_send_lat, perftest -U
 * prints each one).  So when the link comes up, the whole region is mapped
 * in one call, in EAL's interrupt thread, off the data path.
 *
 * memif (DPDK 22.11) raises no link-state event, so an EAL alarm polls the
 * link every millisecond until it is up; reconnections after that are not
 * watched (the engine keeps its port for the life of the process).  DPDK
 * gives no address of the regions, so they are found by the name memif
 * gives its memfds in /proc/self/maps.  MADV_POPULATE_WRITE (Linux 5.14)
 * only fills page tables and never changes the memory, so it is safe while
 * the peer already writes frames into it. */
#define _GNU_SOURCE
#include "memif_prefault.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <rte_alarm.h>
#include <rte_ethdev.h>

#include "engine_priv.h"

#define MEMIF_REGION_NAME "/memfd:memif_region_"
#define LINK_POLL_US 1000

static unsigned prefault_memif_regions(void)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned regions = 0;

	if (!maps)
		return 0;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long start, end;
		if (!strstr(line, MEMIF_REGION_NAME) ||
		    sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		if (madvise((void *)start, end - start, MADV_POPULATE_WRITE) == 0)
			regions++;
		else
			USIW_LOG(DEBUG, "memif region at %#lx not prefaulted: %s", start,
				 strerror(errno));
	}
	fclose(maps);
	return regions;
}

static void poll_link(void *arg)
{
	uint16_t port_id = (uint16_t)(uintptr_t)arg;
	struct rte_eth_link link;

	if (rte_eth_link_get_nowait(port_id, &link) == 0 && link.link_status == RTE_ETH_LINK_UP)
		USIW_LOG(DEBUG, "port %u up: %u memif region(s) prefaulted", port_id,
			 prefault_memif_regions());
	else
		rte_eal_alarm_set(LINK_POLL_US, poll_link, arg);
}

int usiw_memif_prefault_on_link_up(uint16_t port_id)
{
	return rte_eal_alarm_set(LINK_POLL_US, poll_link, (void *)(uintptr_t)port_id);
}

void usiw_memif_prefault_stop(uint16_t port_id)
{
	rte_eal_alarm_cancel(poll_link, (void *)(uintptr_t)port_id);
}
