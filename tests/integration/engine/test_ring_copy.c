/* The memif port's copy into the ring (libusiw/ring_copy.c): the streaming
 * copy writes exactly the bytes of a plain copy, at every alignment, and
 * the chooser, fed the bursts of a simulated port whose two copies cost
 * what they cost on this VM with its two vCPUs near each other or far
 * apart, settles on the faster mode, never probes streaming stores where
 * they cannot win, and follows the placement when it changes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ring_copy.h"

/* ---- the streaming copy ---- */

static void streaming_copy_is_a_copy(void **state)
{
	(void)state;
	static const size_t lengths[] = { 0, 1, 15, 16, 63, 64, 65, 127, 128, 1000, 8192, 9000, 65000 };
	static uint8_t src[65536 + 128], dst[65536 + 256];

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + (i >> 8));
	for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); l++) {
		const size_t len = lengths[l];
		for (size_t so = 0; so < 64; so += 7) {
			for (size_t d_off = 0; d_off < 64; d_off += 5) {
				memset(dst, 0xa5, sizeof(dst));
				ring_copy_streaming(dst + 64 + d_off, src + so, len);
				assert_memory_equal(dst + 64 + d_off, src + so, len);
				for (size_t i = 0; i < 64 + d_off; i++)
					assert_int_equal(dst[i], 0xa5);
				for (size_t i = 64 + d_off + len; i < sizeof(dst); i++)
					assert_int_equal(dst[i], 0xa5);
			}
		}
	}
}

/* ---- the chooser ---- */

#define WINDOW 1000000u     /* cycles */
#define GAP_MAX 100000u
#define BURST 65536u        /* bytes a burst copies */

/* Cycles a byte, in 1/1000 of a cycle, as measured on this VM (ib_write_bw
 * 64 KiB, libusiw/ring_copy.h): end to end, the copy's own share, and one
 * streaming piece timed alone. */
struct placement {
	unsigned cached_e2e, cached_copy;
	unsigned streaming_e2e, streaming_copy, streaming_alone;
};

static const struct placement near = { 77, 60, 190, 70, 150 };
static const struct placement far = { 450, 420, 133, 80, 150 };
/* the cached copy slow at the sender, but both modes as fast end to end */
static const struct placement equal = { 200, 400, 200, 75, 150 };

struct sim {
	struct ring_copy_chooser c;
	uint64_t now;
	unsigned bursts[2];        /* bursts copied in each mode */
	unsigned samples;
};

static void sim_init(struct sim *s)
{
	memset(s, 0, sizeof(*s));
	ring_copy_chooser_init(&s->c, WINDOW, GAP_MAX);
	s->now = 12345;
}

/* One burst of one piece, copied as the port copies it
 * (ring_copy_next_piece). */
static void sim_burst(struct sim *s, const struct placement *p, uint64_t pause)
{
	const enum ring_copy_mode m = ring_copy_mode(&s->c);
	unsigned e2e = p->cached_e2e, copy = p->cached_copy;

	s->now += pause;
	switch (ring_copy_next_piece(&s->c)) {
	case RING_COPY_PIECE_CACHED:
		break;
	case RING_COPY_PIECE_STREAMING:
		e2e = p->streaming_e2e;
		copy = p->streaming_copy;
		break;
	case RING_COPY_PIECE_TIMED:
		ring_copy_sampled(&s->c, (uint64_t)p->streaming_alone * BURST / 1000, BURST);
		e2e = p->streaming_e2e;
		copy = p->streaming_alone;
		s->samples++;
		break;
	}
	s->bursts[m]++;
	s->now += (uint64_t)e2e * BURST / 1000;
	ring_copy_account(&s->c, s->now, BURST, (uint64_t)copy * BURST / 1000);
}

/* Bursts until `cycles` of busy time have passed. */
static void sim_run(struct sim *s, const struct placement *p, uint64_t cycles)
{
	const uint64_t end = s->now + cycles;
	while (s->now < end)
		sim_burst(s, p, 0);
}

static void near_never_probes_streaming(void **state)
{
	(void)state;
	struct sim s;
	sim_init(&s);
	sim_run(&s, &near, 500ull * WINDOW);
	assert_int_equal(ring_copy_mode(&s.c), RING_COPY_CACHED);
	assert_int_equal(s.bursts[RING_COPY_STREAMING], 0);
	/* a piece timed every SAMPLE_INTERVAL (64) windows, and the first */
	assert_in_range(s.samples, 500 / 64, 500 / 64 + 2);
}

static void far_switches_to_streaming(void **state)
{
	(void)state;
	struct sim s;
	sim_init(&s);
	sim_run(&s, &far, 4ull * WINDOW);
	assert_int_equal(ring_copy_mode(&s.c), RING_COPY_STREAMING);
	s.bursts[0] = s.bursts[1] = 0;
	sim_run(&s, &far, 1000ull * WINDOW);
	/* probes of the cached copy, one window in 65 at most once the
	 * interval has grown, take little */
	assert_true(s.bursts[RING_COPY_CACHED] * 20 < s.bursts[RING_COPY_STREAMING]);
}

static void follows_the_placement(void **state)
{
	(void)state;
	struct sim s;
	sim_init(&s);
	sim_run(&s, &far, 200ull * WINDOW);
	assert_int_equal(s.c.held, RING_COPY_STREAMING);
	/* the vCPUs move near: the next probe of the cached copy, at most
	 * 64 streaming windows away, wins */
	sim_run(&s, &near, 70ull * WINDOW);
	assert_int_equal(s.c.held, RING_COPY_CACHED);
	s.bursts[0] = s.bursts[1] = 0;
	sim_run(&s, &near, 200ull * WINDOW);
	assert_int_equal(s.bursts[RING_COPY_STREAMING], 0);
	/* and apart again */
	sim_run(&s, &far, 70ull * WINDOW);
	assert_int_equal(s.c.held, RING_COPY_STREAMING);
}

static void equal_modes_keep_cached(void **state)
{
	(void)state;
	struct sim s;
	sim_init(&s);
	sim_run(&s, &equal, 500ull * WINDOW);
	/* probed, since the cached copy is slow at the sender, but never
	 * taken: streaming is not an eighth faster */
	assert_int_equal(s.c.held, RING_COPY_CACHED);
	assert_true(s.bursts[RING_COPY_STREAMING] > 0);
	assert_true(s.bursts[RING_COPY_STREAMING] * 20 < s.bursts[RING_COPY_CACHED]);
}

/* An application that sends in bursts with long pauses between them: the
 * pauses count as GAP_MAX at most, so the far placement is still seen for
 * what it is. */
static void pauses_do_not_hide_the_placement(void **state)
{
	(void)state;
	struct sim s;
	sim_init(&s);
	for (unsigned i = 0; i < 20000; i++)
		sim_burst(&s, &far, i % 10 ? 0 : 50ull * WINDOW);
	assert_int_equal(s.c.held, RING_COPY_STREAMING);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(streaming_copy_is_a_copy),
		cmocka_unit_test(near_never_probes_streaming),
		cmocka_unit_test(far_switches_to_streaming),
		cmocka_unit_test(follows_the_placement),
		cmocka_unit_test(equal_modes_keep_cached),
		cmocka_unit_test(pauses_do_not_hide_the_placement),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
