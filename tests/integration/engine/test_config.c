/* The configuration parser, without EAL: good files give the right values
 * and defaults; every bad one is refused with a message that names the file
 * and the key (or line) at fault. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <cmocka.h>

#include "config.h"
#include "demux.h"
#include "port.h"

static char path[64];

static void write_conf(const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof(path), "/tmp/usiw-config-test-%d.conf", getpid());
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

#define MINIMAL "[port]\ndevice = net_memif0,role=server\nipv4 = 10.77.0.1/24\n"

static void test_minimal_gives_defaults(void **state)
{
	struct usiw_config c;
	char err[1024] = "";
	(void)state;
	write_conf(MINIMAL);
	assert_int_equal(usiw_config_parse(path, &c, err, sizeof(err)), 0);
	assert_string_equal(c.device, "net_memif0,role=server");
	assert_int_equal(c.ipv4, inet_addr("10.77.0.1"));
	assert_int_equal(c.prefix_len, 24);
	assert_false(c.mac_set);
	assert_int_equal(c.mtu, 1500);
	assert_int_equal(c.rx_ring, 1024);
	assert_int_equal(c.queues, 1);
	assert_int_equal(c.progress, USIW_PROGRESS_INLINE);
	assert_string_equal(c.eal_args, "--no-pci --in-memory");
	assert_true(c.gratuitous_arp);
	assert_int_equal(c.crc, USIW_CRC_AUTO);
	assert_false(usiw_config_trp_crc(&c)); /* memif: no wire */
}

/* A jumbo MTU shrinks the default pool to about the bytes of MTU 9000's;
 * [port] mbufs, when given, is kept as it is. */
static void test_jumbo_mtu_mbufs(void **state)
{
	static const struct {
		const char *keys;
		uint16_t mtu;
		uint32_t mbufs;
	} cases[] = {
		{ "mtu = 9000\n", 9000, 8191 },
		{ "mtu = 9001\n", 9001, 4095 },
		{ "mtu = 32000\n", 32000, 2047 },
		{ "mtu = 65000\n", 65000, 1023 },
		{ "mtu = 65000\nmbufs = 4095\n", 65000, 4095 },
	};
	struct usiw_config c;
	char err[512];
	char text[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), MINIMAL "%s", cases[i].keys);
		write_conf(text);
		assert_int_equal(usiw_config_parse(path, &c, err, sizeof(err)), 0);
		assert_int_equal(c.mtu, cases[i].mtu);
		assert_int_equal(c.mbufs, cases[i].mbufs);
	}
}

static void test_every_key(void **state)
{
	struct usiw_config c;
	char err[1024] = "";
	(void)state;
	write_conf("# a comment\n"
		   "[eal]\n"
		   "args = --no-pci --no-huge -m 256 --file-prefix a   # trailing comment\n"
		   "[port]\n"
		   "device = net_af_packet0,iface=veth0,blocksz=8192,framesz=8192,qpairs=2\n"
		   "ipv4 = 192.168.5.7/16\n"
		   "mac = 02:00:00:00:00:2a\n"
		   "mtu = 4000\n"
		   "rx-ring = 512\n"
		   "tx-ring = 2048\n"
		   "queues = 2\n"
		   "mbufs = 16383\n"
		   "link-timeout = 0\n"
		   "arp-interval-ms = 50\n"
		   "arp-retries = 3\n"
		   "gratuitous-arp = no\n"
		   "crc = no\n"
		   "\n"
		   "[engine]\n"
		   "progress = thread\n"
		   "lcore = 1\n"
		   "idle-sleep-us = 0\n");
	assert_int_equal(usiw_config_parse(path, &c, err, sizeof(err)), 0);
	assert_string_equal(c.eal_args, "--no-pci --no-huge -m 256 --file-prefix a");
	assert_int_equal(c.prefix_len, 16);
	assert_true(c.mac_set);
	assert_int_equal(c.mac[5], 0x2a);
	assert_int_equal(c.mtu, 4000);
	assert_int_equal(c.rx_ring, 512);
	assert_int_equal(c.tx_ring, 2048);
	assert_int_equal(c.queues, 2);
	assert_int_equal(c.mbufs, 16383);
	assert_int_equal(c.link_timeout_s, 0);
	assert_int_equal(c.arp_interval_ms, 50);
	assert_int_equal(c.arp_retries, 3);
	assert_false(c.gratuitous_arp);
	assert_false(usiw_config_trp_crc(&c));
	assert_int_equal(c.progress, USIW_PROGRESS_THREAD);
	assert_int_equal(c.lcore, 1);
	assert_int_equal(c.idle_sleep_us, 0);
}

