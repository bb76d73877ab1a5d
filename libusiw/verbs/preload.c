/* The preloaded replacements of libibverbs functions (see overrides.h): each
 * answers for usiw0 and forwards anything else to the real libibverbs. */
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "attributes.h"
#include "comp_channel.h"
#include "device.h"
#include "limits.h"
#include "overrides.h"
#include "provider_abi.h"

#define USIW_EXPORT __attribute__((visibility("default")))

/* The real libibverbs function `name` (the definition after ours in lookup
 * order), looked up once.  Without it nothing can work, so its absence is
 * fatal. */
static void *real_symbol(const char *name, const char *version)
{
	void *symbol = dlvsym(RTLD_NEXT, name, version);

	if (!symbol) {
		fprintf(stderr, "usiw: libibverbs has no %s@%s: %s\n", name,
			version, dlerror());
		abort();
	}
	return symbol;
}

#define DEFINE_REAL(name, version)                                             \
	static __typeof__(name) *real_##name(void)                             \
	{                                                                      \
		static __typeof__(name) *_Atomic resolved;                     \
		__typeof__(name) *fn = resolved;                               \
		if (!fn) {                                                     \
			fn = (__typeof__(name) *)real_symbol(#name, version);  \
			resolved = fn;                                         \
		}                                                              \
		return fn;                                                     \
	}
USIW_OVERRIDDEN_SYMBOLS(DEFINE_REAL)

/* Device lists we handed out: ours carry usiw0 after the real devices, and
 * the real list must go back to libibverbs when the application frees ours. */
struct handed_out_list {
	struct handed_out_list *next;
	struct ibv_device **ours;
	struct ibv_device **real;   /* NULL if libibverbs found no kernel */
};

static pthread_mutex_t lists_lock = PTHREAD_MUTEX_INITIALIZER;
static struct handed_out_list *lists;

USIW_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	int real_count = 0;
	/* On a machine without the kernel's RDMA subsystem this fails
	 * (ENOSYS); usiw0 is listed all the same. */
	struct ibv_device **real = real_ibv_get_device_list()(&real_count);
	if (!real)
		real_count = 0;

	struct handed_out_list *entry = malloc(sizeof(*entry));
	struct ibv_device **ours = calloc((size_t)real_count + 2, sizeof(*ours));
	if (!entry || !ours) {
		free(entry);
		free(ours);
		if (real)
			real_ibv_free_device_list()(real);
		errno = ENOMEM;
		return NULL;
	}
	for (int i = 0; i < real_count; i++)
		ours[i] = real[i];
	ours[real_count] = usiw_device();
	entry->ours = ours;
	entry->real = real;

	pthread_mutex_lock(&lists_lock);
	entry->next = lists;
	lists = entry;
	pthread_mutex_unlock(&lists_lock);

	if (num_devices)
		*num_devices = real_count + 1;
	return ours;
}

USIW_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	struct handed_out_list *entry = NULL;

	pthread_mutex_lock(&lists_lock);
	for (struct handed_out_list **link = &lists; *link;
	     link = &(*link)->next) {
		if ((*link)->ours == list) {
			entry = *link;
			*link = entry->next;
			break;
		}
	}
	pthread_mutex_unlock(&lists_lock);

	if (!entry) {
		real_ibv_free_device_list()(list);
		return;
	}
	if (entry->real)
		real_ibv_free_device_list()(entry->real);
	free(entry->ours);
	free(entry);
}

USIW_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	if (!usiw_is_device(device))
		return real_ibv_get_device_guid()(device);
	return htobe64(usiw_device_node_guid());
}

USIW_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num,
			      int index, union ibv_gid *gid)
{
	if (!usiw_is_context(context))
		return real_ibv_query_gid()(context, port_num, index, gid);
	int rc = index < 0 ? EINVAL
			   : usiw_gid(context, port_num, (uint32_t)index, gid);
	if (rc) {
		errno = rc;
		return -1;
	}
	return 0;
}

