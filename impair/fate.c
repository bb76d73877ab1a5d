/* Per-packet decisions; see fate.h for the order of draws. */
#include "fate.h"

#include <string.h>

/* splitmix64: tiny, fast, good enough statistically for fault injection, and
 * -- unlike rand() -- identical on every libc and private to this link, so a
 * seed reproduces a run exactly. */
static uint64_t rng_next(struct impair *imp)
{
	uint64_t z = (imp->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1): the top 53 bits, scaled by 2^-53. */
static double rng_unit(struct impair *imp)
{
	return (double)(rng_next(imp) >> 11) * (1.0 / 9007199254740992.0);
}

/* A rate of 0 draws nothing, so adding a key to a SPEC that was 0 before
 * leaves the other decisions' sequence alone. */
static bool rng_chance(struct impair *imp, double p)
{
	return p > 0 && rng_unit(imp) < p;
}

static uint64_t rng_below(struct impair *imp, uint64_t n)
{
	return n ? rng_next(imp) % n : 0;
}

void impair_init(struct impair *imp, const struct impair_config *cfg)
{
	memset(imp, 0, sizeof(*imp));
	imp->cfg = *cfg;
	imp->rng = cfg->seed;
}

bool impair_partitioned(const struct impair_config *cfg, uint64_t t_ns)
{
	return cfg->partition_len_ns && t_ns >= cfg->partition_at_ns &&
	       t_ns - cfg->partition_at_ns < cfg->partition_len_ns;
}

static void decide_copy(struct impair *imp, enum impair_dir dir, uint64_t depart_ns,
                        size_t payload_len, struct impair_copy *c)
{
	const struct impair_dir_config *d = &imp->cfg.dir[dir];
	struct impair_dir_stats *st = &imp->stats[dir];

	memset(c, 0, sizeof(*c));
	c->release_ns = depart_ns + d->delay_ns + rng_below(imp, d->jitter_ns + 1);
	if (rng_chance(imp, d->reorder)) {
		uint64_t hold = d->reorder_delay_ns ? d->reorder_delay_ns : 2 * d->delay_ns + 10000;

		c->release_ns += 1 + rng_below(imp, hold);
		c->reordered = true;
		st->reordered++;
	}
	if (payload_len && rng_chance(imp, d->corrupt)) {
		c->n_flips = 1 + (unsigned)rng_below(imp, IMPAIR_MAX_FLIPS);
		for (unsigned i = 0; i < c->n_flips; i++) {
			c->flips[i].offset = (size_t)rng_below(imp, payload_len);
			c->flips[i].mask = (uint8_t)(1u << rng_below(imp, 8));
		}
		st->corrupted++;
	}
}

/* A copy due while the link stalls arrives when the stall ends. */
static void apply_stall(const struct impair_config *cfg, struct impair_copy *c)
{
	if (cfg->stall_len_ns && c->release_ns >= cfg->stall_at_ns &&
	    c->release_ns - cfg->stall_at_ns < cfg->stall_len_ns)
		c->release_ns = cfg->stall_at_ns + cfg->stall_len_ns;
}

void impair_decide(struct impair *imp, enum impair_dir dir, uint64_t now_ns, size_t wire_len,
                   size_t payload_len, struct impair_fate *fate)
{
	const struct impair_dir_config *d = &imp->cfg.dir[dir];
	struct impair_dir_stats *st = &imp->stats[dir];
	uint64_t depart_ns = now_ns;

	fate->n_copies = 0;
	st->sent++;
	/* The sender serializes the packet whatever becomes of it. */
	if (d->rate_bps) {
		if (imp->busy_until_ns[dir] > depart_ns)
			depart_ns = imp->busy_until_ns[dir];
		depart_ns += (uint64_t)wire_len * 8 * 1000000000ull / d->rate_bps;
		imp->busy_until_ns[dir] = depart_ns;
	}
	if (impair_partitioned(&imp->cfg, now_ns)) {
		fate->verdict = IMPAIR_PARTITIONED;
		st->partitioned++;
		return;
	}
	if (rng_chance(imp, d->loss)) {
		fate->verdict = IMPAIR_LOST;
		st->lost++;
		return;
	}
	fate->verdict = IMPAIR_PASS;
	decide_copy(imp, dir, depart_ns, payload_len, &fate->copy[fate->n_copies++]);
	if (rng_chance(imp, d->dup)) {
		decide_copy(imp, dir, depart_ns, payload_len, &fate->copy[fate->n_copies++]);
		st->duplicated++;
	}
	for (unsigned i = 0; i < fate->n_copies; i++)
		apply_stall(&imp->cfg, &fate->copy[i]);
}

bool impair_release(struct impair *imp, enum impair_dir dir, uint64_t now_ns)
{
	if (impair_partitioned(&imp->cfg, now_ns)) {
		imp->stats[dir].partitioned++;
		return false;
	}
	imp->stats[dir].delivered++;
	return true;
}
