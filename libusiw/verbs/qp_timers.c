/* The running QPs' timers as a binary min-heap on their stacks' next
 * deadline (qp_timers.h). */
#include "qp_timers.h"

#include <errno.h>
#include <stdlib.h>

#include "qp.h"

static void place(struct usiw_qp_timers *t, uint32_t i, struct usiw_qp_timer_entry e)
{
	t->heap[i] = e;
	t->index[e.slot] = i;
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

/* The heap holds one entry per slot in use, so all three tables grow
 * together. */
static int grow(struct usiw_qp_timers *t)
{
	uint32_t slots = t->slots ? 2 * t->slots : 64;
	struct usiw_qp_timer_entry *heap = realloc(t->heap, slots * sizeof(*heap));
	if (heap)
		t->heap = heap;
	struct usiw_qp **qp = realloc(t->qp, slots * sizeof(*qp));
	if (qp)
		t->qp = qp;
	uint32_t *index = realloc(t->index, slots * sizeof(*index));
	if (index)
		t->index = index;
	if (!heap || !qp || !index)
		return -ENOMEM;
	for (uint32_t s = t->slots; s < slots; s++)
		t->qp[s] = NULL;
	t->slots = slots;
	return 0;
}

int usiw_qp_timers_add(struct usiw_qp_timers *t, struct usiw_qp *qp)
{
	uint32_t slot = 0;

	/* A linear search: QPs start far less often than they send. */
	while (slot < t->slots && t->qp[slot])
		slot++;
	if (slot == t->slots && grow(t))
		return -ENOMEM;
	t->qp[slot] = qp;
	qp->timer.slot = slot;
	qp->timer.changed = false;
	place(t, t->len, (struct usiw_qp_timer_entry){ qp_stack_next_deadline(qp->stack), slot });
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
	const uint32_t slot = qp->timer.slot;

	if (slot == USIW_QP_NO_SLOT || slot >= t->slots || t->qp[slot] != qp)
		return;
	unlink_changed(t, qp);
	qp->timer.slot = USIW_QP_NO_SLOT;
	t->qp[slot] = NULL;
	const uint32_t i = t->index[slot];
	struct usiw_qp_timer_entry last = t->heap[--t->len];
	if (last.slot != slot) {
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
		set_deadline(t, t->index[qp->timer.slot], qp_stack_next_deadline(qp->stack));
	}
	/* Each due stack once: one whose timer leaves a deadline still due
	 * (now has passed it again) waits for the next pass. */
	for (uint32_t polled = 0; polled < t->len && t->heap[0].deadline <= now; polled++) {
		struct usiw_qp *qp = t->qp[t->heap[0].slot];
		qp_stack_poll(qp->stack);
		uint64_t next = qp_stack_next_deadline(qp->stack);
		t->heap[0].deadline = next > now ? next : now + 1;
		sift_down(t, 0);
	}
	return t->len ? t->heap[0].deadline : UINT64_MAX;
}

struct usiw_qp *usiw_qp_timers_slot_qp(const struct usiw_qp_timers *t, uint32_t slot)
{
	return slot < t->slots ? t->qp[slot] : NULL;
}

void usiw_qp_timers_fini(struct usiw_qp_timers *t)
{
	if (t->len)
		return;
	free(t->heap);
	free(t->qp);
	free(t->index);
	*t = (struct usiw_qp_timers){ 0 };
}
