/* heat2d.c — the Jacobi heat-diffusion solver of examples/heat2d.rs, in C,
 * load-balanced by nuce through its C API (docs/c-api.md).
 *
 * The rows × cols grid (row 0 held at 1, a Gaussian bump inside, Dirichlet
 * boundary) is decomposed in proportion to the ranks' measured speeds. The
 * solver runs `phases` phases of `iters` iterations (4-point update, ghost
 * width 1); between phases nuce_maybe_remap_ahead measures every rank's compute
 * time by itself and remaps the grid when it pays off. At the end the grid
 * is gathered on rank 0 and compared bit for bit with a serial solve.
 *
 * `--slowdown R:F@P[,…]` makes rank R really do F times the work from phase
 * P on (nuce is not told: it measures). `--record` reports every phase with
 * nuce_record_phase instead of nuce's automatic timing.
 *
 *   PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
 *   mpicc -O2 examples/c/heat2d.c $(pkg-config --cflags --libs nuce) -lm -Wl,-rpath,$PREFIX/lib -o heat2d
 *   mpirun -np 2 ./heat2d --rows 256 --cols 256 --phases 6 --iters 40 --slowdown 1:3@2
 */
#include <math.h>
#include <mpi.h>
#include <nuce.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

/* Every nuce call returns the same code on every rank when it fails, so
 * every rank stops here together and MPI ends cleanly. */
static void check(int rc, const char *what) {
  if (rc != NUCE_OK) {
    if (rank == 0)
      fprintf(stderr, "heat2d: %s failed (code %d): %s\n", what, rc, nuce_last_error());
    MPI_Finalize();
    exit(2);
  }
}
#define CHECK(call) check((call), #call)

/* --slowdown items: rank R does F times the work from phase P on. */
struct slow {
  int rank, factor, phase;
};

static int factor_at(const struct slow *s, int n, int r, int phase) {
  int best = -1, f = 1;
  for (int i = 0; i < n; i++)
    if (s[i].rank == r && s[i].phase <= phase && s[i].phase > best) {
      best = s[i].phase;
      f = s[i].factor > 1 ? s[i].factor : 1;
    }
  return f;
}

static double initial(int64_t r, int64_t c, int64_t rows, int64_t cols) {
  if (r == 0) return 1.0;
  double x = (double)r / (double)rows, y = (double)c / (double)cols;
  double dx = x - 0.6, dy = y - 0.3;
  return 0.5 * exp(-((dx * dx + dy * dy) * 40.0));
}

/* One Jacobi sweep of the m × n cells at global (row0, col0) from the padded
 * block `src` (ghost width 1, row stride n + 2) into `dst` (m × n). Global
 * boundary cells keep their value. */
static void sweep(const double *src, double *dst, int64_t m, int64_t n, int64_t row0,
                  int64_t col0, int64_t rows, int64_t cols) {
  const int64_t s = n + 2;
  for (int64_t i = 0; i < m; i++) {
    int64_t gr = row0 + i;
    for (int64_t j = 0; j < n; j++) {
      int64_t gc = col0 + j;
      const double *p = src + (i + 1) * s + (j + 1);
      dst[i * n + j] = (gr == 0 || gc == 0 || gr + 1 == rows || gc + 1 == cols)
                           ? p[0]
                           : 0.25 * (p[-s] + p[s] + p[-1] + p[1]);
    }
  }
}

/* Copies the m × n block `src` into the interior of the padded `dst`. */
static void put_interior(double *dst, const double *src, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; i++) memcpy(dst + (i + 1) * (n + 2) + 1, src + i * n, n * sizeof(double));
}

static double *serial(int64_t rows, int64_t cols, int64_t iters) {
  double *u = calloc((rows + 2) * (cols + 2), sizeof(double));
  double *next = malloc(rows * cols * sizeof(double));
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) next[r * cols + c] = initial(r, c, rows, cols);
  put_interior(u, next, rows, cols);
  for (int64_t t = 0; t < iters; t++) {
    sweep(u, next, rows, cols, 0, 0, rows, cols);
    put_interior(u, next, rows, cols);
  }
  return u;
}

