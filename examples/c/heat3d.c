/* heat3d.c — a 3D heat-diffusion solver (7-point Jacobi, variable
 * conductivity) on the application's own buffers, load-balanced by nuce's
 * grid API (docs/c-api.md, "Grids on your own buffers (2D and 3D)").
 *
 * The nx × ny × nz grid (plane x = 0 held at 1, a Gaussian bump inside,
 * Dirichlet boundary) carries two fields of doubles: the temperature u and
 * a conductivity k. Both live in this program's malloc'ed buffers with one
 * halo cell on each side; nuce exchanges their ghosts in place (both in one
 * call, begun before the interior update and ended before the shell), and
 * when a remap pays off it moves them into new buffers this program
 * allocates for its new box. At the end rank 0 gathers the grid (with plain
 * MPI) and compares it bit for bit with a serial solve; it prints a checksum
 * (the bits of the sum of all cells, x slowest) that examples/fortran/heat3d.f90
 * prints too for the same grid.
 *
 * `--slowdown R:F@P[,…]` makes rank R really do F times the work from phase
 * P on (nuce is not told: it measures).
 *
 * `--cost W` gives every cell some "chemistry" (a compute-bound loop that
 * leaves the solution alone), W times as much in a band of x-planes
 * (nx/4 <= x < nx/2), and tells nuce so: the program gives nuce_grid_set_cost one
 * cost per cell of its box (W in the band, 1 elsewhere) after creating the
 * grid and again for its new box after each move, and nuce balances the
 * summed cost per rank instead of the cell counts. At the end rank 0 prints
 * `heat3d: cost balance: max/mean M`, the largest rank's summed cost over
 * the mean. `--move-every K` moves the band by nx/4 planes (wrapping
 * around) every K phases: the program sets its box's cost again when the
 * band moved, and the next balance point follows the new cost.
 *
 *   PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
 *   mpicc -O2 examples/c/heat3d.c $(pkg-config --cflags --libs nuce) -lm -Wl,-rpath,$PREFIX/lib -o heat3d
 *   mpirun -np 2 ./heat3d --nx 48 --ny 48 --nz 48 --phases 6 --iters 10 --slowdown 1:3@1
 */
#include <math.h>
#include <mpi.h>
#include <nuce.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

/* Every nuce call returns the same code on every rank when it fails. */
static void check(int rc, const char *what) {
  if (rc != NUCE_OK) {
    fprintf(stderr, "heat3d: rank %d: %s failed (code %d): %s\n", rank, what, rc, nuce_last_error());
    MPI_Finalize();
    exit(2);
  }
}
#define CHECK(call) check((call), #call)

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

static int64_t N[3]; /* the global grid */

static double initial(int64_t i, int64_t j, int64_t k) {
  if (i == 0) return 1.0;
  double x = (double)i / N[0], y = (double)j / N[1], z = (double)k / N[2];
  double dx = x - 0.6, dy = y - 0.4, dz = z - 0.5;
  return 0.5 * exp(-(dx * dx + dy * dy + dz * dz) * 30.0);
}

/* --cost: the expensive band's cells cost W, the others 1. */
static int cost_w = 1;

/* --move-every: the band starts at plane band_lo and is nx/4 planes wide
 * (at least 1), wrapping around at nx. */
static int64_t band_lo = -1;

static int64_t band_width(void) { return N[0] / 4 > 0 ? N[0] / 4 : 1; }

static int weight(int64_t i) {
  int64_t lo = band_lo < 0 ? band_width() : band_lo;
  return (i - lo + N[0]) % N[0] < band_width() ? cost_w : 1;
}

/* --cost: a cell's chemistry, 64·w dependent multiply-adds from the cell's
 * value (far more than its diffusion update, so that the cell's work is
 * about w times a plain cell's); the result goes to a sink and leaves the
 * solution alone. */
static volatile double sink;

static void chemistry(double x, int w) {
  for (int r = 0; r < 64 * w; r++) x = x * 0.999 + 0.001;
  sink = x;
}

static double conductivity(int64_t i, int64_t j, int64_t k) { return 0.05 + 0.02 * (double)((i * 7 + j * 3 + k) % 5); }

/* A block of cells with one halo cell on each side: box lo/size, padded
 * extents d, and the application's buffers. */
struct block {
  int64_t lo[3], size[3], d[3];
  size_t len;
  double *u, *unew, *k;
};

static const int64_t PAD[3] = {1, 1, 1};

static size_t at(const struct block *b, int64_t i, int64_t j, int64_t k) {
  return (size_t)(((i + PAD[0]) * b->d[1] + (j + PAD[1])) * b->d[2] + (k + PAD[2]));
}

