/* The SPEC parser: one table of keys, each with its parser and the words that
 * say what it allows, so every error names the key and its range. */
#include "spec.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define US 1000ull
#define MS 1000000ull
#define MAX_ITEM 128
/* Bounds that keep every product in range and every hold meaningful. */
#define MAX_DELAY_US 10000000ull     /* 10 s */
#define MAX_RATE_MBPS 1000000ull     /* 1 Tb/s */
#define MAX_PARTITION_MS 86400000ull /* a day */

static const char key_list[] = "loss, dup, reorder, corrupt, delay_us, jitter_us, "
                               "reorder_delay_us, rate_mbps, seed, partition_ms, stall_ms, udp_csum";

void impair_config_default(struct impair_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->seed = 1;
	cfg->udp_csum = IMPAIR_UDP_CSUM_FIX;
}

/* A fraction: decimal digits with an optional point and exponent (strtod's
 * hexadecimal, infinity and NaN forms are refused), from 0 to 1. */
static bool parse_fraction(const char *s, double *out)
{
	char *end;

	if (!((*s >= '0' && *s <= '9') || *s == '.') || strpbrk(s, "xX"))
		return false;
	*out = strtod(s, &end);
	return end != s && *end == '\0' && isfinite(*out) && *out >= 0 && *out <= 1;
}

/* A whole decimal number from 0 to max (no sign, no spaces). */
static bool parse_whole(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return *end == '\0' && errno == 0 && *out <= max;
}

/* Keys that set one field of both directions. */
static bool set_dir_fraction(struct impair_config *c, size_t field, const char *v)
{
	double f;

	if (!parse_fraction(v, &f))
		return false;
	for (int d = 0; d < 2; d++)
		*(double *)((char *)&c->dir[d] + field) = f;
	return true;
}

static bool set_dir_microseconds(struct impair_config *c, size_t field, const char *v)
{
	uint64_t us;

	if (!parse_whole(v, MAX_DELAY_US, &us))
		return false;
	for (int d = 0; d < 2; d++)
		*(uint64_t *)((char *)&c->dir[d] + field) = us * US;
	return true;
}

static bool set_rate(struct impair_config *c, size_t field, const char *v)
{
	uint64_t mbps;

	(void)field;
	if (!parse_whole(v, MAX_RATE_MBPS, &mbps))
		return false;
	c->dir[0].rate_bps = c->dir[1].rate_bps = mbps * 1000000ull;
	return true;
}

static bool set_seed(struct impair_config *c, size_t field, const char *v)
{
	(void)field;
	return parse_whole(v, UINT64_MAX, &c->seed);
}

/* LEN@AT in whole milliseconds, into a window [at, at + len) in ns. */
static bool parse_window(const char *v, uint64_t *at_ns, uint64_t *len_ns)
{
	char len_text[MAX_ITEM];
	const char *at = strchr(v, '@');
	uint64_t len_ms, at_ms;

	if (!at)
		return false;
	memcpy(len_text, v, (size_t)(at - v));
	len_text[at - v] = '\0';
	if (!parse_whole(len_text, MAX_PARTITION_MS, &len_ms) ||
	    !parse_whole(at + 1, MAX_PARTITION_MS, &at_ms))
		return false;
	*len_ns = len_ms * MS;
	*at_ns = at_ms * MS;
	return true;
}

static bool set_partition(struct impair_config *c, size_t field, const char *v)
{
	(void)field;
	return parse_window(v, &c->partition_at_ns, &c->partition_len_ns);
}

static bool set_stall(struct impair_config *c, size_t field, const char *v)
{
	(void)field;
	return parse_window(v, &c->stall_at_ns, &c->stall_len_ns);
}

static bool set_udp_csum(struct impair_config *c, size_t field, const char *v)
{
	(void)field;
	if (!strcmp(v, "fix"))
		c->udp_csum = IMPAIR_UDP_CSUM_FIX;
	else if (!strcmp(v, "keep"))
		c->udp_csum = IMPAIR_UDP_CSUM_KEEP;
	else
		return false;
	return true;
}

