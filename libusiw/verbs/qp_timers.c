/* The running QPs' timers as a binary min-heap on their stacks' next
 * deadline (qp_timers.h). */
#include "qp_timers.h"

#include <errno.h>
#include <stdlib.h>

#include "qp.h"

#define NOT_IN_HEAP UINT32_MAX

static void place(struct usiw_qp_timers *t, uint32_t i, struct usiw_qp_timer_entry e)
{
	t->heap[i] = e;
	e.qp->timer.index = i;
}

/* Returns where the entry came to rest. */
static uint32_t sift_up(struct usiw_qp_timers *t, uint32_t i)
{
	struct usiw_qp_timer_entry e = t->heap[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (t->heap[parent].deadline <= e.deadline)
			break;
		place(t, i, t->heap[parent]);
		i = parent;
	}
	place(t, i, e);
	return i;
}

static void sift_down(struct usiw_qp_timers *t, uint32_t i)
{
	struct usiw_qp_timer_entry e = t->heap[i];

	for (;;) {
		uint32_t child = 2 * i + 1;
		if (child >= t->len)
			break;
		if (child + 1 < t->len && t->heap[child + 1].deadline < t->heap[child].deadline)
			child++;
		if (e.deadline <= t->heap[child].deadline)
			break;
		place(t, i, t->heap[child]);
		i = child;
	}
	place(t, i, e);
}

/* The entry at i has a new deadline: restore the heap order around it. */
static void set_deadline(struct usiw_qp_timers *t, uint32_t i, uint64_t deadline)
{
	t->heap[i].deadline = deadline;
	sift_down(t, sift_up(t, i));
}

int usiw_qp_timers_add(struct usiw_qp_timers *t, struct usiw_qp *qp)
{
	if (t->len == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 64;
		struct usiw_qp_timer_entry *heap = realloc(t->heap, cap * sizeof(*heap));
		if (!heap)
			return -ENOMEM;
		t->heap = heap;
		t->cap = cap;
	}
	qp->timer.changed = false;
	place(t, t->len, (struct usiw_qp_timer_entry){ qp_stack_next_deadline(qp->stack), qp });
	sift_up(t, t->len++);
	return 0;
}

static void unlink_changed(struct usiw_qp_timers *t, struct usiw_qp *qp)
{
	if (!qp->timer.changed)
		return;
	for (struct usiw_qp **p = &t->changed; *p; p = &(*p)->timer.next_changed) {
		if (*p == qp) {
			*p = qp->timer.next_changed;
			break;
		}
	}
	qp->timer.changed = false;
}

void usiw_qp_timers_remove(struct usiw_qp_timers *t, struct usiw_qp *qp)
{
	uint32_t i = qp->timer.index;

	if (i == NOT_IN_HEAP || i >= t->len || t->heap[i].qp != qp)
		return;
	unlink_changed(t, qp);
	qp->timer.index = NOT_IN_HEAP;
	struct usiw_qp_timer_entry last = t->heap[--t->len];
	if (last.qp != qp) {
		place(t, i, last);
		set_deadline(t, i, last.deadline);
	}
}

void usiw_qp_timers_changed(struct usiw_qp_timers *t, struct usiw_qp *qp)
{
	if (qp->timer.changed || !qp->stack)
		return;
	qp->timer.changed = true;
	qp->timer.next_changed = t->changed;
	t->changed = qp;
}

uint64_t usiw_qp_timers_run(struct usiw_qp_timers *t, uint64_t now)
{
	while (t->changed) {
		struct usiw_qp *qp = t->changed;
		t->changed = qp->timer.next_changed;
		qp->timer.changed = false;
		set_deadline(t, qp->timer.index, qp_stack_next_deadline(qp->stack));
	}
	/* Each due stack once: one whose timer leaves a deadline still due
	 * (now has passed it again) waits for the next pass. */
	for (uint32_t polled = 0; polled < t->len && t->heap[0].deadline <= now; polled++) {
		struct usiw_qp *qp = t->heap[0].qp;
		qp_stack_poll(qp->stack);
		uint64_t next = qp_stack_next_deadline(qp->stack);
		t->heap[0].deadline = next > now ? next : now + 1;
		sift_down(t, 0);
	}
	return t->len ? t->heap[0].deadline : UINT64_MAX;
}

void usiw_qp_timers_fini(struct usiw_qp_timers *t)
{
	if (t->len)
		return;
	free(t->heap);
	*t = (struct usiw_qp_timers){ 0 };
}
