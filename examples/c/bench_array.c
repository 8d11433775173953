/* bench_array.c — the ghost exchange of nuce_array_exchange_ghosts (a 2D
 * array handle) against a hand-written MPI exchange of the same cells
 * (MPI_Isend/MPI_Irecv of MPI_Type_create_subarray types, one message per
 * neighbour and direction, types built once), on two copies of the same
 * padded block, alternating blocks of each. The hand-written side finds its
 * neighbours from every rank's rectangle (nuce_array_rect): it receives
 * expand(mine, g) ∩ theirs and sends mine ∩ expand(theirs, g) (faces and
 * corners). After the timing both blocks must be equal (checked).
 *
 *   mpirun -np 2 ./bench_array N GHOST REPS   (an N × N array of doubles)
 * prints `bench_array: ranks P n N ghost G nuce_us X mpi_us Y ratio X/Y` on
 * rank 0 (per exchange, the best block of each).
 */
#include <mpi.h>
#include <nuce.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int rc, const char *what) {
  if (rc != NUCE_OK) {
    fprintf(stderr, "bench_array: %s failed: %s\n", what, nuce_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}
#define CHECK(call) check((call), #call)

/* The intersection of [a0, a0 + an) and [b0, b0 + bn) along one axis. */
static int overlap(int64_t a0, int64_t an, int64_t b0, int64_t bn, int64_t *lo, int64_t *len) {
  int64_t l = a0 > b0 ? a0 : b0, h = (a0 + an < b0 + bn) ? a0 + an : b0 + bn;
  *lo = l, *len = h - l;
  return h > l;
}

/* `r` (row, col, rows, cols) grown by g on every side, clipped to n × n. */
static void expand(const int64_t *r, int64_t g, int64_t n, int64_t *out) {
  for (int a = 0; a < 2; a++) {
    int64_t lo = r[a] - g < 0 ? 0 : r[a] - g, hi = r[a] + r[a + 2] + g > n ? n : r[a] + r[a + 2] + g;
    out[a] = lo, out[a + 2] = hi - lo;
  }
}

/* A subarray type of the global rectangle (lo, len) in my padded block. */
static MPI_Datatype subarray(const int64_t *me, int64_t g, const int64_t *lo, const int64_t *len) {
  int dims[2] = {(int)(me[2] + 2 * g), (int)(me[3] + 2 * g)};
  int subs[2] = {(int)len[0], (int)len[1]};
  int starts[2] = {(int)(lo[0] - me[0] + g), (int)(lo[1] - me[1] + g)};
  MPI_Datatype t;
  MPI_Type_create_subarray(2, dims, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  return t;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int64_t n = argc > 1 ? atoll(argv[1]) : 64, g = argc > 2 ? atoll(argv[2]) : 1;
  int reps = argc > 3 ? atoi(argv[3]) : 1000;
  nuce_balancer *b = NULL;
  nuce_array *a = NULL;
  CHECK(nuce_balancer_create(MPI_COMM_WORLD, &b));
  CHECK(nuce_array_create(b, n, n, sizeof(double), g, &a));
  size_t len;
  CHECK(nuce_array_padded_len(a, &len));
  int64_t me[4];
  CHECK(nuce_array_rect(a, rank, me));
  double *x = calloc(len ? len : 1, sizeof(double)), *y = calloc(len ? len : 1, sizeof(double));
  /* Owned cells carry their global index, ghosts -1. */
  int64_t pc = me[3] + 2 * g;
  for (size_t i = 0; i < len; i++) x[i] = -1.0;
  for (int64_t i = 0; i < me[2]; i++)
    for (int64_t j = 0; j < me[3]; j++) x[(i + g) * pc + j + g] = (double)((me[0] + i) * n + me[1] + j);
  memcpy(y, x, len * sizeof(double));
  /* The hand-written exchange's neighbours and types. */
  int count = 0;
  int *peer = malloc((size_t)size * sizeof(int));
  MPI_Datatype *st = malloc((size_t)size * sizeof(MPI_Datatype)), *rt = malloc((size_t)size * sizeof(MPI_Datatype));
  int64_t mine_g[4];
  expand(me, g, n, mine_g);
  for (int q = 0; q < size && me[2] > 0 && me[3] > 0; q++) {
    int64_t th[4], th_g[4], slo[2], slen[2], rlo[2], rlen[2];
    CHECK(nuce_array_rect(a, q, th));
    if (q == rank || th[2] == 0 || th[3] == 0) continue;
    expand(th, g, n, th_g);
    int s = overlap(me[0], me[2], th_g[0], th_g[2], &slo[0], &slen[0]) &&
            overlap(me[1], me[3], th_g[1], th_g[3], &slo[1], &slen[1]);
    int r = overlap(mine_g[0], mine_g[2], th[0], th[2], &rlo[0], &rlen[0]) &&
            overlap(mine_g[1], mine_g[3], th[1], th[3], &rlo[1], &rlen[1]);
    if (!s || !r) continue;
    peer[count] = q;
    st[count] = subarray(me, g, slo, slen);
    rt[count] = subarray(me, g, rlo, rlen);
    count++;
  }
  MPI_Request *req = malloc((2 * (size_t)count + 1) * sizeof(MPI_Request));
  MPI_Status *stat = malloc((2 * (size_t)count + 1) * sizeof(MPI_Status));
  double best[2] = {1e30, 1e30};
  for (int block = 0; block < 10; block++) {
    for (int which = 0; which < 2; which++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int it = 0; it < reps; it++) {
        if (which == 0) {
          CHECK(nuce_array_exchange_ghosts(a, x, len));
        } else {
          for (int k = 0; k < count; k++) MPI_Irecv(y, 1, rt[k], peer[k], 7, MPI_COMM_WORLD, &req[k]);
          for (int k = 0; k < count; k++) MPI_Isend(y, 1, st[k], peer[k], 7, MPI_COMM_WORLD, &req[count + k]);
          MPI_Waitall(2 * count, req, stat);
        }
      }
      double t = (MPI_Wtime() - t0) / reps, worst;
      MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (worst < best[which]) best[which] = worst;
    }
  }
  size_t differ = 0;
  for (size_t i = 0; i < len; i++) differ += x[i] != y[i];
  if (differ) {
    fprintf(stderr, "bench_array: rank %d: the two exchanges left %zu different cells\n", rank, differ);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  if (rank == 0)
    printf("bench_array: ranks %d n %lld ghost %lld nuce_us %.2f mpi_us %.2f ratio %.3f\n", size, (long long)n,
           (long long)g, best[0] * 1e6, best[1] * 1e6, best[0] / best[1]);
  for (int k = 0; k < count; k++) MPI_Type_free(&st[k]), MPI_Type_free(&rt[k]);
  free(x), free(y), free(peer), free(st), free(rt), free(req), free(stat);
  CHECK(nuce_array_free(a));
  CHECK(nuce_balancer_free(b));
  MPI_Finalize();
  return 0;
}