#define DIR_FIELD(name) offsetof(struct impair_dir_config, name)

static const struct spec_key {
	const char *name;
	bool (*set)(struct impair_config *cfg, size_t field, const char *value);
	size_t field;         /* for the per-direction setters */
	const char *allowed;  /* completes "KEY must be ..." */
} spec_keys[] = {
	{ "loss", set_dir_fraction, DIR_FIELD(loss),
	  "a fraction of packets from 0 to 1, e.g. loss=0.01" },
	{ "dup", set_dir_fraction, DIR_FIELD(dup),
	  "a fraction of packets from 0 to 1, e.g. dup=0.005" },
	{ "reorder", set_dir_fraction, DIR_FIELD(reorder),
	  "a fraction of packets from 0 to 1, e.g. reorder=0.01" },
	{ "corrupt", set_dir_fraction, DIR_FIELD(corrupt),
	  "a fraction of packets from 0 to 1, e.g. corrupt=0.001" },
	{ "delay_us", set_dir_microseconds, DIR_FIELD(delay_ns),
	  "whole microseconds from 0 to 10000000, e.g. delay_us=50" },
	{ "jitter_us", set_dir_microseconds, DIR_FIELD(jitter_ns),
	  "whole microseconds from 0 to 10000000, e.g. jitter_us=5" },
	{ "reorder_delay_us", set_dir_microseconds, DIR_FIELD(reorder_delay_ns),
	  "whole microseconds from 0 to 10000000 (0: twice the delay plus 10 us)" },
	{ "rate_mbps", set_rate, 0,
	  "whole Mb/s from 0 (unlimited) to 1000000, e.g. rate_mbps=1000" },
	{ "seed", set_seed, 0, "a whole number from 0 to 18446744073709551615, e.g. seed=1" },
	{ "partition_ms", set_partition, 0,
	  "LEN@AT in whole milliseconds (each up to 86400000): the link is cut for LEN ms "
	  "starting AT ms after the start, e.g. partition_ms=300@200" },
	{ "stall_ms", set_stall, 0,
	  "LEN@AT in whole milliseconds (each up to 86400000): packets due to arrive in the "
	  "LEN ms starting AT ms after the start arrive at its end, none lost, "
	  "e.g. stall_ms=5@200" },
	{ "udp_csum", set_udp_csum, 0, "fix or keep (what a forwarder does to the UDP checksum "
	  "of a datagram it corrupted)" },
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int parse_item(struct impair_config *cfg, const char *item, char *err, size_t errlen)
{
	const char *eq = strchr(item, '=');
	size_t key_len = eq ? (size_t)(eq - item) : strlen(item);

	if (!eq || key_len == 0)
		return fail(err, errlen, "SPEC item '%s' is not key=value (keys: %s)", item,
		            key_list);
	for (size_t i = 0; i < sizeof(spec_keys) / sizeof(spec_keys[0]); i++) {
		const struct spec_key *k = &spec_keys[i];

		if (strlen(k->name) != key_len || strncmp(k->name, item, key_len))
			continue;
		if (!k->set(cfg, k->field, eq + 1))
			return fail(err, errlen, "SPEC item '%s': %s must be %s", item, k->name,
			            k->allowed);
		return 0;
	}
	return fail(err, errlen, "SPEC item '%s': unknown key '%.*s' (keys: %s)", item,
	            (int)key_len, item, key_list);
}

int impair_config_parse(struct impair_config *cfg, const char *spec, char *err, size_t errlen)
{
	struct impair_config parsed = *cfg;
	const char *p = spec;

	if (*spec == '\0')
		return 0;
	for (;;) {
		size_t len = strcspn(p, ",");
		char item[MAX_ITEM];

		if (len == 0)
			return fail(err, errlen, "SPEC '%s' has an empty item (two commas in a row, "
			            "or a comma at an end)", spec);
		if (len >= sizeof(item))
			return fail(err, errlen, "SPEC item '%.40s...' is too long", p);
		memcpy(item, p, len);
		item[len] = '\0';
		if (parse_item(&parsed, item, err, errlen))
			return -1;
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	*cfg = parsed;
	return 0;
}
