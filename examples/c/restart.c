/* restart.c: a 2D Jacobi solver whose ranks change while it runs: saved and
 * resumed on another number of ranks (docs/c-api.md, "Save and restart on another
 * number of ranks"), a rank leaving mid-run ("Ranks that leave"), or standby ranks
 * joining mid-run ("Ranks that join").
 *
 *   mpirun -np P restart STEPS                   run STEPS sweeps
 *   mpirun -np P restart STEPS SAVE_AT FILE      ... and save after sweep SAVE_AT
 *   mpirun -np Q restart STEPS --resume FILE     resume from FILE up to STEPS
 *   mpirun -np P restart STEPS --leave R AT      rank R leaves after sweep AT
 *   mpirun -np P restart STEPS --leave-signal R AT  the same, told by a signal:
 *                                                every rank catches SIGUSR1 as its
 *                                                leave notice (nuce_catch_leave_signal),
 *                                                rank R gets one after sweep AT and
 *                                                every rank calls nuce_depart(b, 0, ..)
 *   mpirun -np P restart STEPS --join K AT       the last K ranks wait in a standby
 *                                                pool and join after sweep AT
 *
 * The grid is n = {1, NY, NX} on the program's own buffers; the saved step
 * travels as the save's user bytes. The save is a checkpoint
 * (nuce_grid_checkpoint): it holds the balancer's speeds, so a resume on as
 * many ranks as saved starts from them (the saved plan, nothing measured;
 * it prints "restart: saved speeds of N ranks, used"), one on another
 * number measures its ranks. Prints "restart: steps S ranks P hash H",
 * H a hash of every cell's bits that does not depend on the decomposition: a
 * resumed run, one a rank left or ranks joined, prints the same H as a run that
 * never changed. A rank that leaves prints "restart: rank R released". */
