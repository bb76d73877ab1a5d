/* An MPI program of our own for two ranks, each on its own usiw endpoint:
 * point-to-point messages of many sizes both ways, a window of nonblocking
 * messages matched out of order by tag, and a collective.  Every byte
 * received is checked against what its sender must have sent, so a message
 * lost, cut short or placed wrong fails the run. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest ping-pong message, and the window's messages: the buffer
 * holds either. */
#define LARGEST ((4 << 20) + 3)
enum { WINDOW_MSGS = 64, WINDOW_SIZE = 8192, WINDOW_TAG = 5000 };
#define BUF_SIZE (LARGEST > 2 * WINDOW_MSGS * WINDOW_SIZE ? LARGEST : 2 * WINDOW_MSGS * WINDOW_SIZE)

static long failures;
static long verified_msgs;
static long verified_bytes;

/* The byte at i of the message that 'from' sends with this tag and size. */
static unsigned char pattern(int from, int tag, int size, size_t i)
{
	uint32_t x = (uint32_t)(i * 2654435761u) ^ (uint32_t)(tag * 40503 + size * 7 + from * 131);
	return (unsigned char)(x >> 13 ^ x);
}

static void fill(unsigned char *buf, int from, int tag, int size)
{
	for (int i = 0; i < size; i++)
		buf[i] = pattern(from, tag, size, (size_t)i);
}

static void verify(const unsigned char *buf, int from, int tag, int size, const MPI_Status *st)
{
	int count = -1;

	MPI_Get_count(st, MPI_BYTE, &count);
	if (count != size) {
		fprintf(stderr, "mpi_check: tag %d from rank %d: %d bytes, not %d\n", tag, from,
			count, size);
		failures++;
		return;
	}
	for (int i = 0; i < size; i++) {
		if (buf[i] != pattern(from, tag, size, (size_t)i)) {
			fprintf(stderr, "mpi_check: tag %d from rank %d, %d bytes: byte %d differs\n",
				tag, from, size, i);
			failures++;
			return;
		}
	}
	verified_msgs++;
	verified_bytes += size;
}

/* Each size goes both ways, each direction with its own data; the sizes
 * cross the MTU, the eager limits and the rendezvous (RDMA Read) path. */
static void ping_pong(int rank, unsigned char *buf)
{
	static const int sizes[] = { 0, 1, 7, 64, 1000, 4096, 8999, 9000, 65536, 65537,
				     1 << 20, LARGEST };
	const int peer = 1 - rank;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (int round = 0; round < 20; round++) {
			const int size = sizes[s], tag = (int)s * 100 + round;
			MPI_Status st;

			if (rank == 0) {
				fill(buf, rank, tag, size);
				MPI_Send(buf, size, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
			}
			memset(buf, 0, (size_t)size);
			MPI_Recv(buf, size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
			verify(buf, peer, tag, size, &st);
			if (rank == 1) {
				fill(buf, rank, tag, size);
				MPI_Send(buf, size, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
			}
		}
	}
}

/* 64 messages in flight at once from each rank; the receives are posted
 * in the reverse order of the sends, so matching is by tag. */
static void window(int rank, unsigned char *buf)
{
	MPI_Request req[2 * WINDOW_MSGS];
	MPI_Status st[2 * WINDOW_MSGS];
	unsigned char *out = buf, *in = buf + WINDOW_MSGS * WINDOW_SIZE;
	const int peer = 1 - rank;

	for (int m = 0; m < WINDOW_MSGS; m++) {
		const int tag = WINDOW_MSGS - 1 - m;
		MPI_Irecv(in + (size_t)tag * WINDOW_SIZE, WINDOW_SIZE, MPI_BYTE, peer,
			  WINDOW_TAG + tag, MPI_COMM_WORLD, &req[m]);
	}
	for (int m = 0; m < WINDOW_MSGS; m++) {
		fill(out + (size_t)m * WINDOW_SIZE, rank, WINDOW_TAG + m, WINDOW_SIZE);
		MPI_Isend(out + (size_t)m * WINDOW_SIZE, WINDOW_SIZE, MPI_BYTE, peer, WINDOW_TAG + m,
			  MPI_COMM_WORLD, &req[WINDOW_MSGS + m]);
	}
	MPI_Waitall(2 * WINDOW_MSGS, req, st);
	for (int m = 0; m < WINDOW_MSGS; m++) {
		const int tag = WINDOW_MSGS - 1 - m;
		verify(in + (size_t)tag * WINDOW_SIZE, peer, WINDOW_TAG + tag, WINDOW_SIZE, &st[m]);
	}
}

static void collective(int rank, int ranks)
{
	enum { N = 1000 };
	long mine[N], sum[N];

	for (int i = 0; i < N; i++)
		mine[i] = (long)(rank + 1) * i;
	MPI_Allreduce(mine, sum, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < N; i++) {
		if (sum[i] != (long)ranks * (ranks + 1) / 2 * i) {
			fprintf(stderr, "mpi_check: allreduce element %d is %ld\n", i, sum[i]);
			failures++;
			return;
		}
	}
	verified_msgs++;
}

int main(int argc, char **argv)
{
	int rank, ranks;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	if (ranks != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_check: needs 2 ranks, has %d\n", ranks);
		MPI_Finalize();
		return 2;
	}
	unsigned char *buf = malloc(BUF_SIZE);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	ping_pong(rank, buf);
	window(rank, buf);
	collective(rank, ranks);
	free(buf);
	printf("mpi_check: rank %d: %ld messages (%ld bytes) verified, %ld failures\n", rank,
	       verified_msgs, verified_bytes, failures);
	MPI_Finalize();
	return failures ? 1 : 0;
}