static void fill_gid_entry(struct ibv_context *context, uint32_t port_num,
			   uint32_t index, struct ibv_gid_entry *entry)
{
	memset(entry, 0, sizeof(*entry));
	usiw_gid(context, port_num, index, &entry->gid);
	entry->gid_index = index;
	entry->port_num = port_num;
	/* What the kernel reports for the GIDs of iWARP devices. */
	entry->gid_type = IBV_GID_TYPE_IB;
	entry->ndev_ifindex = 0;   /* no kernel netdev behind a DPDK port */
}

/* entry_size lets libibverbs grow struct ibv_gid_entry; an application built
 * against an older, smaller one is not one we can fill. */
USIW_EXPORT int _ibv_query_gid_ex(struct ibv_context *context,
				  uint32_t port_num, uint32_t gid_index,
				  struct ibv_gid_entry *entry, uint32_t flags,
				  size_t entry_size)
{
	if (!usiw_is_context(context))
		return real__ibv_query_gid_ex()(context, port_num, gid_index,
						entry, flags, entry_size);
	if (flags || entry_size < sizeof(*entry) || port_num < 1 ||
	    port_num > USIW_PORT_COUNT || gid_index >= USIW_GID_TABLE_LEN)
		return EINVAL;
	fill_gid_entry(context, port_num, gid_index, entry);
	return 0;
}

USIW_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context,
					 struct ibv_gid_entry *entries,
					 size_t max_entries, uint32_t flags,
					 size_t entry_size)
{
	if (!usiw_is_context(context))
		return real__ibv_query_gid_table()(context, entries, max_entries,
						   flags, entry_size);
	if (flags || entry_size < sizeof(*entries) ||
	    max_entries < USIW_PORT_COUNT * USIW_GID_TABLE_LEN)
		return -EINVAL;
	size_t n = 0;
	for (uint32_t port = 1; port <= USIW_PORT_COUNT; port++)
		for (uint32_t index = 0; index < USIW_GID_TABLE_LEN; index++)
			fill_gid_entry(context, port, index,
				       (struct ibv_gid_entry *)((char *)entries +
								n++ * entry_size));
	return (ssize_t)n;
}

USIW_EXPORT int ibv_query_gid_type(struct ibv_context *context,
				   uint8_t port_num, unsigned int index,
				   enum ibv_gid_type_sysfs *type)
{
	union ibv_gid unused;

	if (!usiw_is_context(context))
		return real_ibv_query_gid_type()(context, port_num, index, type);
	int rc = usiw_gid(context, port_num, index, &unused);
	if (rc) {
		errno = rc;
		return -1;
	}
	*type = IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

USIW_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num,
			       int index, __be16 *pkey)
{
	uint16_t value;

	if (!usiw_is_context(context))
		return real_ibv_query_pkey()(context, port_num, index, pkey);
	int rc = index < 0 ? EINVAL
			   : usiw_pkey(context, port_num, (uint32_t)index, &value);
	if (rc) {
		errno = rc;
		return -1;
	}
	*pkey = htobe16(value);
	return 0;
}

USIW_EXPORT int ibv_get_pkey_index(struct ibv_context *context,
				   uint8_t port_num, __be16 pkey)
{
	uint16_t value;

	if (!usiw_is_context(context))
		return real_ibv_get_pkey_index()(context, port_num, pkey);
	for (uint32_t index = 0;
	     usiw_pkey(context, port_num, index, &value) == 0; index++)
		if (htobe16(value) == pkey)
			return (int)index;
	errno = ENOENT;
	return -1;
}

USIW_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	if (!usiw_is_context(context))
		return real_ibv_create_comp_channel()(context);
	return usiw_create_comp_channel(context);
}

USIW_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	if (!usiw_is_context(channel->context))
		return real_ibv_destroy_comp_channel()(channel);
	return usiw_destroy_comp_channel(channel);
}
