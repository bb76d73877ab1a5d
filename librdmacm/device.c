/* Finding libusiw.so, opening the usiw devices, rdma_get_devices. */
#include "device.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "progress.h"

/* One engine per process and one port per engine: more than a few usiw
 * devices cannot exist. */
#define CM_MAX_DEVICES 4

const struct usiw_cm_interface *cm_usiw;

static struct cm_device devices[CM_MAX_DEVICES];
static unsigned n_devices;
static int init_error;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static const struct usiw_cm_interface *find_libusiw(void)
{
	const struct usiw_cm_interface *(*get)(void);

	*(void **)&get = dlsym(RTLD_DEFAULT, USIW_CM_INTERFACE_SYMBOL);
	if (!get)
		return NULL;
	const struct usiw_cm_interface *usiw = get();
	if (!usiw || usiw->version != USIW_CM_INTERFACE_VERSION) {
		fprintf(stderr, "usiw librdmacm: libusiw.so has CM interface version %u, "
				"this librdmacm was built for %u\n",
			usiw ? usiw->version : 0, USIW_CM_INTERFACE_VERSION);
		return NULL;
	}
	return usiw;
}

static void open_device(struct ibv_device *device)
{
	struct ibv_context *verbs = ibv_open_device(device);

	if (!verbs)
		return;   /* libusiw said why on stderr */
	struct cm_device *dev = &devices[n_devices++];
	dev->verbs = verbs;
	dev->engine = cm_usiw->engine_of(verbs);
	const struct usiw_port_attr *port = cm_usiw->port_attr(dev->engine);
	dev->ipv4 = port->ipv4;
	dev->netmask = port->prefix_len ? htonl(~0u << (32 - port->prefix_len)) : 0;
}

static void init(void)
{
	cm_usiw = find_libusiw();
	if (!cm_usiw) {
		init_error = ENODEV;
		return;
	}
	int n;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list) {
		init_error = errno ? errno : ENODEV;
		return;
	}
	for (int i = 0; i < n && n_devices < CM_MAX_DEVICES; i++)
		if (cm_usiw->is_device(list[i]))
			open_device(list[i]);
	ibv_free_device_list(list);
	if (!n_devices) {
		init_error = ENODEV;
		return;
	}
	init_error = cm_progress_start();
}

int cm_init(void)
{
	pthread_once(&init_once, init);
	return init_error;
}

struct cm_device *cm_device_by_ipv4(uint32_t ipv4)
{
	for (unsigned i = 0; i < n_devices; i++)
		if (ipv4 == htonl(INADDR_ANY) || devices[i].ipv4 == ipv4)
			return &devices[i];
	return NULL;
}

struct cm_device *cm_device_for_peer(uint32_t ipv4)
{
	for (unsigned i = 0; i < n_devices; i++)
		if ((ipv4 & devices[i].netmask) == (devices[i].ipv4 & devices[i].netmask))
			return &devices[i];
	return n_devices ? &devices[0] : NULL;
}

struct ibv_pd *cm_device_default_pd(struct cm_device *dev)
{
	if (!dev->default_pd)
		dev->default_pd = ibv_alloc_pd(dev->verbs);
	return dev->default_pd;
}

/* rdma_get_devices(3): the devices stay open for the life of the process
 * (as with rdma-core), so the list only refers to them. */
struct ibv_context **rdma_get_devices(int *num_devices)
{
	int rc = cm_init();
	unsigned n = rc ? 0 : n_devices;
	struct ibv_context **list = calloc(n + 1, sizeof(*list));

	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	for (unsigned i = 0; i < n; i++)
		list[i] = devices[i].verbs;
	if (num_devices)
		*num_devices = (int)n;
	return list;
}

void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