/* Updates local cell (i, j, k) of b from u into unew. Global boundary cells
 * keep their value. */
static inline void update(struct block *b, int64_t i, int64_t j, int64_t k) {
  size_t c = at(b, i, j, k);
  int64_t gi = b->lo[0] + i, gj = b->lo[1] + j, gk = b->lo[2] + k;
  if (gi == 0 || gj == 0 || gk == 0 || gi + 1 == N[0] || gj + 1 == N[1] || gk + 1 == N[2]) {
    b->unew[c] = b->u[c];
    return;
  }
  const size_t s[3] = {(size_t)(b->d[1] * b->d[2]), (size_t)b->d[2], 1};
  double flux = 0.0;
  for (int a = 0; a < 3; a++) {
    flux += 0.5 * (b->k[c] + b->k[c - s[a]]) * (b->u[c - s[a]] - b->u[c]);
    flux += 0.5 * (b->k[c] + b->k[c + s[a]]) * (b->u[c + s[a]] - b->u[c]);
  }
  b->unew[c] = b->u[c] + flux;
}

/* Updates the cells of b in [from, to) per dimension, skipping the inner
 * box [skip_lo, skip_hi) when it is not empty. */
static void sweep(struct block *b, const int64_t from[3], const int64_t to[3], const int64_t skip_lo[3],
                  const int64_t skip_hi[3]) {
  for (int64_t i = from[0]; i < to[0]; i++)
    for (int64_t j = from[1]; j < to[1]; j++)
      for (int64_t k = from[2]; k < to[2]; k++) {
        if (skip_lo && i >= skip_lo[0] && i < skip_hi[0] && j >= skip_lo[1] && j < skip_hi[1] && k >= skip_lo[2] &&
            k < skip_hi[2])
          k = skip_hi[2] - 1; /* jump over the inner box's row */
        else {
          update(b, i, j, k);
          if (cost_w > 1) chemistry(b->u[at(b, i, j, k)], weight(b->lo[0] + i)); /* really costs more */
        }
      }
}

/* Sizes a block for the grid's current (or pending) box of this rank. */
static void size_block(nuce_grid *g, struct block *b) {
  CHECK(nuce_grid_box(g, rank, b->lo, b->size));
  CHECK(nuce_grid_padded_len(g, PAD, &b->len));
  for (int a = 0; a < 3; a++) b->d[a] = b->size[a] + 2 * PAD[a];
}

static double *alloc(size_t n) { return calloc(n ? n : 1, sizeof(double)); }

/* Tells nuce the cost of each cell of b's box (C order, no padding) and
 * returns their sum. Called for the first box and for each new one: a cost
 * belongs to the box it was set for and does not follow a move. */
static double set_cost(nuce_grid *g, const struct block *b) {
  size_t n = (size_t)(b->size[0] * b->size[1] * b->size[2]), c = 0;
  double *cost = alloc(n), sum = 0.0;
  for (int64_t i = 0; i < b->size[0]; i++)
    for (int64_t j = 0; j < b->size[1]; j++)
      for (int64_t k = 0; k < b->size[2]; k++) sum += cost[c++] = weight(b->lo[0] + i);
  CHECK(nuce_grid_set_cost(g, cost, n));
  free(cost);
  return sum;
}

/* The serial solve of the whole grid (one block, no neighbours). */
static struct block serial(int64_t iters) {
  struct block b = {{0, 0, 0}, {N[0], N[1], N[2]}, {0}, 0, NULL, NULL, NULL};
  for (int a = 0; a < 3; a++) b.d[a] = N[a] + 2;
  b.len = (size_t)(b.d[0] * b.d[1] * b.d[2]);
  b.u = alloc(b.len), b.unew = alloc(b.len), b.k = alloc(b.len);
  for (int64_t i = 0; i < N[0]; i++)
    for (int64_t j = 0; j < N[1]; j++)
      for (int64_t k = 0; k < N[2]; k++) {
        b.u[at(&b, i, j, k)] = initial(i, j, k);
        b.k[at(&b, i, j, k)] = conductivity(i, j, k);
      }
  const int64_t zero[3] = {0, 0, 0};
  for (int64_t t = 0; t < iters; t++) {
    sweep(&b, zero, N, NULL, NULL);
    double *x = b.u;
    b.u = b.unew, b.unew = x;
  }
  return b;
}

