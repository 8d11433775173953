/* restart.c: a 2D Jacobi solver whose ranks change while it runs: saved and
 * resumed on another number of ranks (docs/c-api.md, "Save and restart on another
 * number of ranks"), or with a rank leaving mid-run (docs/c-api.md, "Ranks that
 * leave").
 *
 *   mpirun -np P restart STEPS                   run STEPS sweeps
 *   mpirun -np P restart STEPS SAVE_AT FILE      ... and save after sweep SAVE_AT
 *   mpirun -np Q restart STEPS --resume FILE     resume from FILE up to STEPS
 *   mpirun -np P restart STEPS --leave R AT      rank R leaves after sweep AT
 *
 * The grid is n = {1, NY, NX} on the program's own buffers; the saved step
 * travels as the save's user bytes. Prints "restart: steps S ranks P hash H",
 * H a hash of every cell's bits that does not depend on the decomposition: a
 * resumed run, or one a rank left, prints the same H as a run that never
 * changed. A rank that leaves prints "restart: rank R released". */
#include <mpi.h>
#include <nuce.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call) do { int rc_ = (call); if (rc_ != NUCE_OK) { \
  fprintf(stderr, "rank %d: %s failed: %d %s\n", rank, #call, rc_, nuce_last_error()); \
  MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

enum { NY = 90, NX = 70 };
static int rank;

static uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 2 && argc != 4 && argc != 5) {
    if (rank == 0) fprintf(stderr, "usage: restart STEPS [SAVE_AT FILE | --resume FILE | --leave R AT]\n");
    MPI_Finalize();
    return 2;
  }
  const int64_t steps = atoll(argv[1]);
  const int resume = argc == 4 && strcmp(argv[2], "--resume") == 0;
  const int64_t save_at = argc == 4 && !resume ? atoll(argv[2]) : -1;
  const char *file = argc == 4 ? argv[3] : NULL;
  const int leave_rank = argc == 5 ? atoi(argv[3]) : -1;
  const int64_t leave_at = argc == 5 ? atoll(argv[4]) : -1;
  MPI_Comm comm = MPI_COMM_WORLD; /* the ranks that run: smaller after a leave */
  int me = rank;                  /* this rank in comm */

  nuce_balancer *b;
  CHECK(nuce_balancer_create(MPI_COMM_WORLD, &b));
  CHECK(nuce_measure(b));
  nuce_grid *g;
  nuce_saved *s = NULL;
  int64_t step = 0;
  if (resume) {
    CHECK(nuce_saved_open(b, file, &s));
    const void *user; size_t len;
    CHECK(nuce_saved_user(s, &user, &len));
    if (len != sizeof step) { fprintf(stderr, "unexpected user bytes\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
    memcpy(&step, user, sizeof step);
    CHECK(nuce_saved_grid_create(s, b, &g)); /* planned for this run's ranks and speeds */
  } else {
    int64_t n[3] = {1, NY, NX};
    CHECK(nuce_grid_create(b, n, 1, NUCE_STENCIL_FACES, &g));
  }
  int64_t pad[3] = {0, 1, 1}, lo[3], sz[3];
  CHECK(nuce_grid_box(g, me, lo, sz));
  size_t len;
  CHECK(nuce_grid_padded_len(g, pad, &len));
  double *u = calloc(len ? len : 1, sizeof(double)), *v = calloc(len ? len : 1, sizeof(double));
  int64_t d2 = sz[2] + 2;
#define AT(i, j) ((size_t)(((i) - lo[1] + 1) * d2 + ((j) - lo[2] + 1)))
  if (resume) {
    nuce_field f = {u, sizeof(double), {pad[0], pad[1], pad[2]}};
    CHECK(nuce_saved_read(s, g, 1, &f));
    CHECK(nuce_saved_free(s));
  } else {
    for (int64_t i = lo[1]; i < lo[1] + sz[1]; i++)
      for (int64_t j = lo[2]; j < lo[2] + sz[2]; j++)
        u[AT(i, j)] = (i == 0 || j == 0) ? 1.0 : (double)((i * 7 + j * 3) % 11) / 11.0;
  }
  for (; step < steps; step++) {
    nuce_field f = {u, sizeof(double), {pad[0], pad[1], pad[2]}};
    CHECK(nuce_grid_exchange(g, 1, &f));
    for (int64_t i = lo[1]; i < lo[1] + sz[1]; i++)
      for (int64_t j = lo[2]; j < lo[2] + sz[2]; j++)
        v[AT(i, j)] = (i == 0 || j == 0 || i == NY - 1 || j == NX - 1)
                          ? u[AT(i, j)]
                          : 0.25 * (u[AT(i - 1, j)] + u[AT(i + 1, j)] + u[AT(i, j - 1)] + u[AT(i, j + 1)]);
    double *t = u; u = v; v = t;
    if (step + 1 == save_at) {
      int64_t next = step + 1;
      nuce_field sf = {u, sizeof(double), {pad[0], pad[1], pad[2]}};
      CHECK(nuce_grid_save(g, file, 1, &sf, &next, sizeof next));
    }
    if (step + 1 == leave_at) {
      int nleaving, released;
      CHECK(nuce_depart(b, rank == leave_rank, &nleaving));
      CHECK(nuce_grid_depart(b, g));                /* a move is pending */
      int64_t nlo[3], nsz[3];
      CHECK(nuce_grid_box(g, me, nlo, nsz));        /* the new box: empty if leaving */
      CHECK(nuce_grid_padded_len(g, pad, &len));
      double *nu = calloc(len ? len : 1, sizeof(double)), *nv = calloc(len ? len : 1, sizeof(double));
      nuce_field of = {u, sizeof(double), {pad[0], pad[1], pad[2]}}, nf = {nu, sizeof(double), {pad[0], pad[1], pad[2]}};
      CHECK(nuce_grid_move(g, 1, &of, &nf));
      free(u); free(v);
      u = nu; v = nv;
      memcpy(lo, nlo, sizeof lo); memcpy(sz, nsz, sizeof sz);
      d2 = sz[2] + 2;
      CHECK(nuce_depart_finish(b, 1, &g, &comm, &released));
      if (released) {
        printf("restart: rank %d released\n", rank);
        free(u); free(v);
        CHECK(nuce_grid_free(g));
        CHECK(nuce_balancer_free(b));
        MPI_Finalize();
        return 0;
      }
      MPI_Comm_rank(comm, &me);
      CHECK(nuce_grid_box(g, me, lo, sz));          /* the same box, in the new numbering */
    }
  }
  uint64_t h = 0, total = 0;
  for (int64_t i = lo[1]; i < lo[1] + sz[1]; i++)
    for (int64_t j = lo[2]; j < lo[2] + sz[2]; j++) {
      uint64_t bits;
      memcpy(&bits, &u[AT(i, j)], sizeof bits);
      h += mix((uint64_t)(i * NX + j) ^ mix(bits));
    }
  MPI_Allreduce(&h, &total, 1, MPI_UINT64_T, MPI_SUM, comm);
  int ranks; MPI_Comm_size(comm, &ranks);
  if (me == 0) printf("restart: steps %lld ranks %d hash %016llx\n", (long long)steps, ranks, (unsigned long long)total);
  free(u); free(v);
  CHECK(nuce_grid_free(g));
  CHECK(nuce_balancer_free(b));
  if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
