/* rdma_create_ep and rdma_destroy_ep: a synchronous id set up from an
 * rdma_addrinfo in one call. */
#include <errno.h>
#include <stdlib.h>

#include <rdma/rdma_cma.h>

#include "cm_id.h"
#include "cm_qp.h"

/* rdma_create_ep(3)'s address and route resolution timeout. */
#define EP_RESOLVE_MS 2000

static int set_up(struct rdma_cm_id *id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		  struct ibv_qp_init_attr *qp_init_attr)
{
	id->pd = pd;
	/* The QP is of the type the address info says (rdma_create_ep(3): the
	 * attributes are in and out): programs leave qp_type zero for it
	 * (rdma_client, rdma_server). */
	if (qp_init_attr && res->ai_qp_type)
		qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(id, res->ai_src_addr))
			return -1;
		/* The QP is made for each request rdma_get_request hands out. */
		if (qp_init_attr) {
			struct cm_id *cid = cm_id_of(id);
			cid->ep_qp_attr = malloc(sizeof(*qp_init_attr));
			if (!cid->ep_qp_attr)
				return cm_fail(ENOMEM);
			*cid->ep_qp_attr = *qp_init_attr;
		}
		return 0;
	}
	if (rdma_resolve_addr(id, res->ai_src_addr, res->ai_dst_addr, EP_RESOLVE_MS) ||
	    rdma_resolve_route(id, EP_RESOLVE_MS))
		return -1;
	return qp_init_attr ? rdma_create_qp(id, pd, qp_init_attr) : 0;
}

int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *new_id;

	if (!id || !res)
		return cm_fail(EINVAL);
	enum rdma_port_space ps = res->ai_port_space ? (enum rdma_port_space)res->ai_port_space
						     : RDMA_PS_TCP;
	if (rdma_create_id(NULL, &new_id, NULL, ps))
		return -1;
	if (set_up(new_id, res, pd, qp_init_attr)) {
		int err = errno;
		rdma_destroy_ep(new_id);
		return cm_fail(err);
	}
	*id = new_id;
	return 0;
}

void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (!id)
		return;
	cm_qp_destroy_ep_resources(id);
	rdma_destroy_id(id);
}