/* Each bad file must be refused with -EINVAL and a message that contains
 * the file name and every one of the expected fragments. */
static void expect_error(const char *text, const char *frag1, const char *frag2)
{
	struct usiw_config c;
	char err[1024] = "";
	write_conf(text);
	assert_int_equal(usiw_config_parse(path, &c, err, sizeof(err)), -EINVAL);
	if (!strstr(err, path) || !strstr(err, frag1) || (frag2 && !strstr(err, frag2)))
		fail_msg("message '%s' lacks '%s' / '%s' / '%s'", err, path, frag1,
			 frag2 ? frag2 : "");
}

/* auto: on except over memif; yes and no whatever the device. */
static void test_crc(void **state)
{
	static const struct {
		const char *device, *crc;
		bool on;
	} cases[] = {
		{ "net_memif0,role=server", "auto", false },
		{ "net_memif0,role=server", "yes", true },
		{ "net_af_packet0,iface=v0", "auto", true },
		{ "net_af_packet0,iface=v0", "no", false },
		{ "0000:00:04.0", "auto", true },
	};
	char text[256], err[1024] = "";
	struct usiw_config c;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "[port]\ndevice = %s\nipv4 = 10.77.0.1/24\ncrc = %s\n",
			 cases[i].device, cases[i].crc);
		write_conf(text);
		assert_int_equal(usiw_config_parse(path, &c, err, sizeof(err)), 0);
		assert_int_equal(usiw_config_trp_crc(&c), cases[i].on);
	}
}

static void test_bad_values(void **state)
{
	(void)state;
	expect_error(MINIMAL "mtu = 65001\n", "mtu", "576 to 65000");
	expect_error(MINIMAL "mtu = 100\n", "mtu", "576 to 65000");
	expect_error(MINIMAL "mtu = 1500x\n", "mtu", "576 to 65000");
	expect_error(MINIMAL "rx-ring = 1000\n", "rx-ring", "power of two");
	expect_error(MINIMAL "tx-ring = 32\n", "tx-ring", "power of two");
	expect_error(MINIMAL "queues = 0\n", "queues", "1 to 16");
	expect_error(MINIMAL "mbufs = 10\n", "mbufs", "1023");
	expect_error(MINIMAL "mac = 01:00:5e:00:00:01\n", "mac", "unicast");
	expect_error(MINIMAL "mac = zz\n", "mac", NULL);
	expect_error(MINIMAL "link-timeout = -1\n", "link-timeout", "0 to 600");
	expect_error(MINIMAL "arp-retries = 0\n", "arp-retries", NULL);
	expect_error(MINIMAL "arp-interval-ms = 0\n", "arp-interval-ms", NULL);
	expect_error(MINIMAL "gratuitous-arp = maybe\n", "gratuitous-arp", "yes or no");
	expect_error(MINIMAL "crc = sometimes\n", "crc", "auto, yes or no");
	expect_error("[port]\ndevice = net_memif0\nipv4 = 10.77.0.1\n", "ipv4", "prefix");
	expect_error("[port]\ndevice = net_memif0\nipv4 = 10.77.0.300/24\n", "ipv4", NULL);
	expect_error("[port]\ndevice = net_memif0\nipv4 = 10.77.0.1/33\n", "ipv4", NULL);
	expect_error("[port]\ndevice = net_memif0\nipv4 = 224.0.0.1/24\n", "ipv4", NULL);
	expect_error("[port]\ndevice = net memif0\nipv4 = 10.0.0.1/24\n", "device", "spaces");
	expect_error(MINIMAL "[engine]\nprogress = busy\n", "progress", "inline or thread");
	expect_error(MINIMAL "[engine]\nprogress = thread\nlcore = 0\n", "lcore", NULL);
	expect_error(MINIMAL "[engine]\nidle-sleep-us = 1000000\n", "idle-sleep-us", NULL);
	expect_error(MINIMAL "[engine]\nlcore = 1\n", "lcore", "progress = thread");
}

