/* rdma_bind_addr, rdma_resolve_addr, rdma_resolve_route. */
#include "addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "channel.h"
#include "cm_id.h"
#include "listen.h"
#include "progress.h"

/* rdma_resolve_addr's timeout when the application gives 0. */
#define DEFAULT_RESOLVE_MS 2000

int cm_addr_ipv4(const struct sockaddr *addr, uint32_t *ipv4, uint16_t *port)
{
	if (!addr || addr->sa_family != AF_INET)
		return EAFNOSUPPORT;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;
	*ipv4 = sin->sin_addr.s_addr;
	*port = ntohs(sin->sin_port);
	return 0;
}

/* 127.0.0.0/8.  Binding there takes the first device, as the kernel's CM
 * does (fabtests' servers bind to "localhost"), and unlike the kernel's
 * reports that device's address as the id's: the application passes it to
 * its peer (fi_getname), which must be able to reach it.  Resolving it
 * means this host's own device. */
static bool is_loopback(uint32_t ipv4)
{
	return (ntohl(ipv4) >> 24) == 127;
}

void cm_addr_set(struct sockaddr_in *sin, uint32_t ipv4, uint16_t port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = ipv4;
	sin->sin_port = htons(port);
}

/* Opens the id's port on its device (port 0: any free one) and records it
 * as the id's source port.  0 or an errno. */
static int open_port(struct cm_id *id, uint16_t port)
{
	struct usiw_udp_endpoint *ep;
	int rc = cm_usiw->udp_open(id->dev->engine, port, cm_listener_rx, id, &ep);

	if (rc)
		return -rc;
	id->ep = ep;
	id->id.route.addr.src_sin.sin_port = htons(cm_usiw->udp_port(ep));
	return 0;
}

/* Binding reserves the port at once, as binding a kernel id does: a second
 * id on the same port fails here with EADDRINUSE, and rdma_get_src_port
 * tells a port-0 binding its number. */
static int bind_locked(struct cm_id *id, uint32_t ipv4, uint16_t port)
{
	if (id->state != CM_IDLE)
		return EINVAL;
	struct cm_device *dev = cm_device_by_ipv4(is_loopback(ipv4) ? htonl(INADDR_ANY) : ipv4);
	if (!dev)
		return EADDRNOTAVAIL;
	id->dev = dev;
	int rc = open_port(id, port);
	if (rc) {
		id->dev = NULL;
		return rc;
	}
	cm_addr_set(&id->id.route.addr.src_sin, is_loopback(ipv4) ? dev->ipv4 : ipv4,
		cm_usiw->udp_port(id->ep));
	/* A wildcard binding names no device (as with rdma-core); an address
	 * names the one that has it. */
	if (ipv4 != htonl(INADDR_ANY))
		id->id.verbs = dev->verbs;
	id->state = CM_BOUND;
	return 0;
}

int rdma_bind_addr(struct rdma_cm_id *rid, struct sockaddr *addr)
{
	uint32_t ipv4;
	uint16_t port;

	if (!rid)
		return cm_fail(EINVAL);
	int rc = cm_addr_ipv4(addr, &ipv4, &port);
	if (rc)
		return cm_fail(rc);
	cm_lock();
	rc = bind_locked(cm_id_of(rid), ipv4, port);
	cm_unlock();
	return rc ? cm_fail(rc) : 0;
}

static void resolved(struct cm_id *id, int status)
{
	if (status) {
		id->state = id->ep ? CM_BOUND : CM_IDLE;
		cm_event_raise(id, RDMA_CM_EVENT_ADDR_ERROR, status, NULL);
		return;
	}
	id->state = CM_ADDR_RESOLVED;
	cm_event_raise(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL);
}

/* The engine sends ARP requests on its own schedule; each poll only asks
 * whether the answer came. */
