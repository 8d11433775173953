/* grid2d.c: a 2D Jacobi solver on the program's own buffers with the grid API
 * (docs/c-api.md, "Grids on your own buffers"): a 2D grid is n = {1, NY, NX}
 * with pad[0] = 0. Two fields of different element sizes (the solution, double,
 * and each cell's global id, int) are exchanged together; the last rank repeats
 * its sweep 3 times (emulated slowness), and after a remap both fields move into
 * new buffers. Rank 0's initial grid is scattered into the solution's buffers
 * (nuce_grid_scatter) and the result gathered back (nuce_grid_gather). Checks:
 * every face ghost holds its neighbour's global id after each exchange, and the
 * gathered result equals a serial solve bit for bit.
 * Prints "grid2d: ok" and exits 0, or exits non-zero.
 * Usage: mpirun -np P grid2d [NY NX] */
#include <mpi.h>
#include <nuce.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call) do { int rc_ = (call); if (rc_ != NUCE_OK) { \
  fprintf(stderr, "rank %d: %s failed: %d %s\n", rank, #call, rc_, nuce_last_error()); \
  MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

static int rank;

/* index of global (i, j) in a field of box lo/size with padding pad (n[0] = 1 axis: i is axis 1) */
static size_t at(const int64_t lo[3], const int64_t size[3], const int64_t pad[3], int64_t i, int64_t j) {
  int64_t d1 = size[1] + 2 * pad[1], d2 = size[2] + 2 * pad[2];
  return (size_t)(((0 - lo[0] + pad[0]) * d1 + (i - lo[1] + pad[1])) * d2 + (j - lo[2] + pad[2]));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int size; MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int64_t NY = argc > 1 ? atoll(argv[1]) : 61, NX = argc > 2 ? atoll(argv[2]) : 47;
  const int phases = 4, iters = 20;
  nuce_balancer *b;
  CHECK(nuce_balancer_create(MPI_COMM_WORLD, &b));
  CHECK(nuce_measure(b));
  int64_t n[3] = {1, NY, NX};
  nuce_grid *g;
  CHECK(nuce_grid_create(b, n, 1, NUCE_STENCIL_FACES, &g));
  int64_t pad[3] = {0, 1, 1};
  int64_t lo[3], sz[3];
  CHECK(nuce_grid_box(g, rank, lo, sz));
  size_t len;
  CHECK(nuce_grid_padded_len(g, pad, &len));
  double *u = calloc(len ? len : 1, sizeof(double)), *v = calloc(len ? len : 1, sizeof(double));
  int *tag = calloc(len ? len : 1, sizeof(int));
  for (int64_t i = lo[1]; i < lo[1] + sz[1]; i++)
    for (int64_t j = lo[2]; j < lo[2] + sz[2]; j++) tag[at(lo, sz, pad, i, j)] = (int)(i * NX + j);
  /* rank 0's initial grid, scattered into every rank's u (NULL, 0 elsewhere) */
  double *init = NULL;
  if (rank == 0) {
    init = malloc(NY * NX * sizeof(double));
    for (int64_t i = 0; i < NY; i++) for (int64_t j = 0; j < NX; j++) init[i * NX + j] = (double)((i + 2 * j) % 7);
  }
  nuce_field fu = {u, sizeof(double), {pad[0], pad[1], pad[2]}};
  CHECK(nuce_grid_scatter(g, init, rank == 0 ? (size_t)(NY * NX) : 0, &fu));
  int remaps = 0;
  for (int ph = 0; ph < phases; ph++) {
    for (int it = 0; it < iters; it++) {
      nuce_field f[2] = {{u, sizeof(double), {pad[0], pad[1], pad[2]}}, {tag, sizeof(int), {pad[0], pad[1], pad[2]}}};
      CHECK(nuce_grid_exchange(g, 2, f));
      int reps = (rank == size - 1 && size > 1) ? 3 : 1;
      for (int r = 0; r < reps; r++)
        for (int64_t i = lo[1]; i < lo[1] + sz[1]; i++)
          for (int64_t j = lo[2]; j < lo[2] + sz[2]; j++) {
            size_t c = at(lo, sz, pad, i, j);
            if (i == 0 || j == 0 || i == NY - 1 || j == NX - 1) { v[c] = u[c]; continue; }
            v[c] = 0.25 * (u[at(lo, sz, pad, i - 1, j)] + u[at(lo, sz, pad, i + 1, j)] +
                           u[at(lo, sz, pad, i, j - 1)] + u[at(lo, sz, pad, i, j + 1)]);
          }
      /* ghost tags must be the neighbours' global ids */
      for (int64_t i = lo[1] - 1; i <= lo[1] + sz[1]; i++)
        for (int64_t j = lo[2] - 1; j <= lo[2] + sz[2]; j++) {
          int inside = i >= lo[1] && i < lo[1] + sz[1] && j >= lo[2] && j < lo[2] + sz[2];
          int face = (i >= lo[1] && i < lo[1] + sz[1]) != (j >= lo[2] && j < lo[2] + sz[2]);
          if (!inside && face && i >= 0 && j >= 0 && i < NY && j < NX && sz[1] > 0 && sz[2] > 0 &&
              tag[at(lo, sz, pad, i, j)] != (int)(i * NX + j)) {
            fprintf(stderr, "rank %d: bad ghost tag at (%ld,%ld)\n", rank, (long)i, (long)j);
            MPI_Abort(MPI_COMM_WORLD, 2);
          }
        }
      double *t = u; u = v; v = t;
    }
    int remapped = 0;
    CHECK(nuce_grid_maybe_remap(b, g, iters, &remapped));
    if (remapped) {
      remaps++;
      int64_t nlo[3], nsz[3];
      CHECK(nuce_grid_box(g, rank, nlo, nsz));
      size_t nlen;
      CHECK(nuce_grid_padded_len(g, pad, &nlen));
      double *nu = calloc(nlen ? nlen : 1, sizeof(double));
      int *ntag = calloc(nlen ? nlen : 1, sizeof(int));
      nuce_field of[2] = {{u, sizeof(double), {pad[0], pad[1], pad[2]}}, {tag, sizeof(int), {pad[0], pad[1], pad[2]}}};
      nuce_field nf[2] = {{nu, sizeof(double), {pad[0], pad[1], pad[2]}}, {ntag, sizeof(int), {pad[0], pad[1], pad[2]}}};
      CHECK(nuce_grid_move(g, 2, of, nf));
      free(u); free(v); free(tag);
      u = nu; tag = ntag; v = calloc(nlen ? nlen : 1, sizeof(double));
      memcpy(lo, nlo, sizeof lo); memcpy(sz, nsz, sizeof sz);
    }
    if (rank == 0) printf("grid2d: phase %d: remapped %d, box of rank 0 %ldx%ld\n", ph, remapped, (long)sz[1], (long)sz[2]);
  }
  /* the result, gathered on rank 0 */
  double *res = rank == 0 ? malloc(NY * NX * sizeof(double)) : NULL;
  fu.data = u;
  CHECK(nuce_grid_gather(g, &fu, res, rank == 0 ? (size_t)(NY * NX) : 0));
  if (rank == 0) {
    /* serial reference, from the same initial grid */
    double *a = init, *c = malloc(NY * NX * sizeof(double));
    for (int k = 0; k < phases * iters; k++) {
      for (int64_t i = 0; i < NY; i++) for (int64_t j = 0; j < NX; j++) {
        if (i == 0 || j == 0 || i == NY - 1 || j == NX - 1) { c[i * NX + j] = a[i * NX + j]; continue; }
        c[i * NX + j] = 0.25 * (a[(i - 1) * NX + j] + a[(i + 1) * NX + j] + a[i * NX + j - 1] + a[i * NX + j + 1]);
      }
      double *t = a; a = c; c = t;
    }
    long differ = 0;
    for (int64_t k = 0; k < NY * NX; k++) differ += res[k] != a[k];
    printf("grid2d: remaps %d, cells differing from the serial solve: %ld of %ld\n", remaps, differ, (long)(NY * NX));
    if (differ) {
      fprintf(stderr, "grid2d: FAILED: the result differs from the serial solve\n");
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    printf("grid2d: ok\n");
    free(a);
    free(c);
    free(res);
  }
  free(u);
  free(v);
  free(tag);
  nuce_grid_free(g);
  nuce_balancer_free(b);
  MPI_Finalize();
  return 0;
}
