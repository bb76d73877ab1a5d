/* memif's packet buffers live in a memfd that each peer maps on connect, and
 * the kernel maps its pages lazily: the first pass of traffic through the
 * rings takes a page fault for each new buffer, in the writer and again in
 * the reader.  Over a 1024-slot ring that made the first ~1000 round trips
 * of every connection 6 us instead of 1.9 us (64 B ib_send_lat, perftest -U
 * prints each one).  So once the link is up, the whole region is mapped in
 * one call (memif_link.c makes it, in EAL's interrupt thread).
 *
 * DPDK gives no address of the regions, so they are found by the name memif
 * gives its memfds in /proc/self/maps.  MADV_POPULATE_WRITE (Linux 5.14)
 * only fills page tables and never changes the memory, so it is safe while
 * the peer already writes frames into it.  It is made as a raw system call:
 * libfabric's memory monitor rewrites libc's madvise in place (to watch for
 * unmapped memory) while the application starts, and our call, in another
 * thread at that moment, ran into the half-written function (SIGSEGV in
 * __madvise in fi_pingpong). */
#define _GNU_SOURCE
#include "memif_prefault.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine_priv.h"

#define MEMIF_REGION_NAME "/memfd:memif_region_"

void usiw_memif_prefault_regions(void)
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
