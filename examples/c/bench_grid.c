/* bench_grid.c — the ghost exchange of nuce_grid_exchange against two
 * hand-written MPI exchanges of the same regions (MPI_Isend/MPI_Irecv of
 * MPI_Type_create_subarray types built once): one message per field and
 * neighbour, and one per neighbour for all fields (an MPI_Type_create_struct
 * of the fields' subarrays); on the same buffers, alternating blocks of each.
 *
 *   mpirun -np 2 ./bench_grid N NFIELDS REPS   (an N³ grid of doubles, ghost 1, faces)
 * prints on rank 0, per exchange (the slowest rank's time):
 *   `bench_grid: ranks P n N fields F nuce_us X mpi_us Y ratio X/Y` — the best block of each;
 *   `bench_grid mean: nuce_us X mpi_us Y struct_us Z ratio X/Y` — the mean over the blocks
 *   (the figure to compare when another process shares a rank's core: best blocks
 *   then catch the moments it was off the core).
 */
#include <mpi.h>
#include <nuce.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void check(int rc, const char *what) {
  if (rc != NUCE_OK) {
    fprintf(stderr, "bench_grid: %s failed: %s\n", what, nuce_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}
#define CHECK(call) check((call), #call)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int64_t n = argc > 1 ? atoll(argv[1]) : 64;
  int nf = argc > 2 ? atoi(argv[2]) : 1, reps = argc > 3 ? atoi(argv[3]) : 200;
  if (nf < 1 || nf > 8) nf = 1;
  int64_t N[3] = {n, n, n}, pad[3] = {1, 1, 1}, lo[3], sz[3];
  nuce_balancer *b = NULL;
  nuce_grid *g = NULL;
  CHECK(nuce_balancer_create(MPI_COMM_WORLD, &b));
  CHECK(nuce_grid_create(b, N, 1, NUCE_STENCIL_FACES, &g));
  CHECK(nuce_grid_box(g, rank, lo, sz));
  size_t len;
  CHECK(nuce_grid_padded_len(g, pad, &len));
  nuce_field f[8];
  for (int k = 0; k < nf; k++) {
    double *d = calloc(len ? len : 1, sizeof(double));
    for (size_t i = 0; i < len; i++) d[i] = (double)(i + k);
    f[k] = (nuce_field){d, sizeof(double), {1, 1, 1}};
  }
  /* The hand-written exchange of the same regions. */
  int count = 0;
  CHECK(nuce_grid_regions(g, &count, NULL, NULL, NULL, NULL, 0));
  int *peer = malloc((count + 1) * sizeof(int)), *is_send = malloc((count + 1) * sizeof(int));
  int64_t *rlo = malloc((3 * count + 1) * sizeof(int64_t)), *rsz = malloc((3 * count + 1) * sizeof(int64_t));
  CHECK(nuce_grid_regions(g, &count, peer, rlo, rsz, is_send, count));
  MPI_Datatype *types = malloc((count * nf + 1) * sizeof(MPI_Datatype));
  int dims[3] = {(int)(sz[0] + 2), (int)(sz[1] + 2), (int)(sz[2] + 2)};
  for (int r = 0; r < count; r++) {
    int subs[3], starts[3];
    for (int a = 0; a < 3; a++) subs[a] = (int)rsz[3 * r + a], starts[a] = (int)(rlo[3 * r + a] - lo[a] + 1);
    for (int k = 0; k < nf; k++) {
      MPI_Type_create_subarray(3, dims, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &types[r * nf + k]);
      MPI_Type_commit(&types[r * nf + k]);
    }
  }
  MPI_Datatype *stypes = malloc((count + 1) * sizeof(MPI_Datatype));
  for (int r = 0; r < count; r++) {
    int bl[8];
    MPI_Aint disp[8];
    for (int k = 0; k < nf; k++) bl[k] = 1, disp[k] = (char *)f[k].data - (char *)f[0].data;
    MPI_Type_create_struct(nf, bl, disp, &types[r * nf], &stypes[r]);
    MPI_Type_commit(&stypes[r]);
  }
  MPI_Request *req = malloc((count * nf + 1) * sizeof(MPI_Request));
  enum { BLOCKS = 10 };
  double best[3] = {1e30, 1e30, 1e30}, sum[3] = {0, 0, 0};
  for (int block = 0; block < BLOCKS; block++) {
    for (int which = 0; which < 3; which++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int it = 0; it < reps; it++) {
        if (which == 0) {
          CHECK(nuce_grid_exchange(g, nf, f));
        } else if (which == 2) { /* one message per neighbour, all fields */
          int q = 0;
          for (int pass = 0; pass < 2; pass++)
            for (int r = 0; r < count; r++) {
              if (pass == 0 && !is_send[r])
                MPI_Irecv(f[0].data, 1, stypes[r], peer[r], 0, MPI_COMM_WORLD, &req[q++]);
              if (pass == 1 && is_send[r])
                MPI_Isend(f[0].data, 1, stypes[r], peer[r], 0, MPI_COMM_WORLD, &req[q++]);
            }
          MPI_Waitall(q, req, MPI_STATUSES_IGNORE);
        } else {
          int q = 0;
          for (int pass = 0; pass < 2; pass++) /* receives first, then sends */
            for (int r = 0; r < count; r++)
              for (int k = 0; k < nf; k++) {
                if (pass == 0 && !is_send[r])
                  MPI_Irecv(f[k].data, 1, types[r * nf + k], peer[r], k, MPI_COMM_WORLD, &req[q++]);
                if (pass == 1 && is_send[r])
                  MPI_Isend(f[k].data, 1, types[r * nf + k], peer[r], k, MPI_COMM_WORLD, &req[q++]);
              }
          MPI_Waitall(q, req, MPI_STATUSES_IGNORE);
        }
      }
      double t = (MPI_Wtime() - t0) / reps, worst;
      MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (worst < best[which]) best[which] = worst;
      sum[which] += worst;
    }
  }
  if (rank == 0)
    printf("bench_grid: ranks %d n %lld fields %d nuce_us %.2f mpi_us %.2f ratio %.3f\n", size, (long long)n, nf,
           best[0] * 1e6, best[1] * 1e6, best[0] / best[1]);
  if (rank == 0)
    printf("bench_grid mean: nuce_us %.2f mpi_us %.2f struct_us %.2f ratio %.3f\n", sum[0] / BLOCKS * 1e6,
           sum[1] / BLOCKS * 1e6, sum[2] / BLOCKS * 1e6, sum[0] / sum[1]);
  for (int i = 0; i < count * nf; i++) MPI_Type_free(&types[i]);
  for (int r = 0; r < count; r++) MPI_Type_free(&stypes[r]);
  for (int k = 0; k < nf; k++) free(f[k].data);
  free(types), free(stypes), free(req), free(peer), free(is_send), free(rlo), free(rsz);
  CHECK(nuce_grid_free(g));
  CHECK(nuce_balancer_free(b));
  MPI_Finalize();
  return 0;
}
