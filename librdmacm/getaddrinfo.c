/* rdma_getaddrinfo and rdma_freeaddrinfo: IPv4 addresses through the C
 * library's resolver, described as a reliable-connected TCP-port-space
 * endpoint of a usiw device. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "cm_id.h"

static struct sockaddr *copy_sin(const struct sockaddr_in *sin)
{
	struct sockaddr_in *copy = malloc(sizeof(*copy));

	if (copy)
		*copy = *sin;
	return (struct sockaddr *)copy;
}

/* The usiw address a connection to peer would leave from (unset if there is
 * no usiw device): what rdma-core finds by resolving the route. */
static bool local_for(const struct sockaddr_in *peer, struct sockaddr_in *src)
{
	if (cm_init())
		return false;
	struct cm_device *dev = cm_device_for_peer(peer->sin_addr.s_addr);
	if (!dev)
		return false;
	memset(src, 0, sizeof(*src));
	src->sin_family = AF_INET;
	src->sin_addr.s_addr = dev->ipv4;
	return true;
}

static int lookup(const char *node, const char *service, int rai_flags,
		  struct sockaddr_in *out)
{
	struct addrinfo hints = {
		.ai_family = AF_INET,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = (rai_flags & RAI_PASSIVE ? AI_PASSIVE : 0) |
			    (rai_flags & RAI_NUMERICHOST ? AI_NUMERICHOST : 0),
	};
	struct addrinfo *ai;

	int rc = getaddrinfo(node, service, &hints, &ai);
	if (rc)
		return rc == EAI_SYSTEM ? errno : rc == EAI_MEMORY ? ENOMEM : EADDRNOTAVAIL;
	memcpy(out, ai->ai_addr, sizeof(*out));
	freeaddrinfo(ai);
	return 0;
}

static bool is_sin(const struct sockaddr *addr)
{
	return addr && addr->sa_family == AF_INET;
}

/* Without node and service, the addresses come from the hints (libfabric
 * asks this way): the destination if there is one, else the source. */
static int from_hints(const struct rdma_addrinfo *hints, struct sockaddr_in *addr,
		      bool *passive)
{
	if (!hints)
		return EINVAL;
	if (is_sin(hints->ai_dst_addr)) {
		memcpy(addr, hints->ai_dst_addr, sizeof(*addr));
		*passive = false;
		return 0;
	}
	if (is_sin(hints->ai_src_addr)) {
		memcpy(addr, hints->ai_src_addr, sizeof(*addr));
		*passive = true;
		return 0;
	}
	return hints->ai_dst_addr || hints->ai_src_addr ? EAFNOSUPPORT : EINVAL;
}

static int fill(struct rdma_addrinfo *rai, const char *node, const char *service,
		const struct rdma_addrinfo *hints)
{
	int flags = hints ? hints->ai_flags : 0;
	bool passive = flags & RAI_PASSIVE;
	struct sockaddr_in addr;

	rai->ai_flags = flags;
	rai->ai_family = AF_INET;
	rai->ai_qp_type = IBV_QPT_RC;
	rai->ai_port_space = RDMA_PS_TCP;
	int rc = node || service ? lookup(node, service, flags, &addr)
				 : from_hints(hints, &addr, &passive);
	if (rc)
		return rc;
	if (passive) {
		rai->ai_src_addr = copy_sin(&addr);
		rai->ai_src_len = sizeof(addr);
		return rai->ai_src_addr ? 0 : ENOMEM;
	}
	rai->ai_dst_addr = copy_sin(&addr);
	rai->ai_dst_len = sizeof(addr);
	if (!rai->ai_dst_addr)
		return ENOMEM;
	struct sockaddr_in src;
	if (hints && is_sin(hints->ai_src_addr))
		memcpy(&src, hints->ai_src_addr, sizeof(src));
	else if (!local_for(&addr, &src))
		return 0;
	rai->ai_src_addr = copy_sin(&src);
	rai->ai_src_len = sizeof(src);
	return rai->ai_src_addr ? 0 : ENOMEM;
}

/* Only what usiw connects: IPv4, RC, the TCP port space. */
static bool hints_supported(const struct rdma_addrinfo *hints)
{
	if (!hints)
		return true;
	return (hints->ai_family == AF_UNSPEC || hints->ai_family == AF_INET) &&
	       (hints->ai_qp_type == 0 || hints->ai_qp_type == IBV_QPT_RC) &&
	       (hints->ai_port_space == 0 || hints->ai_port_space == RDMA_PS_TCP);
}

int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res)
{
	if (!res)
		return cm_fail(EINVAL);
	if (!hints_supported(hints))
		return cm_fail(EAFNOSUPPORT);
	struct rdma_addrinfo *rai = calloc(1, sizeof(*rai));
	if (!rai)
		return cm_fail(ENOMEM);
	int rc = fill(rai, node, service, hints);
	if (rc) {
		rdma_freeaddrinfo(rai);
		return cm_fail(rc);
	}
	*res = rai;
	return 0;
}

void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *next = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = next;
	}
}
