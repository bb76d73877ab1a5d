/* The running QPs (those with a stack) ordered by their stacks' next
 * deadline, in a binary min-heap.  Finding the due timers then costs a look
 * at the top, and a QP whose stack was used is re-placed in O(log n): the
 * scan of every QP after each received packet that this replaces made a
 * process with 1024 QPs spend its time in that scan.
 *
 * Each running QP has a slot: a small number, taken when it starts running
 * and given back when it stops, that indexes the tables below.  A slot names
 * a QP without a pointer that could outlive it (usiw_qp_timers_slot_qp:
 * progress.c keeps the QP an application posts to next that way).  A heap
 * entry holds its QP's deadline and slot, and a QP's place in the heap is
 * kept by slot, so that re-placing a QP reads and writes only the heap's own
 * arrays (28 bytes a QP): read through the pointers, each level of a sift
 * read another QP's struct, a cache miss when there are many QPs
 * (callgrind's cache simulation of qp-lat over 1024 QPs with a 2 MiB last
 * level: sift_down's misses 4485 -> 318; docs/bench.md, Many QPs). */
#ifndef USIW_VERBS_QP_TIMERS_H
#define USIW_VERBS_QP_TIMERS_H

#include <stdbool.h>
#include <stdint.h>

struct usiw_qp;

#define USIW_QP_NO_SLOT UINT32_MAX

struct usiw_qp_timer_entry {
	uint64_t deadline;
	uint32_t slot;
};

struct usiw_qp_timers {
	struct usiw_qp_timer_entry *heap;       /* heap[0]: the earliest deadline */
	uint32_t len;
	/* By slot: the QP (NULL: a free slot) and its index in heap. */
	struct usiw_qp **qp;
	uint32_t *index;
	uint32_t slots;                         /* of qp and index */
	struct usiw_qp *changed;                /* stacks used since their last placing */
};

/* All with the lock held (progress.h). */
int usiw_qp_timers_add(struct usiw_qp_timers *t, struct usiw_qp *qp);   /* 0 or -ENOMEM */
void usiw_qp_timers_remove(struct usiw_qp_timers *t, struct usiw_qp *qp);
/* The QP's stack was used outside its timer: its deadline may have moved. */
void usiw_qp_timers_changed(struct usiw_qp_timers *t, struct usiw_qp *qp);
/* Re-places the changed QPs, then polls every stack whose deadline is at or
 * before now (each once).  Returns the earliest deadline left (UINT64_MAX:
 * none). */
uint64_t usiw_qp_timers_run(struct usiw_qp_timers *t, uint64_t now);
/* The running QP in a slot: NULL if none is (any more). */
struct usiw_qp *usiw_qp_timers_slot_qp(const struct usiw_qp_timers *t, uint32_t slot);
/* Frees the tables once no QP is left in them. */
void usiw_qp_timers_fini(struct usiw_qp_timers *t);

#endif
