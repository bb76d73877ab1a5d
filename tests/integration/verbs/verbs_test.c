/* An ordinary libibverbs program, run with libusiw.so preloaded (as
 * tools/usiw-run does) and a usiw configuration in USIW_CONFIG: usiw0 must be
 * listed, open, and behave as the libibverbs man pages say. */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "../check.h"

/* Fails with errno == expected. */
#define CHECK_FAILS(call, expected)                                            \
	do {                                                                   \
		errno = 0;                                                     \
		if (call) {                                                    \
			fprintf(stderr, "%s:%d: FAILED: %s succeeded\n",       \
				__FILE__, __LINE__, #call);                    \
			failures++;                                            \
		} else if (errno != (expected)) {                              \
			fprintf(stderr, "%s:%d: FAILED: %s: errno %d, not %d\n", \
				__FILE__, __LINE__, #call, errno, expected);   \
			failures++;                                            \
		}                                                              \
	} while (0)

/* What the calls made between stderr_capture and stderr_captured wrote to
 * stderr; the test then checks that a refusal says why. */
static char captured[1024];
static int saved_stderr = -1;
static FILE *capture_file;

static void stderr_capture(void)
{
	fflush(stderr);
	capture_file = tmpfile();
	saved_stderr = dup(STDERR_FILENO);
	if (capture_file && saved_stderr >= 0)
		dup2(fileno(capture_file), STDERR_FILENO);
}

static const char *stderr_captured(void)
{
	size_t n = 0;

	fflush(stderr);
	if (saved_stderr >= 0) {
		dup2(saved_stderr, STDERR_FILENO);
		close(saved_stderr);
	}
	if (capture_file) {
		rewind(capture_file);
		n = fread(captured, 1, sizeof(captured) - 1, capture_file);
		fclose(capture_file);
	}
	captured[n] = '\0';
	return captured;
}

/* ibv_create_qp fails with errno == expected and says so on stderr with
 * these words. */
#define CHECK_CREATE_QP_REFUSED(pd, attr, expected, words)                      \
	do {                                                                   \
		stderr_capture();                                              \
		CHECK_FAILS(ibv_create_qp(pd, attr), expected);                \
		const char *said = stderr_captured();                          \
		if (!strstr(said, words)) {                                    \
			fprintf(stderr, "%s:%d: FAILED: ibv_create_qp said "   \
				"\"%s\", not \"%s\"\n", __FILE__, __LINE__,     \
				said, words);                                  \
			failures++;                                            \
		}                                                              \
	} while (0)

static struct ibv_device *find_usiw0(struct ibv_device **list, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "usiw0"))
			return list[i];
	return NULL;
}

static void check_device_attributes(struct ibv_context *ctx, uint64_t *guid)
{
	struct ibv_device_attr attr;
	struct ibv_device_attr_ex attr_ex;

	CHECK(ibv_query_device(ctx, &attr) == 0);
	CHECK(attr.phys_port_cnt == 1);
	CHECK(attr.max_qp > 0 && attr.max_qp_wr > 0 && attr.max_sge > 0);
	CHECK(attr.max_cq > 0 && attr.max_cqe > 0 && attr.max_mr > 0);
	CHECK(attr.max_pd > 0 && attr.max_mr_size > 0);
	CHECK(attr.max_qp_rd_atom > 0 && attr.max_qp_init_rd_atom > 0);
	CHECK(attr.max_pkeys == 1);
	CHECK(strlen(attr.fw_ver) > 0);
	CHECK(attr.node_guid != 0);
	/* ibv_get_device_guid agrees once the device is open. */
	CHECK(ibv_get_device_guid(ctx->device) == attr.node_guid);
	*guid = be64toh(attr.node_guid);

	CHECK(ibv_query_device_ex(ctx, NULL, &attr_ex) == 0);
	CHECK(!memcmp(&attr_ex.orig_attr, &attr, sizeof(attr)));
	struct ibv_query_device_ex_input bad_input = { .comp_mask = 1 };
	CHECK(ibv_query_device_ex(ctx, &bad_input, &attr_ex) == EINVAL);
}

