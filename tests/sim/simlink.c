/* Discrete-event link simulator: a min-heap of packets in flight ordered by
 * (arrival time, send sequence), and the endpoints' timers.  What happens to
 * each packet is decided by impair/fate.h.  See simlink.h. */
#include "simlink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_packet {
	uint64_t arrival_ns;
	uint64_t seq;           /* tie-break: equal arrival times keep send order */
	enum simlink_side to;
	size_t len;
	unsigned char bytes[];
};

struct simlink {
	struct impair impair;
	struct simlink_ops ops;
	void *ctx;
	uint64_t now_ns;
	uint64_t next_seq;
	struct sim_packet **heap;
	size_t heap_len, heap_cap;
	unsigned timer_spins;    /* timer() calls without the clock moving */
	uint64_t last_timer_ns;
};

void simlink_config_default(struct simlink_config *cfg)
{
	impair_config_default(cfg);
}

int simlink_config_parse(struct simlink_config *cfg, const char *spec)
{
	return impair_config_parse(cfg, spec, NULL, 0);
}

struct simlink *simlink_create(const struct simlink_config *cfg,
                               const struct simlink_ops *ops, void *ctx)
{
	struct simlink *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	impair_init(&l->impair, cfg);
	l->ops = *ops;
	l->ctx = ctx;
	return l;
}

void simlink_destroy(struct simlink *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->heap_len; i++)
		free(l->heap[i]);
	free(l->heap);
	free(l);
}

static bool packet_earlier(const struct sim_packet *a, const struct sim_packet *b)
{
	return a->arrival_ns != b->arrival_ns ? a->arrival_ns < b->arrival_ns : a->seq < b->seq;
}

static void heap_push(struct simlink *l, struct sim_packet *p)
{
	size_t i;

	if (l->heap_len == l->heap_cap) {
		size_t cap = l->heap_cap ? 2 * l->heap_cap : 256;
		struct sim_packet **h = realloc(l->heap, cap * sizeof(*h));
		if (!h)
			abort(); /* a test harness: out of memory is fatal */
		l->heap = h;
		l->heap_cap = cap;
	}
	i = l->heap_len++;
	while (i > 0 && packet_earlier(p, l->heap[(i - 1) / 2])) {
		l->heap[i] = l->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	l->heap[i] = p;
}

static struct sim_packet *heap_pop(struct simlink *l)
{
	struct sim_packet *top = l->heap[0], *last = l->heap[--l->heap_len];
	size_t i = 0;

	for (;;) {
		size_t child = 2 * i + 1;
		if (child >= l->heap_len)
			break;
		if (child + 1 < l->heap_len && packet_earlier(l->heap[child + 1], l->heap[child]))
			child++;
		if (!packet_earlier(l->heap[child], last))
			break;
		l->heap[i] = l->heap[child];
		i = child;
	}
	if (l->heap_len)
		l->heap[i] = last;
	return top;
}

static void enqueue_copy(struct simlink *l, enum simlink_side from, const void *buf, size_t len,
                         const struct impair_copy *c)
{
	struct sim_packet *p = malloc(sizeof(*p) + len);

	if (!p)
		abort();
	memcpy(p->bytes, buf, len);
	for (unsigned i = 0; i < c->n_flips; i++)
		p->bytes[c->flips[i].offset] ^= c->flips[i].mask;
	p->len = len;
	p->to = from == SIMLINK_A ? SIMLINK_B : SIMLINK_A;
	p->seq = l->next_seq++;
	p->arrival_ns = c->release_ns;
	heap_push(l, p);
}

void simlink_send(struct simlink *l, enum simlink_side from, const void *buf, size_t len)
{
	struct impair_fate fate;

	/* The whole datagram is payload here: there are no lower headers. */
	impair_decide(&l->impair, (enum impair_dir)from, l->now_ns, len, len, &fate);
	for (unsigned i = 0; i < fate.n_copies; i++)
		enqueue_copy(l, from, buf, len, &fate.copy[i]);
}

uint64_t simlink_now(const struct simlink *l)
{
	return l->now_ns;
}

size_t simlink_in_flight(const struct simlink *l)
{
	return l->heap_len;
}

void simlink_stats(const struct simlink *l, enum simlink_side from, struct simlink_dir_stats *stats)
{
	*stats = l->impair.stats[from];
}

/* Endpoints whose timer never moves past "now" would spin forever in virtual
 * time; that is a bug in the endpoint, reported loudly. */
static void run_timer(struct simlink *l)
{
	if (l->last_timer_ns == l->now_ns) {
		if (++l->timer_spins > 10000) {
			fprintf(stderr, "simlink: endpoint timer stuck at %llu ns\n",
			        (unsigned long long)l->now_ns);
			abort();
		}
	} else {
		l->timer_spins = 0;
		l->last_timer_ns = l->now_ns;
	}
	l->ops.timer(l->ctx);
}

bool simlink_step(struct simlink *l, uint64_t until_ns)
{
	uint64_t t_pkt = l->heap_len ? l->heap[0]->arrival_ns : UINT64_MAX;
	uint64_t t_tmr = l->ops.next_timer ? l->ops.next_timer(l->ctx) : UINT64_MAX;
	uint64_t t = t_pkt < t_tmr ? t_pkt : t_tmr;

	if (t > until_ns) {
		if (until_ns > l->now_ns)
			l->now_ns = until_ns;
		return false;
	}
	if (t > l->now_ns)
		l->now_ns = t;
	if (t_pkt <= t_tmr) {
		struct sim_packet *p = heap_pop(l);
		enum simlink_side from = p->to == SIMLINK_A ? SIMLINK_B : SIMLINK_A;

		if (impair_release(&l->impair, (enum impair_dir)from, l->now_ns))
			l->ops.deliver(l->ctx, p->to, p->bytes, p->len);
		free(p);
	} else {
		run_timer(l);
	}
	return true;
}

bool simlink_run(struct simlink *l, uint64_t until_ns, bool (*done)(void *arg), void *arg)
{
	if (done && done(arg))
		return true;
	while (simlink_step(l, until_ns))
		if (done && done(arg))
			return true;
	return false;
}