int main(int argc, char **argv) {
  int64_t phases = 6, iters = 10;
  N[0] = 24, N[1] = 20, N[2] = 18;
  struct slow slow[16];
  int nslow = 0, size;
  int64_t move_every = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : "";
    if (!strcmp(argv[i], "--nx")) N[0] = atoll(v), i++;
    else if (!strcmp(argv[i], "--ny")) N[1] = atoll(v), i++;
    else if (!strcmp(argv[i], "--nz")) N[2] = atoll(v), i++;
    else if (!strcmp(argv[i], "--phases")) phases = atoll(v), i++;
    else if (!strcmp(argv[i], "--iters")) iters = atoll(v), i++;
    else if (!strcmp(argv[i], "--cost")) cost_w = atoi(v), i++;
    else if (!strcmp(argv[i], "--move-every")) move_every = atoll(v), i++;
    else if (!strcmp(argv[i], "--slowdown")) {
      char *spec = strdup(v), *save = NULL;
      for (char *t = strtok_r(spec, ",", &save); t && nslow < 16; t = strtok_r(NULL, ",", &save)) {
        struct slow s = {0, 1, 0};
        if (sscanf(t, "%d:%d@%d", &s.rank, &s.factor, &s.phase) < 2) {
          if (rank == 0) fprintf(stderr, "heat3d: bad --slowdown item %s: expected R:F@P\n", t);
          MPI_Finalize();
          return 2;
        }
        slow[nslow++] = s;
      }
      free(spec);
      i++;
    } else {
      if (rank == 0) fprintf(stderr, "heat3d: unknown argument %s\n", argv[i]);
      MPI_Finalize();
      return 2;
    }
  }

  nuce_balancer *bal = NULL;
  CHECK(nuce_balancer_create(MPI_COMM_WORLD, &bal));
  nuce_grid *g = NULL;
  CHECK(nuce_grid_create(bal, N, 1, NUCE_STENCIL_FACES, &g));

  /* This rank's fields, in its own buffers. */
  struct block b;
  size_block(g, &b);
  b.u = alloc(b.len), b.unew = alloc(b.len), b.k = alloc(b.len);
  for (int64_t i = 0; i < b.size[0]; i++)
    for (int64_t j = 0; j < b.size[1]; j++)
      for (int64_t k = 0; k < b.size[2]; k++) {
        b.u[at(&b, i, j, k)] = initial(b.lo[0] + i, b.lo[1] + j, b.lo[2] + k);
        b.k[at(&b, i, j, k)] = conductivity(b.lo[0] + i, b.lo[1] + j, b.lo[2] + k);
      }

  if (cost_w < 1 || move_every < 0) {
    if (rank == 0) fprintf(stderr, "heat3d: --cost W needs W >= 1, --move-every K needs K >= 0\n");
    MPI_Finalize();
    return 2;
  }
  double my_cost = 0.0;
  if (cost_w > 1) my_cost = set_cost(g, &b);
  CHECK(nuce_start_phase(bal)); /* the set-up above is not compute of the first phase */

  int remaps = 0;
  long long moved = 0;
  for (int64_t phase = 0; phase < phases; phase++) {
    int factor = factor_at(slow, nslow, rank, (int)phase);
    if (cost_w > 1 && move_every > 0 && phase > 0 && phase % move_every == 0) {
      band_lo = (phase / move_every + 1) * band_width() % N[0]; /* the band moved: its new cost */
      my_cost = set_cost(g, &b);
    }
    for (int64_t it = 0; it < iters; it++) {
      /* Both fields in one exchange; the interior (cells whose neighbours
       * are all this rank's) is updated while the ghosts travel. */
      nuce_field f[2] = {{b.u, sizeof(double), {PAD[0], PAD[1], PAD[2]}},
                         {b.k, sizeof(double), {PAD[0], PAD[1], PAD[2]}}};
      nuce_exchange *x = NULL;
      CHECK(nuce_grid_exchange_begin(g, 2, f, &x));
      int64_t lo[3], hi[3], zero[3] = {0, 0, 0};
      for (int a = 0; a < 3; a++) {
        lo[a] = b.size[a] > 2 ? 1 : 0;
        hi[a] = b.size[a] > 2 ? b.size[a] - 1 : 0;
      }
      for (int r = 0; r < factor; r++) { /* a slowed rank really repeats its work */
        if (hi[0] > lo[0] && hi[1] > lo[1] && hi[2] > lo[2]) sweep(&b, lo, hi, NULL, NULL);
        __asm__ volatile("" ::: "memory");
      }
      CHECK(nuce_grid_exchange_end(x));
      int inner = hi[0] > lo[0] && hi[1] > lo[1] && hi[2] > lo[2];
      for (int r = 0; r < factor; r++) {
        sweep(&b, zero, b.size, inner ? lo : NULL, hi);
        __asm__ volatile("" ::: "memory");
      }
      double *t = b.u;
      b.u = b.unew, b.unew = t;
    }
    int remapped = 0;
    int64_t ahead = iters * (phases - phase - 1 > 1 ? phases - phase - 1 : 1);
    CHECK(nuce_grid_maybe_remap_ahead(bal, g, iters, ahead, &remapped));
    if (remapped) {
      /* The new box: new buffers, filled by nuce from the old ones. */
      struct block nb;
      size_block(g, &nb);
      if (cost_w > 1) my_cost = set_cost(g, &nb); /* the new box's cost */
      nb.u = alloc(nb.len), nb.unew = alloc(nb.len), nb.k = alloc(nb.len);
      nuce_field old[2] = {{b.u, sizeof(double), {PAD[0], PAD[1], PAD[2]}},
                           {b.k, sizeof(double), {PAD[0], PAD[1], PAD[2]}}};
      nuce_field new[2] = {{nb.u, sizeof(double), {PAD[0], PAD[1], PAD[2]}},
                           {nb.k, sizeof(double), {PAD[0], PAD[1], PAD[2]}}};
      CHECK(nuce_grid_move(g, 2, old, new));
      free(b.u), free(b.unew), free(b.k);
      b = nb;
      remaps++;
    }
    if (rank == 0)
      printf("heat3d: phase %lld: box %lldx%lldx%lld%s\n", (long long)phase, (long long)b.size[0],
             (long long)b.size[1], (long long)b.size[2], remapped ? " (remapped)" : "");
  }
  (void)moved;
  if (cost_w > 1) {
    double max = 0.0, sum = 0.0;
    MPI_Reduce(&my_cost, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&my_cost, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("heat3d: cost balance: max/mean %.3f\n", max * size / sum);
  }

  /* Gather with plain MPI: every rank's box and cells (C order). */
  long long mine[7] = {b.lo[0], b.lo[1], b.lo[2], b.size[0], b.size[1], b.size[2], 0};
  mine[6] = b.size[0] * b.size[1] * b.size[2];
  double *cells = alloc((size_t)mine[6]);
  size_t n = 0;
  for (int64_t i = 0; i < b.size[0]; i++)
    for (int64_t j = 0; j < b.size[1]; j++)
      for (int64_t k = 0; k < b.size[2]; k++) cells[n++] = b.u[at(&b, i, j, k)];
  long long *boxes = rank == 0 ? malloc(7 * size * sizeof(long long)) : NULL;
  MPI_Gather(mine, 7, MPI_LONG_LONG, boxes, 7, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  int *counts = NULL, *displs = NULL;
  double *all = NULL;
  if (rank == 0) {
    counts = malloc(size * sizeof(int)), displs = malloc(size * sizeof(int));
    int total = 0;
    for (int r = 0; r < size; r++) counts[r] = (int)boxes[7 * r + 6], displs[r] = total, total += counts[r];
    all = alloc((size_t)total);
  }
  MPI_Gatherv(cells, (int)mine[6], MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int ok = 1;
  if (rank == 0) {
    struct block s = serial(phases * iters);
    long long differ = 0, covered = 0;
    for (int r = 0; r < size; r++) {
      long long *q = boxes + 7 * r;
      const double *v = all + displs[r];
      for (long long i = 0; i < q[3]; i++)
        for (long long j = 0; j < q[4]; j++)
          for (long long k = 0; k < q[5]; k++, v++, covered++)
            if (memcmp(v, &s.u[at(&s, q[0] + i, q[1] + j, q[2] + k)], sizeof(double)) != 0) differ++;
    }
    ok = differ == 0 && covered == N[0] * N[1] * N[2];
    printf("heat3d: nuce %s, %d ranks, %lldx%lldx%lld, %lld phases of %lld iterations\n", nuce_version(), size,
           (long long)N[0], (long long)N[1], (long long)N[2], (long long)phases, (long long)iters);
    printf("heat3d: remaps: %d\n", remaps);
    double total = 0.0;
    for (int64_t i = 0; i < N[0]; i++)
      for (int64_t j = 0; j < N[1]; j++)
        for (int64_t k = 0; k < N[2]; k++) total += s.u[at(&s, i, j, k)];
    uint64_t bits;
    memcpy(&bits, &total, sizeof bits);
    printf("heat3d: checksum: %016llX\n", (unsigned long long)bits);
    if (ok)
      printf("heat3d: serial check: identical\n");
    else
      printf("heat3d: serial check: FAILED (%lld of %lld cells differ)\n", differ, covered);
    free(s.u), free(s.unew), free(s.k);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(all), free(counts), free(displs), free(boxes), free(cells);
  free(b.u), free(b.unew), free(b.k);
  CHECK(nuce_grid_free(g));
  CHECK(nuce_balancer_free(bal));
  MPI_Finalize();
  return ok ? 0 : 1;
}