static void check_port(struct ibv_context *ctx)
{
	struct ibv_port_attr port;

	CHECK(ibv_query_port(ctx, 1, &port) == 0);
	/* A memif server with no peer yet: the link is down. */
	CHECK(port.state == IBV_PORT_ACTIVE || port.state == IBV_PORT_DOWN);
	CHECK(port.link_layer == IBV_LINK_LAYER_ETHERNET);
	CHECK(port.active_mtu >= IBV_MTU_256 && port.active_mtu <= IBV_MTU_4096);
	CHECK(port.gid_tbl_len == 2);
	CHECK(port.pkey_tbl_len == 1);
	CHECK(port.active_width != 0 && port.active_speed != 0);
	CHECK(ibv_query_port(ctx, 2, &port) == EINVAL);
	CHECK(ibv_query_port(ctx, 0, &port) == EINVAL);
}

static void check_gids_and_pkeys(struct ibv_context *ctx, uint64_t guid)
{
	union ibv_gid gid;
	uint8_t mac[6];

	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)(guid >> (56 - 8 * i));

	/* GID 1: the MAC, as iWARP devices have. */
	CHECK(ibv_query_gid(ctx, 1, 1, &gid) == 0);
	CHECK(!memcmp(gid.raw, mac, 6));
	for (int i = 6; i < 16; i++)
		CHECK(gid.raw[i] == 0);

	/* GID 0: ::ffff:<the configured IPv4>, what RoCE-style apps exchange. */
	CHECK(ibv_query_gid(ctx, 1, 0, &gid) == 0);
	for (int i = 0; i < 10; i++)
		CHECK(gid.raw[i] == 0);
	CHECK(gid.raw[10] == 0xff && gid.raw[11] == 0xff);
	const char *want_ip = getenv("USIW_TEST_IPV4");
	if (want_ip) {
		struct in_addr ip;
		CHECK(inet_pton(AF_INET, want_ip, &ip) == 1);
		CHECK(!memcmp(&gid.raw[12], &ip, 4));
	}

	CHECK(ibv_query_gid(ctx, 1, 2, &gid) == -1 && errno == EINVAL);
	CHECK(ibv_query_gid(ctx, 2, 0, &gid) == -1 && errno == EINVAL);

	struct ibv_gid_entry entry, table[4];
	CHECK(ibv_query_gid_ex(ctx, 1, 0, &entry, 0) == 0);
	CHECK(entry.gid_index == 0 && entry.port_num == 1);
	CHECK(!memcmp(&entry.gid, &gid, sizeof(gid)));
	CHECK(ibv_query_gid_ex(ctx, 1, 5, &entry, 0) == EINVAL);
	CHECK(ibv_query_gid_table(ctx, table, 4, 0) == 2);
	CHECK(table[0].gid_index == 0 && !memcmp(&table[0].gid, &gid, sizeof(gid)));
	CHECK(ibv_query_gid_table(ctx, table, 1, 0) == -EINVAL);

	__be16 pkey;
	CHECK(ibv_query_pkey(ctx, 1, 0, &pkey) == 0);
	CHECK(pkey == htons(0xffff));
	CHECK(ibv_query_pkey(ctx, 1, 1, &pkey) == -1 && errno == EINVAL);
	CHECK(ibv_get_pkey_index(ctx, 1, htons(0xffff)) == 0);
	CHECK(ibv_get_pkey_index(ctx, 1, htons(0x8001)) < 0);
}

static int compare_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

#define MANY_MRS 1000

