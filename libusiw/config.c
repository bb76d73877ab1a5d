/* Configuration file parsing with rte_cfgfile.  Only parsing and checking
 * happen here; nothing is applied, so no EAL is needed. */
#define _GNU_SOURCE
#include "config.h"
#include "memif_port.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cfgfile.h>
#include <rte_ether.h>

#define COMMENT_CHAR '#'
#define DEFAULT_MBUFS 8191u
#define MBUFS_MIN 1023u

void usiw_config_defaults(struct usiw_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->eal_args, sizeof(cfg->eal_args), "--no-pci --in-memory");
	cfg->mtu = 1500;
	cfg->rx_ring = 1024;
	cfg->tx_ring = 1024;
	cfg->queues = 1;
	cfg->mbufs = DEFAULT_MBUFS;
	cfg->link_timeout_s = 10;
	cfg->arp_interval_ms = 100;
	cfg->arp_retries = 20;
	cfg->gratuitous_arp = true;
	cfg->progress = USIW_PROGRESS_INLINE;
	cfg->lcore = -1;
	cfg->idle_sleep_us = 50;
	cfg->idle_spin_us = 200;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end != '\0' || v < min || v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool parse_bool(const char *s, bool *out)
{
	if (!strcmp(s, "yes") || !strcmp(s, "true") || !strcmp(s, "on") || !strcmp(s, "1")) {
		*out = true;
		return true;
	}
	if (!strcmp(s, "no") || !strcmp(s, "false") || !strcmp(s, "off") || !strcmp(s, "0")) {
		*out = false;
		return true;
	}
	return false;
}

