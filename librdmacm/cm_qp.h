/* QP, SRQ and CQs an id made (qp.c). */
#ifndef USIW_CM_QP_H
#define USIW_CM_QP_H

#include <rdma/rdma_cma.h>

/* rdma_destroy_ep's part: the QP, the SRQ and the CQs rdma_create_qp made. */
void cm_qp_destroy_ep_resources(struct rdma_cm_id *id);

#endif
