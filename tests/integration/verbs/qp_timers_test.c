/* The running QPs' timer heap (libusiw/verbs/qp_timers.c) against a brute
 * force over the same QPs: every pass polls exactly the stacks that are due,
 * each once, and returns the earliest deadline left, through random
 * deadlines, changes, removals and re-additions of 1000 QPs, with stacks
 * whose poll leaves them idle, due later or still due; and a slot names its
 * running QP, and never a QP that stopped.  The stacks are
 * stand-ins that record polls (this file defines the two qp_stack functions
 * the heap calls). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "qp.h"
#include "qp_timers.h"

#define NQP 1000

struct qp_stack {
	uint64_t deadline;      /* what qp_stack_next_deadline reports */
	unsigned polls;
};

/* The pass's time, for stacks whose poll sets a later deadline. */
static uint64_t pass_now;

void qp_stack_poll(struct qp_stack *qs)
{
	int r = rand() % 8;

	qs->polls++;
	/* Its timer work is done, or it has more later (a keepalive), or it
	 * is still due (the host refused its packet: its deadline is 0). */
	qs->deadline = r < 4 ? UINT64_MAX : r < 7 ? pass_now + 1 + (uint64_t)(rand() % 3000) : 0;
}

uint64_t qp_stack_next_deadline(const struct qp_stack *qs)
{
	return qs->deadline;
}

static struct qp_stack stacks[NQP];
static struct usiw_qp qps[NQP];
static bool running[NQP];
static uint32_t slot_left[NQP];        /* the slot a QP had when it stopped */

static uint64_t rand_deadline(void)
{
	return rand() % 8 == 0 ? UINT64_MAX : 1000 + (uint64_t)(rand() % 100000);
}

static void test_heap_matches_brute_force(void **state)
{
	struct usiw_qp_timers t = { 0 };

	(void)state;
	srand(7);
	for (int i = 0; i < NQP; i++) {
		qps[i].stack = &stacks[i];
		stacks[i].deadline = rand_deadline();
		assert_int_equal(usiw_qp_timers_add(&t, &qps[i]), 0);
		running[i] = true;
	}
	for (uint64_t now = 0; now < 120000; now += 1000) {
		/* Some stacks are used (deadline moved), some go, some come back. */
		for (int k = 0; k < 50; k++) {
			int i = rand() % NQP;
			if (!running[i]) {
				stacks[i].deadline = now + (uint64_t)(rand() % 5000);
				assert_int_equal(usiw_qp_timers_add(&t, &qps[i]), 0);
				running[i] = true;
			} else if (rand() % 4 == 0) {
				slot_left[i] = qps[i].timer.slot;
				usiw_qp_timers_remove(&t, &qps[i]);
				running[i] = false;
			} else {
				stacks[i].deadline = now + (uint64_t)(rand() % 5000);
				usiw_qp_timers_changed(&t, &qps[i]);
			}
		}
		bool due[NQP];
		uint64_t expect_next = UINT64_MAX;
		for (int i = 0; i < NQP; i++) {
			if (running[i])
				assert_ptr_equal(usiw_qp_timers_slot_qp(&t, qps[i].timer.slot), &qps[i]);
			else
				assert_ptr_not_equal(usiw_qp_timers_slot_qp(&t, slot_left[i]), &qps[i]);
			due[i] = running[i] && stacks[i].deadline <= now;
			stacks[i].polls = 0;
		}
		pass_now = now;
		uint64_t next = usiw_qp_timers_run(&t, now);
		for (int i = 0; i < NQP; i++) {
			assert_int_equal(stacks[i].polls, due[i] ? 1 : 0);
			/* one still due is the next pass's */
			uint64_t d = stacks[i].deadline <= now ? now + 1 : stacks[i].deadline;
			if (running[i] && d < expect_next)
				expect_next = d;
		}
		assert_int_equal(next, expect_next);
	}
	for (int i = 0; i < NQP; i++)
		if (running[i])
			usiw_qp_timers_remove(&t, &qps[i]);
	assert_int_equal(t.len, 0);
	for (uint32_t slot = 0; slot < t.slots; slot++)
		assert_null(usiw_qp_timers_slot_qp(&t, slot));
	usiw_qp_timers_fini(&t);
	assert_null(t.heap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heap_matches_brute_force),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
