/* p4est with nuce: a 2D forest refined around a point, each quadrant
 * carrying a cost (its weight), repartitioned along p4est's space-filling
 * curve by nuce_plan_1d_weighted (the counts p4est_partition_given takes)
 * for the speeds nuce measured from the ranks' timed phases.
 *
 *   mpicc p4est_balance.c $(pkg-config --cflags --libs nuce) -lp4est -lsc -lm -o p4est_balance
 *   mpirun -np 3 ./p4est_balance --speeds 1,2,3          # check: counts and weights follow them
 *   mpirun -np 2 ./p4est_balance --steps 40 --slow 1:3 --mode nuce     # time per step
 *   mpirun -np 2 ./p4est_balance --steps 40 --slow 1:3 --mode default  # p4est_partition's
 *
 * Check mode (--speeds): the forest is partitioned for the given speeds;
 * every rank checks that the counts sum to the global number of
 * quadrants, that p4est then holds counts[rank] of them, and that each
 * rank's summed weight is within the heaviest quadrant of its share by
 * speed; rank 0 prints "p4est_balance: check ok".
 *
 * Timing mode (--steps): every step does work proportional to each local
 * quadrant's weight (rank R repeats it F times with --slow R:F) and ends
 * with an all-reduce, as a solver's residual would; every --period steps
 * the "nuce" mode records the rank's phase (nuce_record_phase) and
 * repartitions with nuce's counts, the "default" mode keeps
 * p4est_partition's equal quadrant counts. Rank 0 prints the time per
 * step.
 */
#include <p4est_algorithms.h>
#include <p4est_extended.h>
#include <nuce.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NUCE_CALL(call)                                                                        \
  do {                                                                                         \
    int rc_ = (call);                                                                          \
    if (rc_ != NUCE_OK) {                                                                      \
      fprintf(stderr, "p4est_balance: %s failed (%d): %s\n", #call, rc_, nuce_last_error()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                            \
    }                                                                                          \
  } while (0)

static int max_level = 9;

/* Refine every quadrant whose centre lies near (0.3, 0.3), up to max_level. */
static int near_point(p4est_t *p4est, p4est_topidx_t tree, p4est_quadrant_t *q) {
  (void)p4est;
  (void)tree;
  if (q->level >= max_level) return 0;
  double h = (double)P4EST_QUADRANT_LEN(q->level) / P4EST_ROOT_LEN;
  double x = (double)q->x / P4EST_ROOT_LEN + h / 2, y = (double)q->y / P4EST_ROOT_LEN + h / 2;
  return hypot(x - 0.3, y - 0.3) < 0.1 + h;
}

/* A quadrant's cost: finer quadrants take more sub-steps. */
static double weight_of(const p4est_quadrant_t *q) { return 1.0 + (q->level % 3); }

/* The weights of this rank's quadrants in curve order (n of them). */
static double *local_weights(p4est_t *p4est, p4est_locidx_t *n) {
  *n = p4est->local_num_quadrants;
  double *w = malloc((*n ? (size_t)*n : 1) * sizeof *w);
  p4est_locidx_t k = 0;
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tree = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tree->quadrants.elem_count; i++)
      w[k++] = weight_of(p4est_quadrant_array_index(&tree->quadrants, i));
  }
  return w;
}

/* Repartitions for the balancer's speeds; returns the counts (size of them). */
static void repartition(p4est_t *p4est, nuce_balancer *b, int64_t iterations, int64_t *counts,
                        double *imbalance) {
  p4est_locidx_t n;
  double *w = local_weights(p4est, &n);
  int size = p4est->mpisize;
  NUCE_CALL(nuce_plan_1d_weighted(b, w, n, iterations, counts, (size_t)size, imbalance));
  free(w);
  p4est_locidx_t *given = malloc((size_t)size * sizeof *given);
  for (int r = 0; r < size; r++) given[r] = (p4est_locidx_t)counts[r];
  p4est_partition_given(p4est, given);
  free(given);
}

/* Work of `units` weight units (a few hundred flops each). */
static double work(double units) {
  double s = 0.0;
  long n = (long)(units * 200.0);
  for (long i = 0; i < n; i++) s += sin((double)i * 1e-3);
  return s;
}