static bool parse_ipv4_prefix(const char *s, uint32_t *ip, uint8_t *len)
{
	char addr[INET_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	uint32_t l;
	struct in_addr in;

	if (!slash || (size_t)(slash - s) >= sizeof(addr))
		return false;
	memcpy(addr, s, slash - s);
	addr[slash - s] = '\0';
	if (inet_pton(AF_INET, addr, &in) != 1 || !parse_u32(slash + 1, 1, 32, &l))
		return false;
	if (in.s_addr == 0 || in.s_addr == INADDR_BROADCAST || IN_MULTICAST(ntohl(in.s_addr)))
		return false;
	*ip = in.s_addr;
	*len = (uint8_t)l;
	return true;
}

struct key_ctx {
	struct usiw_config *cfg;
	const char *value;
};

/* Each key's parser: returns NULL when the value is good, else what is
 * allowed (for the message). */
typedef const char *(*key_parser)(struct key_ctx *k);

static const char *p_eal_args(struct key_ctx *k)
{
	snprintf(k->cfg->eal_args, sizeof(k->cfg->eal_args), "%s", k->value);
	return NULL;
}

static const char *p_device(struct key_ctx *k)
{
	if (strchr(k->value, ' ') || strchr(k->value, '\t'))
		return "af_packet:IF, or DPDK devargs without spaces, e.g. af_packet:veth0 or "
		       "net_memif0,role=server,socket=/tmp/usiw.sock or a PCI address 0000:01:00.0";
	snprintf(k->cfg->device, sizeof(k->cfg->device), "%s", k->value);
	return NULL;
}

static const char *p_ipv4(struct key_ctx *k)
{
	if (!parse_ipv4_prefix(k->value, &k->cfg->ipv4, &k->cfg->prefix_len))
		return "a unicast IPv4 address with a prefix length, e.g. 10.77.0.1/24";
	return NULL;
}

static const char *p_mac(struct key_ctx *k)
{
	struct rte_ether_addr ea;
	if (rte_ether_unformat_addr(k->value, &ea) != 0 || !rte_is_valid_assigned_ether_addr(&ea))
		return "a unicast, non-zero MAC address, e.g. 02:00:00:00:00:01";
	memcpy(k->cfg->mac, ea.addr_bytes, 6);
	k->cfg->mac_set = true;
	return NULL;
}

static const char *p_mtu(struct key_ctx *k)
{
	uint32_t v;
	if (!parse_u32(k->value, 576, USIW_MTU_MAX, &v))
		return "an integer from 576 to " RTE_STR(USIW_MTU_MAX) " (the IP MTU in bytes)";
	k->cfg->mtu = (uint16_t)v;
	return NULL;
}

static const char *ring_size(struct key_ctx *k, uint16_t *out)
{
	uint32_t v;
	if (!parse_u32(k->value, 64, 16384, &v) || (v & (v - 1)))
		return "a power of two from 64 to 16384";
	*out = (uint16_t)v;
	return NULL;
}

static const char *p_rx_ring(struct key_ctx *k) { return ring_size(k, &k->cfg->rx_ring); }
static const char *p_tx_ring(struct key_ctx *k) { return ring_size(k, &k->cfg->tx_ring); }

static const char *p_queues(struct key_ctx *k)
{
	uint32_t v;
	if (!parse_u32(k->value, 1, 16, &v))
		return "an integer from 1 to 16";
	k->cfg->queues = (uint16_t)v;
	return NULL;
}

static const char *p_mbufs(struct key_ctx *k)
{
	if (!parse_u32(k->value, MBUFS_MIN, 1048575, &k->cfg->mbufs))
		return "an integer from 1023 to 1048575 (best: a power of two minus one)";
	return NULL;
}

static const char *p_link_timeout(struct key_ctx *k)
{
	if (!parse_u32(k->value, 0, 600, &k->cfg->link_timeout_s))
		return "an integer from 0 to 600 (seconds; 0 = do not wait)";
	return NULL;
}

static const char *p_arp_interval(struct key_ctx *k)
{
	if (!parse_u32(k->value, 1, 10000, &k->cfg->arp_interval_ms))
		return "an integer from 1 to 10000 (milliseconds)";
	return NULL;
}

static const char *p_arp_retries(struct key_ctx *k)
{
	if (!parse_u32(k->value, 1, 1000, &k->cfg->arp_retries))
		return "an integer from 1 to 1000";
	return NULL;
}

static const char *p_garp(struct key_ctx *k)
{
	if (!parse_bool(k->value, &k->cfg->gratuitous_arp))
		return "yes or no";
	return NULL;
}

static const char *p_crc(struct key_ctx *k)
{
	bool on;

	if (!strcmp(k->value, "auto")) {
		k->cfg->crc = USIW_CRC_AUTO;
		return NULL;
	}
	if (!parse_bool(k->value, &on))
		return "auto, yes or no";
	k->cfg->crc = on ? USIW_CRC_ON : USIW_CRC_OFF;
	return NULL;
}

/* memif's frames are copied between the memory of two processes of this
 * machine and cross no wire: TRP's CRC there would only check that memcpy
 * copied, and cost a pass over every byte on both sides (ib_write_bw
 * 64 KiB over memif: 8.1-9.5 GB/s with it, 13.5-13.7 without). */
bool usiw_config_trp_crc(const struct usiw_config *cfg)
{
	if (cfg->crc == USIW_CRC_AUTO)
		return strncmp(cfg->device, "net_memif", strlen("net_memif")) != 0 &&
		       !usiw_memif_port_named(cfg->device);
	return cfg->crc == USIW_CRC_ON;
}

static const char *p_progress(struct key_ctx *k)
{
	if (!strcmp(k->value, "inline"))
		k->cfg->progress = USIW_PROGRESS_INLINE;
	else if (!strcmp(k->value, "thread"))
		k->cfg->progress = USIW_PROGRESS_THREAD;
	else
		return "inline or thread";
	return NULL;
}

static const char *p_lcore(struct key_ctx *k)
{
	uint32_t v;
	if (!strcmp(k->value, "auto")) {
		k->cfg->lcore = -1;
		return NULL;
	}
	if (!parse_u32(k->value, 1, 1023, &v))
		return "auto, or an EAL worker lcore id from 1 to 1023 (listed in [eal] args -l)";
	k->cfg->lcore = (int)v;
	return NULL;
}

static const char *p_idle_sleep(struct key_ctx *k)
{
	if (!parse_u32(k->value, 0, 100000, &k->cfg->idle_sleep_us))
		return "an integer from 0 to 100000 (microseconds; 0 = always spin)";
	return NULL;
}

static const char *p_idle_spin(struct key_ctx *k)
{
	if (!parse_u32(k->value, 0, 1000000, &k->cfg->idle_spin_us))
		return "an integer from 0 to 1000000 (microseconds; 0 = never spin)";
	return NULL;
}

struct key_def {
	const char *section;
	const char *name;
	key_parser parse;
	bool required;
};

static const struct key_def keys[] = {
	{ "eal", "args", p_eal_args, false },
	{ "port", "device", p_device, true },
	{ "port", "ipv4", p_ipv4, true },
	{ "port", "mac", p_mac, false },
	{ "port", "mtu", p_mtu, false },
	{ "port", "rx-ring", p_rx_ring, false },
	{ "port", "tx-ring", p_tx_ring, false },
	{ "port", "queues", p_queues, false },
	{ "port", "mbufs", p_mbufs, false },
	{ "port", "link-timeout", p_link_timeout, false },
	{ "port", "arp-interval-ms", p_arp_interval, false },
	{ "port", "arp-retries", p_arp_retries, false },
	{ "port", "gratuitous-arp", p_garp, false },
	{ "port", "crc", p_crc, false },
	{ "engine", "progress", p_progress, false },
	{ "engine", "lcore", p_lcore, false },
	{ "engine", "idle-sleep-us", p_idle_sleep, false },
	{ "engine", "idle-spin-us", p_idle_spin, false },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static size_t key_index(const char *section, const char *name)
{
	size_t k;
	for (k = 0; k < NKEYS; k++)
		if (!strcmp(keys[k].section, section) && !strcmp(keys[k].name, name))
			break;
	return k;
}

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* rte_cfgfile reports a syntax error only as a NULL return and silently
 * truncates values longer than CFG_VALUE_LEN; this pass over the lines finds
 * the line to name in the message (and a too-long value, e.g. EAL args). */
static int check_lines(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned lineno = 0;
	bool in_section = false;
	int rc = 0;

	if (!f) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot open the usiw configuration file: %s", path,
			 strerror(e));
		return e == ENOENT ? -ENOENT : -EINVAL;
	}
	while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		char *hash = strchr(line, COMMENT_CHAR);
		if (hash)
			*hash = '\0';
		char *end = line + strlen(line);
		while (end > line && isspace((unsigned char)end[-1]))
			*--end = '\0';
		const char *s = skip_space(line);
		if (*s == '\0')
			continue;
		if (*s == '[') {
			if (end[-1] != ']' || end - s < 3)
				rc = fail(err, errlen, "%s:%u: a section header must be [name]", path,
					  lineno);
			in_section = true;
			continue;
		}
		const char *eq = strchr(s, '=');
		if (!eq || eq == s) {
			rc = fail(err, errlen, "%s:%u: expected 'key = value', '[section]' or a "
				  "'%c' comment", path, lineno, COMMENT_CHAR);
		} else if (!in_section) {
			rc = fail(err, errlen, "%s:%u: 'key = value' before any [section]", path,
				  lineno);
		} else if (*skip_space(eq + 1) == '\0') {
			rc = fail(err, errlen, "%s:%u: key without a value", path, lineno);
		} else if (strlen(skip_space(eq + 1)) >= USIW_CONFIG_VALUE_MAX) {
			rc = fail(err, errlen, "%s:%u: value longer than %d characters", path,
				  lineno, USIW_CONFIG_VALUE_MAX - 1);
		}
	}
	free(line);
	fclose(f);
	return rc;
}