#include <mpi.h>
#include <nuce.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(call) do { int rc_ = (call); if (rc_ != NUCE_OK) { \
  fprintf(stderr, "rank %d: %s failed: %d %s\n", rank, #call, rc_, nuce_last_error()); \
  MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

enum { NY = 90, NX = 70 };
static int rank;

/* This rank's part: its box, its two padded buffers (u current, v next). */
typedef struct {
  int64_t lo[3], sz[3];
  double *u, *v;
} part;

static const int64_t pad[3] = {0, 1, 1};

static size_t at(const part *p, int64_t i, int64_t j) {
  return (size_t)((i - p->lo[1] + 1) * (p->sz[2] + 2) + (j - p->lo[2] + 1));
}

/* Buffers for rank me's box of g (the new box while a move is pending). */
static void allocate(nuce_grid *g, int me, part *p) {
  size_t len;
  CHECK(nuce_grid_box(g, me, p->lo, p->sz));
  CHECK(nuce_grid_padded_len(g, pad, &len));
  p->u = calloc(len ? len : 1, sizeof(double));
  p->v = calloc(len ? len : 1, sizeof(double));
}

static nuce_field field(double *data) {
  nuce_field f = {data, sizeof(double), {pad[0], pad[1], pad[2]}};
  return f;
}

/* Completes g's pending move from p (NULL: this rank held nothing) into new buffers. */
static void move(nuce_grid *g, int me, part *p, const part *old) {
  nuce_field of = field(old ? old->u : NULL);
  allocate(g, me, p);
  nuce_field nf = field(p->u);
  CHECK(nuce_grid_move(g, 1, &of, &nf));
}

static void release(part *p) { free(p->u); free(p->v); }

static uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int size; MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 2 && argc != 4 && argc != 5) {
    if (rank == 0) fprintf(stderr, "usage: restart STEPS [SAVE_AT FILE | --resume FILE | --leave R AT | --leave-signal R AT | --join K AT]\n");
    MPI_Finalize();
    return 2;
  }
  const int64_t steps = atoll(argv[1]);
  const int resume = argc == 4 && strcmp(argv[2], "--resume") == 0;
  const int64_t save_at = argc == 4 && !resume ? atoll(argv[2]) : -1;
  const char *file = argc == 4 ? argv[3] : NULL;
  const int by_signal = argc == 5 && strcmp(argv[2], "--leave-signal") == 0;
  const int leaving = by_signal || (argc == 5 && strcmp(argv[2], "--leave") == 0);
  const int joining = argc == 5 && strcmp(argv[2], "--join") == 0;
  const int leave_rank = leaving ? atoi(argv[3]) : -1;
  const int join_count = joining ? atoi(argv[3]) : 0;
  const int64_t change_at = argc == 5 ? atoll(argv[4]) : -1;
  MPI_Comm comm = MPI_COMM_WORLD; /* the ranks that run: smaller after a leave, larger after a join */
  int me = rank;                  /* this rank in comm */
  nuce_pool *pool = NULL;
  nuce_balancer *b;
  nuce_grid *g;
  part p;
  int64_t step = 0;

  if (by_signal) CHECK(nuce_catch_leave_signal(SIGUSR1)); /* a preemption notice */
  if (joining) {
    /* The last join_count ranks wait in the pool; the others run. */
    int standby = rank >= size - join_count;
    CHECK(nuce_pool_create(MPI_COMM_WORLD, standby, &comm, &pool));
    if (standby) {
      int joined, ngrids;
      CHECK(nuce_pool_wait(pool, &joined, &comm, &b, 1, &g, &ngrids));
      if (!joined) { CHECK(nuce_pool_free(pool)); MPI_Finalize(); return 0; }
      MPI_Comm_rank(comm, &me);
      move(g, me, &p, NULL);                      /* this rank's first cells */
      MPI_Bcast(&step, 1, MPI_INT64_T, 0, comm);  /* the application's state */
      goto run;
    }
    MPI_Comm_rank(comm, &me);
  }
  CHECK(nuce_balancer_create(comm, &b));
  nuce_saved *s = NULL;
  if (resume) {
    CHECK(nuce_saved_open(b, file, &s));
    int nspeeds;
    CHECK(nuce_saved_speeds(s, 0, NULL, &nspeeds));
    /* On as many ranks as saved, nuce_saved_grid_create starts from the
       saved speeds when none were measured; on another number, measure. */
    if (nspeeds != size) CHECK(nuce_measure(b));
    else if (me == 0) printf("restart: saved speeds of %d ranks, used\n", nspeeds);
    const void *user; size_t len;
    CHECK(nuce_saved_user(s, &user, &len));
    if (len != sizeof step) { fprintf(stderr, "unexpected user bytes\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
    memcpy(&step, user, sizeof step);
    CHECK(nuce_saved_grid_create(s, b, &g)); /* planned for this run's ranks and speeds */
  } else {
    int64_t n[3] = {1, NY, NX};
    CHECK(nuce_measure(b));
    CHECK(nuce_grid_create(b, n, 1, NUCE_STENCIL_FACES, &g));
  }
  allocate(g, me, &p);
  if (resume) {
    nuce_field f = field(p.u);
    CHECK(nuce_saved_read(s, g, 1, &f));
    CHECK(nuce_saved_free(s));
  } else {
    for (int64_t i = p.lo[1]; i < p.lo[1] + p.sz[1]; i++)
      for (int64_t j = p.lo[2]; j < p.lo[2] + p.sz[2]; j++)
        p.u[at(&p, i, j)] = (i == 0 || j == 0) ? 1.0 : (double)((i * 7 + j * 3) % 11) / 11.0;
  }
run:
  for (; step < steps; step++) {
    nuce_field f = field(p.u);
    CHECK(nuce_grid_exchange(g, 1, &f));
    for (int64_t i = p.lo[1]; i < p.lo[1] + p.sz[1]; i++)
      for (int64_t j = p.lo[2]; j < p.lo[2] + p.sz[2]; j++)
        p.v[at(&p, i, j)] = (i == 0 || j == 0 || i == NY - 1 || j == NX - 1)
                                ? p.u[at(&p, i, j)]
                                : 0.25 * (p.u[at(&p, i - 1, j)] + p.u[at(&p, i + 1, j)] +
                                          p.u[at(&p, i, j - 1)] + p.u[at(&p, i, j + 1)]);
    double *t = p.u; p.u = p.v; p.v = t;
    int64_t next = step + 1;
    if (next == save_at) {
      nuce_field sf = field(p.u);
      CHECK(nuce_grid_checkpoint(b, g, file, 1, &sf, &next, sizeof next));
    }
    if (next == change_at && leaving) {
      int nleaving, released;
      part old = p;
      if (by_signal && rank == leave_rank) kill(getpid(), SIGUSR1); /* the notice arrives */
      CHECK(nuce_depart(b, !by_signal && rank == leave_rank, &nleaving));
      CHECK(nuce_grid_depart(b, g));               /* a move is pending */
      move(g, me, &p, &old);                       /* the new box: empty when leaving */
      release(&old);
      MPI_Comm left;
      CHECK(nuce_depart_finish(b, 1, &g, &left, &released));
      if (released) {
        printf("restart: rank %d released\n", rank);
        release(&p);
        CHECK(nuce_grid_free(g));
        CHECK(nuce_balancer_free(b));
        MPI_Finalize();
        return 0;
      }
      if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
      comm = left;
      MPI_Comm_rank(comm, &me);
      CHECK(nuce_grid_box(g, me, p.lo, p.sz));     /* the same box, in the new numbering */
    }
    if (next == change_at && joining) {
      MPI_Comm grown;
      part old = p;
      CHECK(nuce_pool_admit(pool, b, join_count, 1, &g, &grown)); /* a move is pending */
      MPI_Comm_free(&comm);
      comm = grown;
      MPI_Comm_rank(comm, &me);
      move(g, me, &p, &old);
      release(&old);
      MPI_Bcast(&next, 1, MPI_INT64_T, 0, comm);   /* what the new ranks need */
    }
  }
  uint64_t h = 0, total = 0;
  for (int64_t i = p.lo[1]; i < p.lo[1] + p.sz[1]; i++)
    for (int64_t j = p.lo[2]; j < p.lo[2] + p.sz[2]; j++) {
      uint64_t bits;
      memcpy(&bits, &p.u[at(&p, i, j)], sizeof bits);
      h += mix((uint64_t)(i * NX + j) ^ mix(bits));
    }
  MPI_Allreduce(&h, &total, 1, MPI_UINT64_T, MPI_SUM, comm);
  int ranks; MPI_Comm_size(comm, &ranks);
  if (me == 0) printf("restart: steps %lld ranks %d hash %016llx\n", (long long)steps, ranks, (unsigned long long)total);
  if (pool) {
    CHECK(nuce_pool_release(pool, b));
    CHECK(nuce_pool_free(pool));
  }
  release(&p);
  CHECK(nuce_grid_free(g));
  CHECK(nuce_balancer_free(b));
  if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