static void check_pd_and_mr(struct ibv_context *ctx)
{
	static char buf[4096];
	static struct ibv_mr *mrs[MANY_MRS];
	static uint32_t stags[MANY_MRS];
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ;

	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	if (!pd)
		return;

	/* The same buffer twice: two regions, two unrelated STags. */
	struct ibv_mr *a = ibv_reg_mr(pd, buf, sizeof(buf), rw);
	struct ibv_mr *b = ibv_reg_mr(pd, buf, sizeof(buf), rw);
	CHECK(a && b);
	if (a && b) {
		CHECK(a->rkey != b->rkey);
		CHECK(a->lkey == a->rkey);
		CHECK(a->addr == buf && a->length == sizeof(buf) && a->pd == pd);
		ibv_dereg_mr(a);
		ibv_dereg_mr(b);
	}

	/* Many registrations of one range: all distinct, and no pattern: not
	 * sorted, not evenly spaced, and every one of the 32 bits takes
	 * both values (by chance all are set or all clear in 1000 random
	 * STags with probability 2^-999). */
	int registered = 0;
	for (int i = 0; i < MANY_MRS; i++) {
		mrs[i] = ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE);
		if (!mrs[i])
			break;
		stags[i] = mrs[i]->rkey;
		registered++;
	}
	CHECK(registered == MANY_MRS);
	uint32_t all_or = 0, all_and = UINT32_MAX;
	int ascending = 0, same_step = 0;
	for (int i = 0; i < registered; i++) {
		all_or |= stags[i];
		all_and &= stags[i];
		if (i > 0 && stags[i] > stags[i - 1])
			ascending++;
		if (i > 1 && stags[i] - stags[i - 1] == stags[i - 1] - stags[i - 2])
			same_step++;
	}
	CHECK(all_or == UINT32_MAX && all_and == 0);
	CHECK(ascending < registered * 3 / 4 && ascending > registered / 4);
	CHECK(same_step < 5);
	qsort(stags, (size_t)registered, sizeof(stags[0]), compare_u32);
	for (int i = 1; i < registered; i++)
		CHECK(stags[i] != stags[i - 1]);
	for (int i = 0; i < registered; i++)
		CHECK(ibv_dereg_mr(mrs[i]) == 0);

	/* ibv_reg_mr(3): remote write or atomic needs local write. */
	CHECK_FAILS(ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE),
		    EINVAL);
	CHECK_FAILS(ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_ATOMIC),
		    EINVAL);
	CHECK_FAILS(ibv_reg_mr(pd, buf, sizeof(buf),
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED),
		    EINVAL);
	/* Remote read alone is fine. */
	struct ibv_mr *ro = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_READ);
	CHECK(ro);

	/* ibv_dealloc_pd(3): a PD with an MR in it is busy, and errno says
	 * so (it returns "the value of errno"; perftest prints strerror(errno),
	 * which named a stale EBADF before). */
	errno = EBADF;
	CHECK(ibv_dealloc_pd(pd) == EBUSY);
	CHECK(errno == EBUSY);
	if (ro)
		CHECK(ibv_dereg_mr(ro) == 0);
	CHECK(ibv_dealloc_pd(pd) == 0);
}

static void check_cq(struct ibv_context *ctx)
{
	struct ibv_device_attr attr;
	struct ibv_wc wc[4];

	CHECK(ibv_query_device(ctx, &attr) == 0);
	struct ibv_comp_channel *channel = ibv_create_comp_channel(ctx);
	CHECK(channel);
	if (!channel)
		return;
	CHECK(channel->fd >= 0);

	CHECK_FAILS(ibv_create_cq(ctx, 0, NULL, channel, 0), EINVAL);
	CHECK_FAILS(ibv_create_cq(ctx, attr.max_cqe + 1, NULL, channel, 0), EINVAL);
	CHECK_FAILS(ibv_create_cq(ctx, 16, NULL, channel, ctx->num_comp_vectors),
		    EINVAL);

	int cookie;
	struct ibv_cq *cq = ibv_create_cq(ctx, 100, &cookie, channel, 0);
	CHECK(cq);
	if (!cq)
		return;
	CHECK(cq->cqe >= 100);
	CHECK(cq->channel == channel && cq->cq_context == &cookie);
	CHECK(ibv_poll_cq(cq, 4, wc) == 0);
	CHECK(ibv_req_notify_cq(cq, 0) == 0);
	CHECK(ibv_req_notify_cq(cq, 1) == 0);

	/* Nothing completed: the channel has nothing to read. */
	struct pollfd pfd = { .fd = channel->fd, .events = POLLIN };
	CHECK(poll(&pfd, 1, 0) == 0);

	/* ibv_destroy_comp_channel(3): busy while a CQ uses it. */
	CHECK(ibv_destroy_comp_channel(channel) == EBUSY);
	CHECK(ibv_destroy_cq(cq) == 0);
	CHECK(ibv_destroy_comp_channel(channel) == 0);

	/* A CQ without a channel is fine too. */
	cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	CHECK(cq);
	if (cq) {
		CHECK(ibv_poll_cq(cq, 1, wc) == 0);
		CHECK(ibv_destroy_cq(cq) == 0);
	}
}

