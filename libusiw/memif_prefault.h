/* What the engine does in EAL's interrupt thread when a memif link comes up:
 * fault in the shared packet buffers, then hold that thread until the port
 * closes, so that memif cannot unmap them while the engine polls
 * (memif_prefault.c says why). */
#ifndef USIW_MEMIF_PREFAULT_H
#define USIW_MEMIF_PREFAULT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct usiw_memif_prefault {
	bool used;             /* initialized: the port is memif */
	bool waiting;          /* for the link to come up */
	bool scheduled;        /* the alarm that faults them in is set */
	uint16_t port_id;
	uint64_t next_check_tsc;
	/* The interrupt thread waits in that alarm until released. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool released;
};

/* For a memif port: wait for its link from now on. */
void usiw_memif_prefault_init(struct usiw_memif_prefault *p, uint16_t port_id);
/* From each progress pass: a compare, and every few milliseconds a look at
 * the link until it is up; then the regions are faulted in, once. */
void usiw_memif_prefault_check(struct usiw_memif_prefault *p, uint64_t now_tsc);
/* Before the port closes, once nothing polls it any more: lets the
 * interrupt thread go (memif's pending events, such as the peer's
 * disconnect, run after this). */
void usiw_memif_prefault_cancel(struct usiw_memif_prefault *p);

#endif
