/* The memory regions of a context, found by STag.  Registration and
 * deregistration write; the data path (usiw_mr_lookup) only reads.  All of
 * it under the context lock (usiw_context_lock), which every data path
 * already holds: a lock of the table's own cost a read lock and unlock on
 * every segment placed or sent (3.4% of the CPU of an ib_read_bw run). */
#ifndef USIW_VERBS_MR_TABLE_H
#define USIW_VERBS_MR_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct usiw_mr;

struct usiw_mr_table {
	struct usiw_mr **buckets;   /* chains through usiw_mr.next_in_bucket */
	size_t bucket_count;        /* a power of two */
	size_t count;
};

int usiw_mr_table_init(struct usiw_mr_table *table);
void usiw_mr_table_fini(struct usiw_mr_table *table);

/* Give mr a fresh random STag nobody in the table has, and insert it.
 * Returns 0, or -ENOMEM (table full or out of memory), or -EIO if the kernel's
 * random source fails. */
int usiw_mr_table_insert(struct usiw_mr_table *table, struct usiw_mr *mr);
void usiw_mr_table_remove(struct usiw_mr_table *table, struct usiw_mr *mr);

struct usiw_mr *usiw_mr_table_find(const struct usiw_mr_table *table,
				   uint32_t stag);

#endif