/* QP caps: above the device's limits they are refused, naming the cap and
 * the limit; at the limits the QP is made; the inline room is at least what
 * the send SGEs take. */
static void check_qp_caps_limits(struct ibv_context *ctx)
{
	struct ibv_device_attr dev;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	CHECK(pd && cq && ibv_query_device(ctx, &dev) == 0);
	if (!pd || !cq)
		return;
	const struct ibv_qp_init_attr ok = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_init_attr attr = ok;
	char words[128];

	attr.cap.max_send_wr = (uint32_t)dev.max_qp_wr + 1;
	snprintf(words, sizeof(words), "max_send_wr %u is above usiw0's limit of %d",
		 attr.cap.max_send_wr, dev.max_qp_wr);
	CHECK_CREATE_QP_REFUSED(pd, &attr, EINVAL, words);
	attr = ok;
	attr.cap.max_recv_sge = (uint32_t)dev.max_sge + 1;
	snprintf(words, sizeof(words), "max_recv_sge %u is above usiw0's limit of %d",
		 attr.cap.max_recv_sge, dev.max_sge);
	CHECK_CREATE_QP_REFUSED(pd, &attr, EINVAL, words);
	/* Inline room is at least what the SGEs take, asked for or not. */
	attr = ok;
	struct ibv_qp *small = ibv_create_qp(pd, &attr);
	CHECK(small && attr.cap.max_inline_data == sizeof(struct ibv_sge));
	if (small)
		CHECK(ibv_destroy_qp(small) == 0);
	/* At the limits the QP is made. */
	attr = ok;
	attr.cap.max_send_wr = attr.cap.max_recv_wr = (uint32_t)dev.max_qp_wr;
	attr.cap.max_send_sge = attr.cap.max_recv_sge = (uint32_t)dev.max_sge;
	struct ibv_qp *qp = ibv_create_qp(pd, &attr);
	CHECK(qp);
	if (qp)
		CHECK(ibv_destroy_qp(qp) == 0);
	CHECK(ibv_destroy_cq(cq) == 0);
	CHECK(ibv_dealloc_pd(pd) == 0);
}

/* What is not implemented says so cleanly. */
static void check_unsupported(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	CHECK(pd && cq);
	if (!pd || !cq)
		return;
	/* RC only: iWARP has neither UD nor UC. */
	struct ibv_qp_init_attr qp_attr = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_ah_attr ah_attr = { .port_num = 1 };
	CHECK_CREATE_QP_REFUSED(pd, &qp_attr, EOPNOTSUPP, "QP type UD (4) is not supported");
	qp_attr.qp_type = IBV_QPT_UC;
	CHECK_CREATE_QP_REFUSED(pd, &qp_attr, EOPNOTSUPP, "QP type UC (3) is not supported");
	CHECK_FAILS(ibv_create_ah(pd, &ah_attr), EOPNOTSUPP);
	CHECK_FAILS(ibv_alloc_mw(pd, IBV_MW_TYPE_1), EOPNOTSUPP);
	CHECK(ibv_destroy_cq(cq) == 0);
	CHECK(ibv_dealloc_pd(pd) == 0);
}

int main(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);

	CHECK(list && n >= 1);
	if (!list)
		return 1;
	struct ibv_device *dev = find_usiw0(list, n);
	CHECK(dev);
	if (!dev) {
		ibv_free_device_list(list);
		return 1;
	}
	CHECK(dev->transport_type == IBV_TRANSPORT_IWARP);
	CHECK(dev->node_type == IBV_NODE_RNIC);

	struct ibv_context *ctx = ibv_open_device(dev);
	CHECK(ctx);
	if (ctx) {
		uint64_t guid = 0;
		check_device_attributes(ctx, &guid);
		check_port(ctx);
		check_gids_and_pkeys(ctx, guid);
		check_pd_and_mr(ctx);
		check_cq(ctx);
		check_unsupported(ctx);
		check_qp_caps_limits(ctx);
		CHECK(ibv_close_device(ctx) == 0);
	}
	ibv_free_device_list(list);

	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("usiw0 behaves\n");
	return 0;
}
