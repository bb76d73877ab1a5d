/* memif's packet buffers live in a memfd that each peer maps on connect, and
 * the kernel maps its pages lazily: the first pass of traffic through the
 * rings takes a page fault for each new buffer, in the writer and again in
 * the reader.  Over a 1024-slot ring that made the first ~1000 round trips
 * of every connection 6 us instead of 1.9 us (64 B ib_send_lat, perftest -U
 * prints each one).  So once the link is up, the whole region is mapped in
 * one call.
 *
 * memif (DPDK 22.11) raises no link-state event, so the progress pass looks
 * at the link every LINK_CHECK_MS until it is up (a compare otherwise), and
 * then sets a one-shot EAL alarm: the faulting (~19 MB at MTU 9000) runs in
 * EAL's interrupt thread, off the data path.  An alarm that polled the link
 * itself, re-arming every millisecond, kept that thread in the alarm loop on
 * a loaded machine (each round outlasted the period), so it never accepted
 * the memif client's connection.  Reconnections after the first link-up are
 * not watched (the engine keeps its port for the life of the process).
 *
 * DPDK gives no address of the regions, so they are found by the name memif
 * gives its memfds in /proc/self/maps.  MADV_POPULATE_WRITE (Linux 5.14)
 * only fills page tables and never changes the memory, so it is safe while
 * the peer already writes frames into it.  It is made as a raw system call:
 * libfabric's memory monitor rewrites libc's madvise in place (to watch for
 * unmapped memory) while the application starts, and our call, in another
 * thread at that moment, ran into the half-written function (SIGSEGV in
 * __madvise in fi_pingpong).
 *
 * After faulting, the alarm holds the interrupt thread until the engine
 * releases it just before closing the port.  memif handles its peer's
 * disconnect (the peer process exiting) in that thread: memif_disconnect
 * clears the connected flag and then unmaps the shared regions, with no
 * lock against rte_eth_rx_burst in the polling thread, which checks the
 * flag only when it begins.  A burst that began before the flag was cleared
 * and ran on after the unmap faulted: SIGSEGV in memif's rx, reading the
 * ring's tail (seen in 1 of ~30 runs of a client that was waiting for ARP
 * when its memif server exited; engine bad-setups test).  Held, the thread
 * runs no memif event while the engine lives: a peer that goes away leaves
 * the rings mapped and quiet, and TRP finds it gone by its timeouts.  The
 * engine keeps its port for the life of the process, and nothing else of
 * ours uses that thread until the port's teardown (port.c), which runs
 * there after the release. */
#define _GNU_SOURCE
#include "memif_prefault.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "engine_priv.h"

#define MEMIF_REGION_NAME "/memfd:memif_region_"
#define LINK_CHECK_MS 5

static void prefault_memif_regions(void)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned regions = 0;

	if (!maps)
		return;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long start, end;
		if (!strstr(line, MEMIF_REGION_NAME) ||
		    sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		if (syscall(SYS_madvise, start, end - start, MADV_POPULATE_WRITE) == 0)
			regions++;
		else
			USIW_LOG(DEBUG, "memif region at %#lx not prefaulted: %s", start,
				 strerror(errno));
	}
	fclose(maps);
	USIW_LOG(DEBUG, "%u memif region(s) prefaulted", regions);
}

static void at_link_up(void *arg)
{
	struct usiw_memif_prefault *p = arg;

	prefault_memif_regions();
	pthread_mutex_lock(&p->lock);
	while (!p->released)
		pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

void usiw_memif_prefault_init(struct usiw_memif_prefault *p, uint16_t port_id)
{
	p->used = true;
	p->waiting = true;
	p->scheduled = false;
	p->port_id = port_id;
	p->next_check_tsc = 0;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->released = false;
}

void usiw_memif_prefault_check(struct usiw_memif_prefault *p, uint64_t now_tsc)
{
	if (!p->waiting || now_tsc < p->next_check_tsc)
		return;
	struct rte_eth_link link;
	p->next_check_tsc = now_tsc + rte_get_tsc_hz() / 1000 * LINK_CHECK_MS;
	if (rte_eth_link_get_nowait(p->port_id, &link) != 0 ||
	    link.link_status != RTE_ETH_LINK_UP)
		return;
	p->waiting = false;
	p->scheduled = rte_eal_alarm_set(1, at_link_up, p) == 0;
}

void usiw_memif_prefault_cancel(struct usiw_memif_prefault *p)
{
	if (!p->used)
		return;
	p->waiting = false;
	pthread_mutex_lock(&p->lock);
	p->released = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	/* Removes it if it has not run; waits for it if it runs (released). */
	if (p->scheduled)
		rte_eal_alarm_cancel(at_link_up, p);
	p->scheduled = false;
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	p->used = false;
}
