/* The sender's copy into a memif ring: the chooser between cached and
 * streaming stores, and the streaming copy (libusiw/ring_copy.h). */
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ring_copy.h"

/* A probe that keeps the choice doubles the held windows before the next,
 * up to this many: a wrong mode then costs at most one window in 65 (under
 * 2% of a run, where it moves a third of the bytes), and with the port's
 * 2 ms windows a placement that changes is noticed within 130 ms. */
#define PROBE_INTERVAL_MAX 64u
/* Cached windows between two timings of a streaming piece: its cost moves
 * with the placement too, but a stale figure only delays a probe. */
#define SAMPLE_INTERVAL 64u

void ring_copy_chooser_init(struct ring_copy_chooser *c, uint64_t window, uint64_t gap_max)
{
	*c = (struct ring_copy_chooser){
		.window = window,
		.gap_max = gap_max,
		.held = RING_COPY_CACHED,
		.used = RING_COPY_CACHED,
		.interval = 1,
		.until_probe = 1,
	};
}

static enum ring_copy_mode other(enum ring_copy_mode m)
{
	return m == RING_COPY_CACHED ? RING_COPY_STREAMING : RING_COPY_CACHED;
}

void ring_copy_account(struct ring_copy_chooser *c, uint64_t now, uint64_t bytes, uint64_t copying)
{
	/* Only the time between bulk bursts counts, and a long gap as gap_max:
	 * an application that pauses does not make the mode in use look slow. */
	if (c->last) {
		const uint64_t gap = now - c->last;
		c->busy += gap < c->gap_max ? gap : c->gap_max;
	}
	c->last = now;
	c->bytes += bytes;
	c->copying += copying;
	if (c->busy < c->window || !c->bytes)
		return;

	const uint64_t rate = (c->bytes << 16) / c->busy;
	const uint64_t cost = (c->copying << 16) / c->bytes;
	c->busy = c->bytes = c->copying = 0;
	if (c->used == RING_COPY_STREAMING)
		c->streaming_cost = cost;
	else if (c->until_sample)
		c->until_sample--;
	if (c->used == c->held) {
		c->held_rate = rate;
		if (--c->until_probe)
			return;
		if (c->held == RING_COPY_CACHED && (!c->streaming_cost || cost <= 2 * c->streaming_cost))
			c->until_probe = 1;   /* streaming cannot be faster: look again next window */
		else
			c->used = other(c->held);
		return;
	}
	/* A probe ended.  The other mode must be clearly faster (by an
	 * eighth) to take over, so that measurement noise between two equal
	 * modes keeps the cached copy, which leaves the bytes where the
	 * receiver reads them first. */
	if (rate > c->held_rate + c->held_rate / 8) {
		c->held = c->used;
		c->held_rate = rate;
		c->interval = 1;
	} else {
		c->used = c->held;
		if (c->interval < PROBE_INTERVAL_MAX)
			c->interval *= 2;
	}
	c->until_probe = c->interval;
}

void ring_copy_sampled(struct ring_copy_chooser *c, uint64_t cycles, uint64_t bytes)
{
	if (bytes)
		c->streaming_cost = (cycles << 16) / bytes;
	c->until_sample = SAMPLE_INTERVAL;
}

/* Hand-written: neither DPDK 22.11 nor libc has a copy with non-temporal
 * stores that a caller can choose per call (glibc picks them by size alone,
 * process-wide, from a tunable). */
void ring_copy_streaming(void *dst, const void *src, size_t len)
{
#ifdef __SSE2__
	uint8_t *d = dst;
	const uint8_t *s = src;
	const size_t head = (size_t)(-(uintptr_t)d & 15);   /* to a 16-byte boundary */

	if (len < head + 64) {
		memcpy(d, s, len);
		return;
	}
	memcpy(d, s, head);
	d += head;
	s += head;
	len -= head;
	for (; len >= 64; len -= 64, d += 64, s += 64) {
		const __m128i a = _mm_loadu_si128((const __m128i *)s);
		const __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
		const __m128i e = _mm_loadu_si128((const __m128i *)(s + 32));
		const __m128i f = _mm_loadu_si128((const __m128i *)(s + 48));
		_mm_stream_si128((__m128i *)d, a);
		_mm_stream_si128((__m128i *)(d + 16), b);
		_mm_stream_si128((__m128i *)(d + 32), e);
		_mm_stream_si128((__m128i *)(d + 48), f);
	}
	memcpy(d, s, len);
	_mm_sfence();
#else
	memcpy(dst, src, len);
#endif
}
