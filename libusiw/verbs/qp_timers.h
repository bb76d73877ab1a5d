/* The running QPs (those with a stack) ordered by their stacks' next
 * deadline, in a binary min-heap.  Finding the due timers then costs a look
 * at the top, and a QP whose stack was used is re-placed in O(log n): the
 * scan of every QP after each received packet that this replaces made a
 * process with 1024 QPs spend its time in that scan.
 *
 * Each entry holds its QP's deadline beside the pointer, so that re-placing
 * a QP reads only the heap's own array (16 KiB for 1024 QPs): read through
 * the pointers, each level of a sift read another QP's struct, a cache miss
 * when there are many QPs (callgrind's cache simulation of qp-lat over 1024
 * QPs with a 2 MiB last level: sift_down's misses there 4485 -> 318;
 * docs/bench.md, Many QPs). */
#ifndef USIW_VERBS_QP_TIMERS_H
#define USIW_VERBS_QP_TIMERS_H

#include <stdbool.h>
#include <stdint.h>

struct usiw_qp;

struct usiw_qp_timer_entry {
	uint64_t deadline;
	struct usiw_qp *qp;
};

struct usiw_qp_timers {
	struct usiw_qp_timer_entry *heap;       /* heap[0]: the earliest deadline */
	uint32_t len, cap;
	struct usiw_qp *changed;        /* stacks used since their last placing */
};

/* All with the progress lock held. */
int usiw_qp_timers_add(struct usiw_qp_timers *t, struct usiw_qp *qp);   /* 0 or -ENOMEM */
void usiw_qp_timers_remove(struct usiw_qp_timers *t, struct usiw_qp *qp);
/* The QP's stack was used outside its timer: its deadline may have moved. */
void usiw_qp_timers_changed(struct usiw_qp_timers *t, struct usiw_qp *qp);
/* Re-places the changed QPs, then polls every stack whose deadline is at or
 * before now (each once).  Returns the earliest deadline left (UINT64_MAX:
 * none). */
uint64_t usiw_qp_timers_run(struct usiw_qp_timers *t, uint64_t now);
/* Frees the heap once no QP is left in it. */
void usiw_qp_timers_fini(struct usiw_qp_timers *t);

#endif
