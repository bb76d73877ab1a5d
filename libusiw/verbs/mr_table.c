/* STag table: a chained hash indexed by the STag's low bits.  STags are
 * uniformly random, so their low bits spread evenly with no hashing, and the
 * table doubles whenever it holds more MRs than buckets, keeping chains short
 * on the data path. */
#include "mr_table.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

#include "limits.h"
#include "mr.h"

#define INITIAL_BUCKETS 64

int usiw_mr_table_init(struct usiw_mr_table *table)
{
	table->buckets = calloc(INITIAL_BUCKETS, sizeof(*table->buckets));
	if (!table->buckets)
		return -ENOMEM;
	table->bucket_count = INITIAL_BUCKETS;
	table->count = 0;
	return 0;
}

void usiw_mr_table_fini(struct usiw_mr_table *table)
{
	free(table->buckets);
}

static struct usiw_mr **bucket_of(const struct usiw_mr_table *table,
				  uint32_t stag)
{
	return &table->buckets[stag & (table->bucket_count - 1)];
}

struct usiw_mr *usiw_mr_table_find(const struct usiw_mr_table *table,
				   uint32_t stag)
{
	for (struct usiw_mr *mr = *bucket_of(table, stag); mr;
	     mr = mr->next_in_bucket)
		if (mr->stag == stag)
			return mr;
	return NULL;
}

/* Doubling is best effort: if memory is short the table keeps working with
 * longer chains. */
static void grow(struct usiw_mr_table *table)
{
	size_t count = table->bucket_count * 2;
	struct usiw_mr **buckets = calloc(count, sizeof(*buckets));

	if (!buckets)
		return;
	for (size_t i = 0; i < table->bucket_count; i++) {
		struct usiw_mr *mr = table->buckets[i];
		while (mr) {
			struct usiw_mr *next = mr->next_in_bucket;
			struct usiw_mr **head = &buckets[mr->stag & (count - 1)];
			mr->next_in_bucket = *head;
			*head = mr;
			mr = next;
		}
	}
	free(table->buckets);
	table->buckets = buckets;
	table->bucket_count = count;
}

/* A 32-bit STag from the kernel's CSPRNG: nothing about it follows from the
 * address, the length or the STags before it, so a peer cannot guess one.
 * 0 is never used, so that a zeroed field never names an MR. */
static int random_stag(uint32_t *stag)
{
	do {
		ssize_t got;
		do
			got = getrandom(stag, sizeof(*stag), 0);
		while (got < 0 && errno == EINTR);
		if (got != (ssize_t)sizeof(*stag))
			return -EIO;
	} while (*stag == 0);
	return 0;
}

int usiw_mr_table_insert(struct usiw_mr_table *table, struct usiw_mr *mr)
{
	int rc = 0;

	if (table->count >= USIW_MAX_MR) {
		rc = -ENOMEM;
		goto out;
	}
	do {
		rc = random_stag(&mr->stag);
		if (rc)
			goto out;
	} while (usiw_mr_table_find(table, mr->stag));

	if (table->count >= table->bucket_count)
		grow(table);
	struct usiw_mr **head = bucket_of(table, mr->stag);
	mr->next_in_bucket = *head;
	*head = mr;
	table->count++;
out:
	return rc;
}

void usiw_mr_table_remove(struct usiw_mr_table *table, struct usiw_mr *mr)
{
	for (struct usiw_mr **link = bucket_of(table, mr->stag); *link;
	     link = &(*link)->next_in_bucket) {
		if (*link == mr) {
			*link = mr->next_in_bucket;
			table->count--;
			break;
		}
	}
}