static void test_bad_structure(void **state)
{
	(void)state;
	expect_error(MINIMAL "colour = blue\n", "unknown key 'colour'", "mtu");
	expect_error(MINIMAL "[eal]\nargz = -l 0\n", "unknown key 'argz'", "args");
	expect_error(MINIMAL "[ports]\nmtu = 1500\n", "unknown section [ports]", NULL);
	expect_error(MINIMAL "mtu = 1500\nmtu = 9000\n", "'mtu' given twice", NULL);
	expect_error("[port]\nipv4 = 10.77.0.1/24\n", "[port] device is required", NULL);
	expect_error("[port]\ndevice = net_memif0\n", "[port] ipv4 is required", NULL);
	expect_error("mtu = 1500\n" MINIMAL, ":1:", "before any [section]");
	expect_error(MINIMAL "just words\n", ":4:", "key = value");
	expect_error(MINIMAL "mtu =\n", ":4:", "without a value");
	expect_error(MINIMAL "[port\n", ":4:", "[name]");
	char big[600];
	snprintf(big, sizeof(big), "[eal]\nargs = %0300d\n" MINIMAL, 0);
	expect_error(big, ":2:", "longer than 255");
}

static void test_missing_file(void **state)
{
	struct usiw_config c;
	char err[1024] = "";
	(void)state;
	assert_int_equal(usiw_config_parse("/nonexistent/usiw.conf", &c, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/usiw.conf"));
	assert_non_null(strstr(err, "No such file"));
}

static void test_config_path(void **state)
{
	char err[512] = "";
	(void)state;
	setenv("USIW_CONFIG", "/some/where.conf", 1);
	assert_string_equal(usiw_config_path(err, sizeof(err)), "/some/where.conf");
	unsetenv("USIW_CONFIG");
	if (access(USIW_CONFIG_DEFAULT_PATH, F_OK) != 0) {
		assert_null(usiw_config_path(err, sizeof(err)));
		assert_non_null(strstr(err, "USIW_CONFIG"));
		assert_non_null(strstr(err, USIW_CONFIG_DEFAULT_PATH));
	}
}

static void test_memif_args(void **state)
{
	struct usiw_memif_args a;
	(void)state;
	usiw_memif_args_parse("net_memif0,role=server,socket=/tmp/x.sock,socket-abstract=no", &a);
	assert_true(a.is_memif);
	assert_false(a.bad_args);
	assert_true(a.server);
	assert_false(a.abstract);
	assert_string_equal(a.socket, "/tmp/x.sock");
	usiw_memif_args_parse("net_memif3", &a);
	assert_true(a.is_memif);
	assert_false(a.server);      /* memif's default role is client */
	assert_true(a.abstract);
	usiw_memif_args_parse("net_memif0,role=client,socket-abstrakt=no", &a);
	assert_true(a.bad_args);     /* memif would silently ignore every argument */
	usiw_memif_args_parse("net_af_packet0,iface=veth0", &a);
	assert_false(a.is_memif);
}

static void test_flow_rule(void **state)
{
	struct usiw_demux_rule r;
	(void)state;
	usiw_demux_rule_build(&r, inet_addr("10.77.0.1"), 7471, 3);
	assert_int_equal(r.attr.ingress, 1);
	assert_int_equal(r.pattern[0].type, RTE_FLOW_ITEM_TYPE_ETH);
	assert_int_equal(r.pattern[1].type, RTE_FLOW_ITEM_TYPE_IPV4);
	assert_int_equal(r.ipv4_spec.hdr.dst_addr, inet_addr("10.77.0.1"));
	assert_int_equal(r.ipv4_mask.hdr.dst_addr, 0xffffffffu);
	assert_int_equal(r.pattern[2].type, RTE_FLOW_ITEM_TYPE_UDP);
	assert_int_equal(r.udp_spec.hdr.dst_port, htons(7471));
	assert_int_equal(r.udp_mask.hdr.dst_port, 0xffff);
	assert_ptr_equal(r.pattern[2].spec, &r.udp_spec);
	assert_int_equal(r.pattern[3].type, RTE_FLOW_ITEM_TYPE_END);
	assert_int_equal(r.actions[0].type, RTE_FLOW_ACTION_TYPE_QUEUE);
	assert_int_equal(((const struct rte_flow_action_queue *)r.actions[0].conf)->index, 3);
	assert_int_equal(r.actions[1].type, RTE_FLOW_ACTION_TYPE_END);
	assert_null(r.flow);
}

/* With arguments: each must be a valid configuration file (the examples in
 * config/ are checked this way). */
static int check_files(int argc, char **argv)
{
	int bad = 0;
	for (int i = 1; i < argc; i++) {
		struct usiw_config c;
		char err[1024];
		if (usiw_config_parse(argv[i], &c, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s\n", err);
			bad = 1;
		} else {
			printf("ok %s\n", argv[i]);
		}
	}
	return bad;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return check_files(argc, argv);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_minimal_gives_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jumbo_mtu_mbufs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_structure, setup, teardown),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_config_path),
		cmocka_unit_test(test_memif_args),
		cmocka_unit_test(test_flow_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