static int check(p4est_t *p4est, nuce_balancer *b, const char *speeds) {
  int size = p4est->mpisize, rank = p4est->mpirank;
  double *s = calloc((size_t)size, sizeof *s);
  const char *p = speeds;
  for (int r = 0; r < size && p; r++) {
    s[r] = atof(p);
    p = strchr(p, ',');
    if (p) p++;
  }
  NUCE_CALL(nuce_set_speeds(b, s, (size_t)size));
  int64_t *counts = malloc((size_t)size * sizeof *counts);
  double imbalance;
  repartition(p4est, b, 0, counts, &imbalance);
  p4est_locidx_t n;
  double *w = local_weights(p4est, &n), mine = 0.0, heaviest = 0.0;
  for (p4est_locidx_t k = 0; k < n; k++) {
    mine += w[k];
    if (w[k] > heaviest) heaviest = w[k];
  }
  double *all = malloc((size_t)size * sizeof *all), total = 0.0, ssum = 0.0, wmax;
  MPI_Allgather(&mine, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, p4est->mpicomm);
  MPI_Allreduce(&heaviest, &wmax, 1, MPI_DOUBLE, MPI_MAX, p4est->mpicomm);
  int64_t sum = 0;
  for (int r = 0; r < size; r++) {
    total += all[r];
    ssum += s[r];
    sum += counts[r];
  }
  int ok = sum == (int64_t)p4est->global_num_quadrants && counts[rank] == (int64_t)n;
  for (int r = 0; r < size; r++) ok &= fabs(all[r] - total * s[r] / ssum) <= wmax + 1e-9;
  int all_ok;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, p4est->mpicomm);
  if (rank == 0) {
    printf("p4est_balance: %lld quadrants, counts", (long long)p4est->global_num_quadrants);
    for (int r = 0; r < size; r++) printf(" %lld", (long long)counts[r]);
    printf(", weights");
    for (int r = 0; r < size; r++) printf(" %g", all[r]);
    printf(", imbalance %.4f\n", imbalance);
    printf("p4est_balance: check %s\n", all_ok ? "ok" : "FAILED");
  }
  free(s);
  free(counts);
  free(w);
  free(all);
  return all_ok ? 0 : 1;
}

static void timing(p4est_t *p4est, nuce_balancer *b, int steps, int period, int use_nuce,
                   int slow_rank, double slow) {
  int size = p4est->mpisize, rank = p4est->mpirank;
  int64_t *counts = malloc((size_t)size * sizeof *counts);
  double compute = 0.0, done = 0.0, sink = 0.0;
  int repartitions = 0;
  MPI_Barrier(p4est->mpicomm);
  double t0 = MPI_Wtime();
  for (int step = 1; step <= steps; step++) {
    p4est_locidx_t n;
    double *w = local_weights(p4est, &n), units = 0.0;
    for (p4est_locidx_t k = 0; k < n; k++) units += w[k];
    free(w);
    double c0 = MPI_Wtime();
    int reps = rank == slow_rank ? (int)slow : 1;
    for (int r = 0; r < reps; r++) sink += work(units);
    compute += MPI_Wtime() - c0;
    done += units;
    double residual;
    MPI_Allreduce(&sink, &residual, 1, MPI_DOUBLE, MPI_SUM, p4est->mpicomm);
    if (use_nuce && step % period == 0 && step < steps) {
      NUCE_CALL(nuce_record_phase(b, done, compute));
      repartition(p4est, b, period, counts, NULL);
      done = compute = 0.0;
      repartitions++;
    }
  }
  double t = (MPI_Wtime() - t0) / steps;
  if (rank == 0) {
    printf("p4est_balance: mode %s, %lld quadrants, %d steps, %d repartitions, %.3f ms per step\n",
           use_nuce ? "nuce" : "default", (long long)p4est->global_num_quadrants, steps,
           repartitions, t * 1e3);
    printf("p4est_balance: local quadrants on rank 0: %lld (sink %g)\n",
           (long long)p4est->local_num_quadrants, sink > 0 ? 1.0 : 0.0);
  }
  free(counts);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *speeds = NULL, *mode = "nuce";
  int steps = 0, period = 4, slow_rank = -1;
  double slow = 1.0;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--speeds") && a + 1 < argc) speeds = argv[++a];
    else if (!strcmp(argv[a], "--steps") && a + 1 < argc) steps = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--period") && a + 1 < argc) period = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--level") && a + 1 < argc) max_level = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--mode") && a + 1 < argc) mode = argv[++a];
    else if (!strcmp(argv[a], "--slow") && a + 1 < argc) {
      slow_rank = atoi(argv[++a]);
      const char *f = strchr(argv[a], ':');
      slow = f ? atof(f + 1) : 1.0;
    }
  }
  sc_init(MPI_COMM_WORLD, 0, 0, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  p4est_connectivity_t *conn = p4est_connectivity_new_unitsquare();
  p4est_t *p4est = p4est_new_ext(MPI_COMM_WORLD, conn, 0, 3, 1, 0, NULL, NULL);
  p4est_refine(p4est, 1, near_point, NULL);
  p4est_partition(p4est, 0, NULL);
  nuce_balancer *b = NULL;
  NUCE_CALL(nuce_balancer_create(MPI_COMM_WORLD, &b));
  int rc = 0;
  if (speeds) rc = check(p4est, b, speeds);
  if (steps > 0) timing(p4est, b, steps, period, !strcmp(mode, "nuce"), slow_rank, slow);
  nuce_balancer_free(b);
  p4est_destroy(p4est);
  p4est_connectivity_destroy(conn);
  sc_finalize();
  MPI_Finalize();
  return rc;
}