static int parse_section(struct rte_cfgfile *file, const char *path, const char *section,
			 struct usiw_config *cfg, bool *seen, char *err, size_t errlen)
{
	int n = rte_cfgfile_section_num_entries(file, section);
	if (n < 0)
		return fail(err, errlen, "%s: cannot read section [%s]", path, section);
	struct rte_cfgfile_entry *entries = calloc(n ? n : 1, sizeof(*entries));
	if (!entries)
		return -ENOMEM;
	n = rte_cfgfile_section_entries(file, section, entries, n);
	int rc = 0;
	for (int i = 0; rc == 0 && i < n; i++) {
		size_t k = key_index(section, entries[i].name);
		if (k == NKEYS) {
			char known[512] = "";
			for (size_t j = 0; j < NKEYS; j++)
				if (!strcmp(keys[j].section, section)) {
					strncat(known, known[0] ? ", " : "", sizeof(known) - strlen(known) - 1);
					strncat(known, keys[j].name, sizeof(known) - strlen(known) - 1);
				}
			rc = fail(err, errlen, "%s: [%s] unknown key '%s' (keys of [%s]: %s)", path,
				  section, entries[i].name, section, known);
			break;
		}
		if (seen[k]) {
			rc = fail(err, errlen, "%s: [%s] key '%s' given twice", path, section,
				  entries[i].name);
			break;
		}
		seen[k] = true;
		struct key_ctx ctx = { cfg, entries[i].value };
		const char *allowed = keys[k].parse(&ctx);
		if (allowed)
			rc = fail(err, errlen, "%s: [%s] %s = '%s' is not allowed: expected %s", path,
				  section, entries[i].name, entries[i].value, allowed);
	}
	free(entries);
	return rc;
}

