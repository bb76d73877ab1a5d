/* Discrete-event link simulator: a min-heap of packets in flight ordered by
 * (arrival time, send sequence), and the endpoints' timers.  See simlink.h. */
#define _POSIX_C_SOURCE 200809L
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
	struct simlink_config cfg;
	struct simlink_ops ops;
	void *ctx;
	uint64_t now_ns;
	uint64_t rng;
	uint64_t next_seq;
	uint64_t busy_until[2];  /* rate limit: when each direction's wire frees */
	struct sim_packet **heap;
	size_t heap_len, heap_cap;
	struct simlink_dir_stats stats[2];
	unsigned timer_spins;    /* timer() calls without the clock moving */
	uint64_t last_timer_ns;
};

/* splitmix64: tiny, fast, good enough statistically for fault injection, and
 * -- unlike rand() -- identical on every libc and private to this link, so a
 * seed reproduces a run exactly. */
static uint64_t rng_next(struct simlink *l)
{
	uint64_t z = (l->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double rng_unit(struct simlink *l)
{
	return (double)(rng_next(l) >> 11) * (1.0 / 9007199254740992.0);
}

static bool rng_chance(struct simlink *l, double p)
{
	return p > 0 && rng_unit(l) < p;
}

static uint64_t rng_below(struct simlink *l, uint64_t n)
{
	return n ? rng_next(l) % n : 0;
}

void simlink_config_default(struct simlink_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->seed = 1;
}

static int parse_double(const char *s, double *out)
{
	char *end;

	*out = strtod(s, &end);
	return end != s && *end == '\0' ? 0 : -1;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	*out = strtoull(s, &end, 10);
	return *end == '\0' ? 0 : -1;
}

static int parse_fraction(const char *s, double *a, double *b)
{
	double v;

	if (parse_double(s, &v) || v < 0 || v > 1)
		return -1;
	*a = *b = v;
	return 0;
}

static int parse_us(const char *s, uint64_t *a, uint64_t *b)
{
	uint64_t v;

	if (parse_u64(s, &v))
		return -1;
	*a = *b = v * 1000;
	return 0;
}

static int parse_item(struct simlink_config *cfg, const char *key, const char *val)
{
	struct simlink_dir_config *ab = &cfg->dir[SIMLINK_A], *ba = &cfg->dir[SIMLINK_B];

	if (!strcmp(key, "loss"))
		return parse_fraction(val, &ab->loss, &ba->loss);
	if (!strcmp(key, "dup"))
		return parse_fraction(val, &ab->dup, &ba->dup);
	if (!strcmp(key, "reorder"))
		return parse_fraction(val, &ab->reorder, &ba->reorder);
	if (!strcmp(key, "corrupt"))
		return parse_fraction(val, &ab->corrupt, &ba->corrupt);
	if (!strcmp(key, "delay_us"))
		return parse_us(val, &ab->delay_ns, &ba->delay_ns);
	if (!strcmp(key, "jitter_us"))
		return parse_us(val, &ab->jitter_ns, &ba->jitter_ns);
	if (!strcmp(key, "reorder_delay_us"))
		return parse_us(val, &ab->reorder_delay_ns, &ba->reorder_delay_ns);
	if (!strcmp(key, "rate_mbps")) {
		uint64_t v;
		if (parse_u64(val, &v))
			return -1;
		ab->rate_bps = ba->rate_bps = v * 1000000;
		return 0;
	}
	if (!strcmp(key, "seed"))
		return parse_u64(val, &cfg->seed);
	if (!strcmp(key, "partition_ms")) {
		char len_text[32];
		const char *at = strchr(val, '@');
		uint64_t len_ms, at_ms;

		if (!at || (size_t)(at - val) >= sizeof(len_text))
			return -1;
		memcpy(len_text, val, (size_t)(at - val));
		len_text[at - val] = '\0';
		if (parse_u64(len_text, &len_ms) || parse_u64(at + 1, &at_ms))
			return -1;
		cfg->partition_len_ns = len_ms * 1000000;
		cfg->partition_at_ns = at_ms * 1000000;
		return 0;
	}
	return -1;
}

int simlink_config_parse(struct simlink_config *cfg, const char *spec)
{
	char *copy = strdup(spec), *save = NULL;
	int rc = 0;

	if (!copy)
		return -1;
	for (char *item = strtok_r(copy, ",", &save); item && !rc;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');

		if (!eq) {
			rc = -1;
			break;
		}
		*eq = '\0';
		rc = parse_item(cfg, item, eq + 1);
	}
	free(copy);
	return rc;
}

struct simlink *simlink_create(const struct simlink_config *cfg,
                               const struct simlink_ops *ops, void *ctx)
{
	struct simlink *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->cfg = *cfg;
	l->ops = *ops;
	l->ctx = ctx;
	l->rng = cfg->seed;
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

static bool partitioned(const struct simlink *l, uint64_t t)
{
	return l->cfg.partition_len_ns &&
	       t >= l->cfg.partition_at_ns && t - l->cfg.partition_at_ns < l->cfg.partition_len_ns;
}

static void enqueue_copy(struct simlink *l, enum simlink_side from, const void *buf,
                         size_t len, uint64_t depart_ns)
{
	const struct simlink_dir_config *d = &l->cfg.dir[from];
	struct simlink_dir_stats *st = &l->stats[from];
	struct sim_packet *p = malloc(sizeof(*p) + len);

	if (!p)
		abort();
	memcpy(p->bytes, buf, len);
	p->len = len;
	p->to = from == SIMLINK_A ? SIMLINK_B : SIMLINK_A;
	p->seq = l->next_seq++;
	p->arrival_ns = depart_ns + d->delay_ns + rng_below(l, d->jitter_ns + 1);
	if (rng_chance(l, d->reorder)) {
		uint64_t hold = d->reorder_delay_ns ? d->reorder_delay_ns : 2 * d->delay_ns + 10000;
		p->arrival_ns += 1 + rng_below(l, hold);
		st->reordered++;
	}
	if (len && rng_chance(l, d->corrupt)) {
		unsigned flips = 1 + (unsigned)rng_below(l, 3);
		for (unsigned i = 0; i < flips; i++)
			p->bytes[rng_below(l, len)] ^= (unsigned char)(1u << rng_below(l, 8));
		st->corrupted++;
	}
	heap_push(l, p);
}

void simlink_send(struct simlink *l, enum simlink_side from, const void *buf, size_t len)
{
	const struct simlink_dir_config *d = &l->cfg.dir[from];
	struct simlink_dir_stats *st = &l->stats[from];
	uint64_t depart = l->now_ns;

	st->sent++;
	if (d->rate_bps) {
		if (l->busy_until[from] > depart)
			depart = l->busy_until[from];
		depart += (uint64_t)len * 8 * 1000000000ull / d->rate_bps;
		l->busy_until[from] = depart;
	}
	if (partitioned(l, l->now_ns)) {
		st->partitioned++;
		return;
	}
	if (rng_chance(l, d->loss)) {
		st->lost++;
		return;
	}
	enqueue_copy(l, from, buf, len, depart);
	if (rng_chance(l, d->dup)) {
		enqueue_copy(l, from, buf, len, depart);
		st->duplicated++;
	}
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
	*stats = l->stats[from];
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

		if (partitioned(l, l->now_ns)) {
			l->stats[from].partitioned++;
		} else {
			l->stats[from].delivered++;
			l->ops.deliver(l->ctx, p->to, p->bytes, p->len);
		}
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