/* This rank's block: the application's own buffers, sized from nuce's layout. */
struct block {
  int64_t rect[4]; /* row, col, rows, cols */
  size_t len;      /* elements of the padded block */
  double *u, *next, *scratch;
};

/* (Re)allocates the block for the array's current layout and copies nuce's
 * block into it: after the scatter and after every remap. */
static void load_block(nuce_array *a, struct block *blk) {
  CHECK(nuce_array_rect(a, rank, blk->rect));
  CHECK(nuce_array_padded_len(a, &blk->len));
  free(blk->u);
  free(blk->next);
  free(blk->scratch);
  blk->u = malloc((blk->len ? blk->len : 1) * sizeof(double));
  blk->next = malloc((size_t)(blk->rect[2] * blk->rect[3] + 1) * sizeof(double));
  blk->scratch = malloc((size_t)(blk->rect[2] * blk->rect[3] + 1) * sizeof(double));
  CHECK(nuce_array_read(a, blk->u, blk->len));
}

int main(int argc, char **argv) {
  int64_t rows = 256, cols = 256, phases = 6, iters = 40;
  struct slow slow[16];
  int nslow = 0, record = 0, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : "";
    if (!strcmp(argv[i], "--rows")) rows = atoll(v), i++;
    else if (!strcmp(argv[i], "--cols")) cols = atoll(v), i++;
    else if (!strcmp(argv[i], "--phases")) phases = atoll(v), i++;
    else if (!strcmp(argv[i], "--iters")) iters = atoll(v), i++;
    else if (!strcmp(argv[i], "--record")) record = 1;
    else if (!strcmp(argv[i], "--slowdown")) {
      char *spec = strdup(v), *save = NULL;
      for (char *t = strtok_r(spec, ",", &save); t && nslow < 16; t = strtok_r(NULL, ",", &save)) {
        struct slow s = {0, 1, 0};
        if (sscanf(t, "%d:%d@%d", &s.rank, &s.factor, &s.phase) < 2) {
          if (rank == 0) fprintf(stderr, "heat2d: bad --slowdown item %s: expected R:F@P\n", t);
          MPI_Finalize();
          return 2;
        }
        slow[nslow++] = s;
      }
      free(spec);
      i++;
    } else {
      if (rank == 0) fprintf(stderr, "heat2d: unknown argument %s\n", argv[i]);
      MPI_Finalize();
      return 2;
    }
  }

  nuce_balancer *b = NULL;
  CHECK(nuce_balancer_create(MPI_COMM_WORLD, &b));
  CHECK(nuce_measure(b)); /* built-in kernel: the first plan's speeds */

  double *global = NULL;
  if (rank == 0) {
    global = malloc(rows * cols * sizeof(double));
    for (int64_t r = 0; r < rows; r++)
      for (int64_t c = 0; c < cols; c++) global[r * cols + c] = initial(r, c, rows, cols);
  }
  nuce_array *a = NULL;
  CHECK(nuce_array_scatter(b, rows, cols, sizeof(double), 1, global, rank == 0 ? rows * cols : 0, &a));
  struct block blk = {{0}, 0, NULL, NULL, NULL};
  load_block(a, &blk);

  { /* The first split, planned for the measured speeds: every rank's cells. */
    long long cells = (long long)(blk.rect[2] * blk.rect[3]);
    long long *all = rank == 0 ? malloc(size * sizeof(long long)) : NULL;
    CHECK(nuce_waiting_begin()); /* not compute */
    MPI_Gather(&cells, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    CHECK(nuce_waiting_end());
    if (rank == 0) {
      printf("heat2d: first split:");
      for (int r = 0; r < size; r++) printf(" %lld", all[r]);
      printf("\n");
      free(all);
    }
  }
  if (rank == 0) printf("%5s %12s %12s %6s %-11s %9s  speeds\n", "phase", "s/iter", "compute/iter", "remap", "rule", "imbalance");
  int remaps = 0;
  double *speeds = malloc(size * sizeof(double));
  for (int64_t phase = 0; phase < phases; phase++) {
    int factor = factor_at(slow, nslow, rank, (int)phase);
    int64_t m = blk.rect[2], n = blk.rect[3];
    double t0 = MPI_Wtime(), compute = 0.0;
    for (int64_t it = 0; it < iters; it++) {
      CHECK(nuce_array_exchange_ghosts(a, blk.u, blk.len));
      double tc = MPI_Wtime();
      for (int f = 0; f < factor; f++) {
        sweep(blk.u, blk.next, m, n, blk.rect[0], blk.rect[1], rows, cols);
        __asm__ volatile("" ::: "memory"); /* every repetition really computes */
      }
      /* The copy back is part of an iteration's work too: a slowed rank
       * repeats it (into scratch) so that its per-cell cost is really F×. */
      for (int f = 1; f < factor; f++) {
        memcpy(blk.scratch, blk.next, (size_t)(m * n) * sizeof(double));
        __asm__ volatile("" ::: "memory");
      }
      put_interior(blk.u, blk.next, m, n);
      compute += MPI_Wtime() - tc;
    }
    double per_iter[2] = {(MPI_Wtime() - t0) / (double)iters, compute / (double)iters}, worst[2];
    if (record) CHECK(nuce_record_phase(b, (double)(m * n * iters), compute));
    int remapped = 0;
    /* A remap must pay off within the iterations left (at least one phase). */
    int64_t ahead = iters * (phases - phase - 1 > 1 ? phases - phase - 1 : 1);
    CHECK(nuce_maybe_remap_ahead(b, a, iters, ahead, blk.u, blk.len, &remapped));
    if (remapped) {
      load_block(a, &blk); /* ghosts are refreshed by the next exchange */
      remaps++;
    }
    CHECK(nuce_speeds(b, speeds, size));
    /* Why it remapped or not: the rule and the measured imbalance before. */
    nuce_decision d;
    CHECK(nuce_last_decision(b, &d));
    /* Right after a nuce collective, so that this reduction hardly waits
     * (time outside nuce's calls counts as compute for its automatic timing). */
    MPI_Reduce(per_iter, worst, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      printf("%5lld %12.6f %12.6f %6s %-11s %9.3f ", (long long)phase, worst[0], worst[1], remapped ? "yes" : "no",
             nuce_rule_name(d.rule), d.imbalance_current);
      for (int r = 0; r < size; r++) printf(" %.3g", speeds[r]);
      printf("\n");
    }
  }

  double *result = rank == 0 ? malloc(rows * cols * sizeof(double)) : NULL;
  CHECK(nuce_array_gather(a, blk.u, blk.len, result, rank == 0 ? rows * cols : 0));
  int ok = 1;
  if (rank == 0) {
    double *s = serial(rows, cols, phases * iters), maxdiff = 0.0;
    int64_t differ = 0;
    for (int64_t r = 0; r < rows; r++)
      for (int64_t c = 0; c < cols; c++) {
        double x = result[r * cols + c], y = s[(r + 1) * (cols + 2) + c + 1];
        if (memcmp(&x, &y, sizeof x) != 0) differ++;
        if (fabs(x - y) > maxdiff) maxdiff = fabs(x - y);
      }
    ok = differ == 0;
    printf("heat2d: nuce %s, %d ranks, %lldx%lld, %lld phases of %lld iterations\n", nuce_version(), size,
           (long long)rows, (long long)cols, (long long)phases, (long long)iters);
    printf("heat2d: remaps: %d\n", remaps);
    if (ok)
      printf("heat2d: serial check: identical\n");
    else
      printf("heat2d: serial check: FAILED (%lld cells differ, max |diff| = %g)\n", (long long)differ, maxdiff);
    free(s);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(result);
  free(global);
  free(speeds);
  free(blk.u);
  free(blk.next);
  free(blk.scratch);
  CHECK(nuce_array_free(a));
  CHECK(nuce_balancer_free(b));
  MPI_Finalize();
  return ok ? 0 : 1;
}