/* The default pool: 8191 mbufs up to MTU 9000 (75 MB of frames, room for
 * what usiw-pair's EAL -m 256 holds besides), halved while a larger MTU
 * would make the pool larger than that, down to the least [port] mbufs
 * accepts. */
static uint32_t default_mbufs(uint16_t mtu)
{
	uint32_t n = DEFAULT_MBUFS;
	while (n > MBUFS_MIN && (uint64_t)n * mtu > (uint64_t)DEFAULT_MBUFS * 9000u)
		n /= 2;
	return n;
}

int usiw_config_parse(const char *path, struct usiw_config *cfg, char *err, size_t errlen)
{
	static const char *const sections[] = { "eal", "port", "engine" };
	bool seen[NKEYS] = { false };
	int rc;

	usiw_config_defaults(cfg);
	snprintf(cfg->path, sizeof(cfg->path), "%s", path);
	rc = check_lines(path, err, errlen);
	if (rc)
		return rc;

	struct rte_cfgfile_parameters params = { .comment_character = COMMENT_CHAR };
	struct rte_cfgfile *file = rte_cfgfile_load_with_params(path, 0, &params);
	if (!file)
		return fail(err, errlen, "%s: not a valid configuration file", path);

	int nsec = rte_cfgfile_num_sections(file, NULL, 0);
	char **names = calloc(nsec ? nsec : 1, sizeof(*names));
	char *buf = calloc(nsec ? nsec : 1, CFG_NAME_LEN);
	if (!names || !buf) {
		rc = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < nsec; i++)
		names[i] = buf + (size_t)i * CFG_NAME_LEN;
	rte_cfgfile_sections(file, names, nsec);
	for (int i = 0; rc == 0 && i < nsec; i++) {
		size_t s;
		for (s = 0; s < sizeof(sections) / sizeof(sections[0]); s++)
			if (!strcmp(names[i], sections[s]))
				break;
		if (s == sizeof(sections) / sizeof(sections[0])) {
			rc = fail(err, errlen, "%s: unknown section [%s] (sections: [eal], [port], "
				  "[engine])", path, names[i]);
			break;
		}
		for (int j = 0; j < i; j++)
			if (!strcmp(names[i], names[j]))
				rc = fail(err, errlen, "%s: section [%s] given twice", path, names[i]);
		if (rc == 0)
			rc = parse_section(file, path, names[i], cfg, seen, err, errlen);
	}
	for (size_t k = 0; rc == 0 && k < NKEYS; k++)
		if (keys[k].required && !seen[k])
			rc = fail(err, errlen, "%s: [%s] %s is required", path, keys[k].section,
				  keys[k].name);
	if (rc == 0 && !seen[key_index("port", "mbufs")])
		cfg->mbufs = default_mbufs(cfg->mtu);
	if (rc == 0 && seen[key_index("engine", "lcore")] && cfg->progress != USIW_PROGRESS_THREAD)
		rc = fail(err, errlen, "%s: [engine] lcore is only meaningful with progress = thread",
			  path);
out:
	free(buf);
	free(names);
	rte_cfgfile_close(file);
	return rc;
}

const char *usiw_config_path(char *err, size_t errlen)
{
	const char *env = getenv(USIW_CONFIG_ENV);
	if (env && *env)
		return env;
	if (access(USIW_CONFIG_DEFAULT_PATH, F_OK) == 0)
		return USIW_CONFIG_DEFAULT_PATH;
	snprintf(err, errlen, "no usiw configuration: set USIW_CONFIG to a configuration file "
		 "(examples in config/*.conf) or create " USIW_CONFIG_DEFAULT_PATH);
	return NULL;
}
