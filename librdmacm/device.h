/* The devices our librdmacm manages: every usiw device libibverbs lists,
 * opened once per process (as rdma-core's librdmacm opens every device), and
 * the one table of functions libusiw.so gives us (qp_cm.h). */
#ifndef USIW_CM_DEVICE_H
#define USIW_CM_DEVICE_H

#include <stdint.h>

#include <infiniband/verbs.h>

#include "libusiw/verbs/qp_cm.h"

struct cm_device {
	struct ibv_context *verbs;
	struct usiw_engine *engine;
	uint32_t ipv4;                  /* network byte order */
	uint32_t netmask;               /* network byte order */
	struct ibv_pd *default_pd;      /* for rdma_create_qp(id, NULL, ...), on first use */
};

/* Set once cm_init() has succeeded. */
extern const struct usiw_cm_interface *cm_usiw;

/* Finds libusiw, opens the devices and starts the progress thread, once.
 * 0, or an errno (ENODEV: no usiw device or libusiw.so not loaded). */
int cm_init(void);

/* The device with this address; INADDR_ANY gives the first.  NULL if none. */
struct cm_device *cm_device_by_ipv4(uint32_t ipv4);
/* The device whose subnet holds ipv4 (else the first: a clear error comes
 * from address resolution). */
struct cm_device *cm_device_for_peer(uint32_t ipv4);
/* With the CM lock held. NULL with errno set on failure. */
struct ibv_pd *cm_device_default_pd(struct cm_device *dev);

#endif