void cm_addr_poll(struct cm_id *id, uint64_t now_ns)
{
	uint32_t peer = id->id.route.addr.dst_sin.sin_addr.s_addr;
	int rc = cm_usiw->resolve(id->dev->verbs, peer);

	if (rc == 0)
		resolved(id, 0);
	else if (rc == -ENETUNREACH)
		resolved(id, -ENETUNREACH);
	else if (now_ns >= id->resolve_deadline_ns)
		resolved(id, -ETIMEDOUT);
}

static int resolve_locked(struct cm_id *id, struct sockaddr *src, uint32_t peer,
			  uint16_t peer_port, int timeout_ms)
{
	if (id->state == CM_IDLE) {
		uint32_t src_ip = htonl(INADDR_ANY);
		uint16_t src_port = 0;
		if (src) {
			int rc = cm_addr_ipv4(src, &src_ip, &src_port);
			if (rc)
				return rc;
		}
		struct cm_device *dev =
			src_ip == htonl(INADDR_ANY) ? cm_device_for_peer(peer)
						    : cm_device_by_ipv4(src_ip);
		if (!dev)
			return EADDRNOTAVAIL;
		id->dev = dev;
		/* An active id needs no port of its own: its QP sends from
		 * the QP's port, which is the source port the peer sees. */
		cm_addr_set(&id->id.route.addr.src_sin, dev->ipv4, src_port);
	} else if (id->state == CM_BOUND) {
		if (id->id.route.addr.src_sin.sin_addr.s_addr == htonl(INADDR_ANY))
			id->id.route.addr.src_sin.sin_addr.s_addr = id->dev->ipv4;
	} else if (id->state != CM_ADDR_RESOLVED && id->state != CM_ROUTE_RESOLVED) {
		return EINVAL;
	}
	id->id.verbs = id->dev->verbs;
	cm_addr_set(&id->id.route.addr.dst_sin, peer, peer_port);
	id->resolve_deadline_ns =
		cm_now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : DEFAULT_RESOLVE_MS) * 1000000u;
	id->state = CM_ADDR_QUERY;
	cm_addr_poll(id, cm_now_ns());
	cm_progress_kick();
	return 0;
}

int rdma_resolve_addr(struct rdma_cm_id *rid, struct sockaddr *src_addr,
		      struct sockaddr *dst_addr, int timeout_ms)
{
	uint32_t peer;
	uint16_t peer_port;

	if (!rid)
		return cm_fail(EINVAL);
	int rc = cm_addr_ipv4(dst_addr, &peer, &peer_port);
	if (rc)
		return cm_fail(rc);
	if (peer == htonl(INADDR_ANY))
		return cm_fail(EINVAL);
	struct cm_id *id = cm_id_of(rid);
	cm_lock();
	if (is_loopback(peer)) {
		struct cm_device *own = id->dev ? id->dev : cm_device_by_ipv4(htonl(INADDR_ANY));
		if (own)
			peer = own->ipv4;
	}
	rc = resolve_locked(id, src_addr, peer, peer_port, timeout_ms);
	cm_unlock();
	if (rc)
		return cm_fail(rc);
	return id->sync ? cm_id_wait_sync(id, RDMA_CM_EVENT_ADDR_RESOLVED) : 0;
}

/* One Ethernet segment, no routers: the route is the address. */
int rdma_resolve_route(struct rdma_cm_id *rid, int timeout_ms)
{
	(void)timeout_ms;
	if (!rid)
		return cm_fail(EINVAL);
	struct cm_id *id = cm_id_of(rid);
	cm_lock();
	int rc = id->state == CM_ADDR_RESOLVED ? 0 : EINVAL;
	if (!rc) {
		id->state = CM_ROUTE_RESOLVED;
		cm_event_raise(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL);
	}
	cm_unlock();
	if (rc)
		return cm_fail(rc);
	return id->sync ? cm_id_wait_sync(id, RDMA_CM_EVENT_ROUTE_RESOLVED) : 0;
}
