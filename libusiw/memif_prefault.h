/* Faulting in memif's shared packet buffers when its link comes up. */
#ifndef USIW_MEMIF_PREFAULT_H
#define USIW_MEMIF_PREFAULT_H

#include <stdbool.h>
#include <stdint.h>

struct usiw_memif_prefault {
	bool waiting;          /* for the link to come up */
	bool scheduled;        /* the alarm that faults them in is set */
	uint16_t port_id;
	uint64_t next_check_tsc;
};

/* For a memif port: wait for its link from now on. */
void usiw_memif_prefault_init(struct usiw_memif_prefault *p, uint16_t port_id);
/* From each progress pass: a compare, and every few milliseconds a look at
 * the link until it is up; then the regions are faulted in, once. */
void usiw_memif_prefault_check(struct usiw_memif_prefault *p, uint64_t now_tsc);
/* Before the port closes. */
void usiw_memif_prefault_cancel(struct usiw_memif_prefault *p);

#endif
