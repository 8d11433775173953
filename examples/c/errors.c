/* errors.c — bad input through nuce's C API: every misuse returns an error
 * code and a message, the same code on every rank for collective calls, and
 * nothing crashes or hangs. Run by scripts/test_capi.sh with 1, 2 and 3 ranks;
 * prints "errors: all N checks passed" on rank 0 and exits 0 when all pass. */
#include <math.h>
#include <mpi.h>
#include <nuce.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, checks, failures;

/* The message of a known failing call (nuce_tasks_max_tasks on a NULL
 * platform, which no check below makes), set after every check: a check's
 * error whose message is still this one left no message of its own (the last
 * message stays until the next failing call). */
static char stale[512];

static void set_stale_message(void) {
  int rc = nuce_tasks_max_tasks(NULL, 1.0, NULL, NULL, NULL, NULL);
  snprintf(stale, sizeof stale, "%s", nuce_last_error());
  if (rc == NUCE_OK || stale[0] == '\0') {
    failures++;
    fprintf(stderr, "errors: rank %d: nuce_tasks_max_tasks(NULL) gave %d with message \"%s\"\n", rank, rc, stale);
  }
}

/* `got` must be `want` on this rank, with a message of its own when it is an
 * error; when `collective`, every rank must have got the same code. */
static void expect(int got, int want, int collective, const char *what) {
  const char *m = nuce_last_error();
  int bad = got != want || (want != NUCE_OK && (m[0] == '\0' || strcmp(m, stale) == 0));
  if (collective) {
    int lo, hi;
    MPI_Allreduce(&got, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&got, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    bad |= lo != hi;
  }
  checks++;
  if (bad) {
    failures++;
    fprintf(stderr, "errors: rank %d: %s: got %d, want %d (%s)\n", rank, what, got, want, nuce_last_error());
  }
  set_stale_message();
}

/* A ghost exchange on `h` with the application's buffer of `len` elements:
 * a wrong length on the last rank and NULL on the root are the same error
 * on every rank; the right buffer works. */
typedef int (*exchange_fn)(void *h, void *buf, size_t len);
static void exchange_checks(exchange_fn exchange, void *h, void *buf, size_t len, const char *what) {
  char msg[96];
  snprintf(msg, sizeof msg, "%s(wrong length on the last rank)", what);
  expect(exchange(h, buf, rank == size - 1 ? len + 1 : len), NUCE_ERR_SHAPE_MISMATCH, 1, msg);
  snprintf(msg, sizeof msg, "%s(NULL on the root)", what);
  expect(exchange(h, rank == 0 ? NULL : buf, len), NUCE_ERR_INVALID_INPUT, 1, msg);
  expect(exchange(h, buf, len), NUCE_OK, 1, what);
}
static int array_exchange(void *a, void *buf, size_t len) { return nuce_array_exchange_ghosts(a, buf, len); }
static int graph_exchange(void *g, void *buf, size_t len) { return nuce_graph_exchange_ghosts(g, buf, len); }

/* The grid API on the application's buffers (nuce_grid_*). */
static void grid_errors(nuce_balancer *b) {
  int64_t n[3] = {6, 8, 10}, pad[3] = {1, 1, 1}, low[3] = {0, 0, 0}, lo[3], sz[3];
  nuce_grid *g = NULL;
  expect(nuce_grid_create(b, n, 1, 5, &g), NUCE_ERR_INVALID_INPUT, 1, "grid_create(stencil 5)");
  expect(nuce_grid_create(b, n, 5, NUCE_STENCIL_FACES, &g), NUCE_ERR_INVALID_INPUT, 1, "grid_create(ghost 5)");
  if (size > 1)
    expect(nuce_grid_create(b, n, rank == size - 1 ? 2 : 1, NUCE_STENCIL_BOX, &g), NUCE_ERR_DISAGREEMENT, 1,
           "grid_create(ghost differs on the last rank)");
  expect(nuce_grid_create(b, NULL, 1, NUCE_STENCIL_FACES, &g), NUCE_ERR_INVALID_INPUT, 1, "grid_create(n NULL)");
  expect(nuce_grid_create(b, n, 1, NUCE_STENCIL_FACES, &g), NUCE_OK, 1, "grid_create");
  expect(nuce_grid_box(g, -1, lo, sz), NUCE_ERR_INVALID_INPUT, 0, "grid_box(rank -1)");
  expect(nuce_grid_box(g, rank, lo, sz), NUCE_OK, 0, "grid_box");
  size_t len = 0;
  expect(nuce_grid_padded_len(g, low, &len), NUCE_ERR_INVALID_INPUT, 0, "grid_padded_len(pad below the ghost)");
  expect(nuce_grid_padded_len(g, pad, &len), NUCE_OK, 0, "grid_padded_len");
  double *u = calloc(len ? len : 1, sizeof(double));
  nuce_field f = {u, sizeof(double), {1, 1, 1}};
  /* With one or two ranks every rank is in the exchange (with three, a rank
   * that is not the refusing rank's neighbour completes this exchange and
   * gets the refusal from its next nuce call, within milliseconds). */
  if (size <= 2) {
    expect(nuce_grid_exchange(g, 0, &f), NUCE_ERR_INVALID_INPUT, 1, "grid_exchange(0 fields)");
    nuce_field bad = f;
    if (rank == 0) bad.pad[2] = -1;
    expect(nuce_grid_exchange(g, 1, &bad), NUCE_ERR_INVALID_INPUT, 1, "grid_exchange(negative pad on the root)");
  }
  expect(nuce_grid_exchange(g, 1, &f), NUCE_OK, 1, "grid_exchange");
  nuce_exchange *x = NULL;
  expect(nuce_grid_exchange_begin(g, 1, &f, &x), NUCE_OK, 1, "grid_exchange_begin");
  expect(nuce_grid_exchange_end(x), NUCE_OK, 1, "grid_exchange_end");
  expect(nuce_grid_exchange_end(NULL), NUCE_ERR_INVALID_INPUT, 0, "grid_exchange_end(NULL)");
  expect(nuce_grid_move(g, 1, &f, &f), NUCE_ERR_INVALID_INPUT, 1, "grid_move(no remap pending)");
  /* A field to and from one whole array on rank 0: no array or one of the
   * wrong length on rank 0, or a field with another element size on the last
   * rank, is the same error on every rank; the right call works. */
  size_t all = (size_t)(n[0] * n[1] * n[2]);
  double *whole = calloc(all, sizeof(double));
  expect(nuce_grid_gather(g, &f, NULL, rank == 0 ? all : 0), NUCE_ERR_INVALID_INPUT, 1, "grid_gather(no array on rank 0)");
  expect(nuce_grid_gather(g, &f, whole, all - 1), NUCE_ERR_SHAPE_MISMATCH, 1, "grid_gather(short array on rank 0)");
  if (size > 1) {
    nuce_field narrow = f;
    if (rank == size - 1) narrow.elem_size = sizeof(float);
    expect(nuce_grid_scatter(g, whole, all, &narrow), NUCE_ERR_DISAGREEMENT, 1,
           "grid_scatter(4-byte cells on the last rank)");
  }
  expect(nuce_grid_scatter(g, whole, all, NULL), NUCE_ERR_INVALID_INPUT, 1, "grid_scatter(field NULL)");
  expect(nuce_grid_gather(g, &f, whole, all), NUCE_OK, 1, "grid_gather");
  expect(nuce_grid_scatter(g, whole, all, &f), NUCE_OK, 1, "grid_scatter");
  free(whole);
  expect(nuce_grid_maybe_remap(b, g, 1, NULL), NUCE_ERR_INVALID_INPUT, 1, "grid_maybe_remap(remapped NULL)");
  int count = -1;
  expect(nuce_grid_neighbours(g, &count, NULL, 0), NUCE_OK, 0, "grid_neighbours(count only)");
  /* A cost per cell: NULL with cells (local), a NaN or one value too many on
   * the last rank (the same code on every rank at the balance point). */
  size_t cells = (size_t)(sz[0] * sz[1] * sz[2]);
  double *cost = malloc((cells + 1) * sizeof(double));
  for (size_t c = 0; c <= cells; c++) cost[c] = 1.0;
  int remapped = 0;
  expect(nuce_grid_set_cost(g, NULL, cells), cells ? NUCE_ERR_INVALID_INPUT : NUCE_OK, 0, "grid_set_cost(NULL)");
  if (rank == size - 1) cost[0] = NAN;
  expect(nuce_grid_set_cost(g, cost, cells), NUCE_OK, 0, "grid_set_cost(NaN on the last rank)");
  expect(nuce_grid_maybe_remap(b, g, 1, &remapped), NUCE_ERR_INVALID_INPUT, 1, "grid_maybe_remap(NaN cost)");
  cost[0] = 1.0;
  expect(nuce_grid_set_cost(g, cost, cells + (rank == size - 1)), NUCE_OK, 0, "grid_set_cost(long on the last rank)");
  expect(nuce_grid_maybe_remap(b, g, 1, &remapped), NUCE_ERR_SHAPE_MISMATCH, 1, "grid_maybe_remap(cost length)");
  expect(nuce_grid_clear_cost(g), NUCE_OK, 0, "grid_clear_cost");
  if (size > 1) {
    /* A cost on the last rank only: the balance point's calls differ. */
    if (rank == size - 1) expect(nuce_grid_set_cost(g, cost, cells), NUCE_OK, 0, "grid_set_cost(last rank only)");
    expect(nuce_grid_maybe_remap(b, g, 1, &remapped), NUCE_ERR_DISAGREEMENT, 1, "grid_maybe_remap(cost on some ranks)");
    expect(nuce_grid_clear_cost(g), NUCE_OK, 0, "grid_clear_cost");
  }
  expect(nuce_grid_clear_cost(NULL), NUCE_ERR_INVALID_INPUT, 0, "grid_clear_cost(NULL)");
  free(cost);
  expect(nuce_grid_free(g), NUCE_OK, 0, "grid_free");
  expect(nuce_grid_free(NULL), NUCE_OK, 0, "grid_free(NULL)");
  free(u);
}

/* The rows × cols 4-neighbour grid in CSR (METIS layout). */
static void grid_csr(int64_t rows, int64_t cols, int64_t *xadj, int64_t *adj) {
  int64_t k = 0;
  xadj[0] = 0;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      if (r > 0) adj[k++] = (r - 1) * cols + c;
      if (c > 0) adj[k++] = r * cols + c - 1;
      if (c + 1 < cols) adj[k++] = r * cols + c + 1;
      if (r + 1 < rows) adj[k++] = (r + 1) * cols + c;
      xadj[r * cols + c + 1] = k;
    }
}

/* Graphs: bad CSR input on the root, bad buffers, partitions and owners
 * that differ between ranks; then what the good calls return is checked. */
static void graph_errors(nuce_balancer *b) {
  enum { R = 6, C = 5, N = R * C, M = 2 * (R * (C - 1) + C * (R - 1)) };
  int64_t xadj[N + 1], adj[M], bad[M];
  double rec[N], vw[N];
  grid_csr(R, C, xadj, adj);
  for (int v = 0; v < N; v++) rec[v] = (double)v, vw[v] = 1.0;
  nuce_csr g = {N, xadj, adj, NULL, NULL, 0, NULL};
  nuce_graph *dg = NULL;
  expect(nuce_graph_scatter(b, rank == 0 ? NULL : &g, 8, rec, &dg), NUCE_ERR_INVALID_INPUT, 1,
         "graph_scatter(graph = NULL on the root)");
  expect(nuce_graph_scatter(b, &g, 8, rank == 0 ? NULL : rec, &dg), NUCE_ERR_INVALID_INPUT, 1,
         "graph_scatter(records = NULL on the root)");
  expect(nuce_graph_scatter(b, &g, 0, rec, &dg), NUCE_ERR_INVALID_INPUT, 1, "graph_scatter(elem_size 0)");
  expect(nuce_graph_scatter(b, &g, 4097, rec, &dg), NUCE_ERR_INVALID_INPUT, 1, "graph_scatter(elem_size 4097)");
  if (size > 1)
    expect(nuce_graph_scatter(b, &g, rank == 1 ? 4 : 8, rec, &dg), NUCE_ERR_DISAGREEMENT, 1,
           "graph_scatter(elem_size differs between ranks)");
  expect(nuce_graph_scatter(b, &g, 8, rec, rank == size - 1 ? NULL : &dg), NUCE_ERR_INVALID_INPUT, 1,
         "graph_scatter(out = NULL on the last rank)");
  memcpy(bad, adj, sizeof adj);
  bad[3] = N;
  nuce_csr gb = {N, xadj, bad, NULL, NULL, 0, NULL};
  expect(nuce_graph_scatter(b, &gb, 8, rec, &dg), NUCE_ERR_INVALID_INPUT, 1, "graph_scatter(adjncy out of range)");
  bad[3] = adj[3] == 0 ? 2 : 0; /* vertex 1's neighbour list no longer mirrors vertex 0's */
  expect(nuce_graph_scatter(b, &gb, 8, rec, &dg), NUCE_ERR_INVALID_INPUT, 1, "graph_scatter(asymmetric adjncy)");
  vw[7] = -1.0;
  nuce_csr gw = {N, xadj, adj, vw, NULL, 0, NULL};
  expect(nuce_graph_scatter(b, &gw, 8, rec, &dg), NUCE_ERR_INVALID_INPUT, 1, "graph_scatter(negative weight)");
  expect(nuce_partition_graph(&gw, 2, NULL, NUCE_ALGO_BEST, bad, NULL), NUCE_ERR_INVALID_INPUT, 0,
         "partition_graph(negative weight)");
  nuce_csr one = {1, xadj, adj, NULL, NULL, 0, NULL};
  int64_t zero[2] = {0, 0};
  one.xadj = zero;
  if (size > 1)
    expect(nuce_graph_scatter(b, &one, 8, rec, &dg), NUCE_ERR_TOO_MANY_PARTS, 1,
           "graph_scatter(more ranks than vertices)");
  expect(dg == NULL ? NUCE_OK : -1, NUCE_OK, 0, "no graph after failures");

  /* Partitions by the balancer's speeds. */
  int64_t part[N];
  double cut = -1.0;
  expect(nuce_graph_partition(b, &g, NUCE_ALGO_BEST, rank == 0 ? NULL : part, &cut), NUCE_ERR_INVALID_INPUT, 1,
         "graph_partition(part = NULL on the root)");
  expect(nuce_graph_partition(b, &g, NUCE_ALGO_RCB, part, &cut), NUCE_ERR_INVALID_INPUT, 1,
         "graph_partition(RCB without coordinates)");
  if (size > 1)
    expect(nuce_graph_partition(b, &g, rank == 1 ? NUCE_ALGO_RSB : NUCE_ALGO_BEST, part, &cut),
           NUCE_ERR_DISAGREEMENT, 1, "graph_partition(algo differs between ranks)");
  expect(nuce_graph_partition(b, &g, NUCE_ALGO_MULTILEVEL, part, &cut), NUCE_OK, 1, "graph_partition");
  if (rank == 0) {
    int in_range = 1;
    for (int v = 0; v < N; v++) in_range &= part[v] >= 0 && part[v] < size;
    expect(in_range && (size == 1 ? cut == 0.0 : cut > 0.0) ? NUCE_OK : -1, NUCE_OK, 0,
           "graph_partition gives ranks and a cut");
  }

  /* A good graph: accessors, ghosts, gather, migration. */
  expect(nuce_graph_scatter(b, &g, 8, rec, &dg), NUCE_OK, 1, "graph_scatter");
  size_t owned = 0, ghosts = 0, arcs = 0;
  expect(nuce_graph_sizes(dg, &owned, &ghosts, &arcs), NUCE_OK, 0, "graph_sizes");
  expect(nuce_graph_sizes(NULL, &owned, NULL, NULL), NUCE_ERR_INVALID_INPUT, 0, "graph_sizes(NULL graph)");
  size_t slots = owned + ghosts;
  int64_t *ids = malloc((slots + 1) * sizeof(int64_t)), *lx = malloc((owned + 2) * sizeof(int64_t));
  int64_t *la = malloc((arcs + 1) * sizeof(int64_t));
  double *u = malloc((slots + 1) * sizeof(double));
  expect(nuce_graph_owned(dg, ids, owned + 1), NUCE_ERR_SHAPE_MISMATCH, 0, "graph_owned(wrong length)");
  expect(nuce_graph_ghosts(dg, NULL, ghosts), NUCE_ERR_INVALID_INPUT, 0, "graph_ghosts(NULL)");
  expect(nuce_graph_adjacency(dg, lx, owned + 1, la, NULL, arcs + 1), NUCE_ERR_SHAPE_MISMATCH, 0,
         "graph_adjacency(wrong arcs)");
  expect(nuce_graph_adjacency(dg, lx, owned + 1, la, NULL, arcs), NUCE_OK, 0, "graph_adjacency");
  expect(nuce_graph_owned(dg, ids, owned), NUCE_OK, 0, "graph_owned");
  expect(nuce_graph_ghosts(dg, ids + owned, ghosts), NUCE_OK, 0, "graph_ghosts");
  expect(nuce_graph_read(dg, u, slots + 1), NUCE_ERR_SHAPE_MISMATCH, 0, "graph_read(wrong length)");
  expect(nuce_graph_read(dg, u, slots), NUCE_OK, 0, "graph_read");
  exchange_checks(graph_exchange, dg, u, slots, "graph_exchange_ghosts");
  /* Every slot holds its vertex's record (the global id); every local arc
   * is an arc of the global graph. */
  int right = lx[owned] == (int64_t)arcs;
  for (size_t s = 0; s < slots; s++) right &= u[s] == (double)ids[s];
  for (size_t i = 0; i < owned; i++)
    for (int64_t a = lx[i]; a < lx[i + 1]; a++) right &= adj[xadj[ids[i]] + (a - lx[i])] == ids[la[a]];
  expect(right ? NUCE_OK : -1, NUCE_OK, 0, "ghosts and local adjacency match the global graph");
  double back[N];
  expect(nuce_graph_gather(dg, u, slots, rank == 0 ? NULL : back, N), NUCE_ERR_INVALID_INPUT, 1,
         "graph_gather(global = NULL on the root)");
  expect(nuce_graph_gather(dg, u, slots, back, N - 1), NUCE_ERR_SHAPE_MISMATCH, 1,
         "graph_gather(wrong global length on the root)");
  expect(nuce_graph_gather(dg, u, slots, back, N), NUCE_OK, 1, "graph_gather");
  if (rank == 0)
    expect(memcmp(back, rec, sizeof rec) == 0 ? NUCE_OK : -1, NUCE_OK, 0, "graph scatter then gather is the identity");

  int64_t owner[N];
  for (int v = 0; v < N; v++) owner[v] = (v / 3) % size;
  owner[5] = rank == 0 ? size : owner[5];
  expect(nuce_graph_migrate(dg, u, slots, owner, N), NUCE_ERR_INVALID_INPUT, 1,
         "graph_migrate(owner out of range on the root)");
  owner[5] = (5 / 3) % size;
  expect(nuce_graph_migrate(dg, u, slots, owner, N - 1), NUCE_ERR_SHAPE_MISMATCH, 1, "graph_migrate(wrong length)");
  if (size > 1) {
    owner[0] = rank == 1 ? 1 : 0;
    expect(nuce_graph_migrate(dg, u, slots, owner, N), NUCE_ERR_DISAGREEMENT, 1,
           "graph_migrate(owners differ between ranks)");
    owner[0] = 0;
  }
  expect(nuce_graph_migrate(dg, u, slots, owner, N), NUCE_OK, 1, "graph_migrate");
  expect(nuce_graph_sizes(dg, &owned, &ghosts, NULL), NUCE_OK, 0, "graph_sizes after migrate");
  slots = owned + ghosts;
  ids = realloc(ids, (owned + 1) * sizeof(int64_t));
  u = realloc(u, (slots + 1) * sizeof(double));
  expect(nuce_graph_owned(dg, ids, owned), NUCE_OK, 0, "graph_owned after migrate");
  expect(nuce_graph_read(dg, u, slots), NUCE_OK, 0, "graph_read after migrate");
  right = 1;
  for (size_t i = 0; i < owned; i++) right &= owner[ids[i]] == rank && u[i] == (double)ids[i];
  expect(right ? NUCE_OK : -1, NUCE_OK, 0, "records moved with their vertices to their new owners");

  int remapped = -1;
  expect(nuce_graph_maybe_remap(b, dg, 10, u, slots, rank == 0 ? NULL : &remapped), NUCE_ERR_INVALID_INPUT, 1,
         "graph_maybe_remap(remapped = NULL on the root)");
  expect(nuce_graph_maybe_remap(b, dg, -1, u, slots, &remapped), NUCE_ERR_INVALID_INPUT, 1,
         "graph_maybe_remap(negative iterations)");
  expect(nuce_graph_maybe_remap(b, dg, 10, u, rank == size - 1 ? slots + 1 : slots, &remapped),
         NUCE_ERR_SHAPE_MISMATCH, 1, "graph_maybe_remap(wrong length on the last rank)");
  expect(nuce_graph_maybe_remap(b, dg, 10, u, slots, &remapped), NUCE_OK, 1, "graph_maybe_remap");
  /* Its decision: the same on every rank, with a known rule and finite times. */
  nuce_decision d;
  expect(nuce_last_decision(b, &d), NUCE_OK, 0, "last_decision");
  int rule_lo, rule_hi, known = strcmp(nuce_rule_name(d.rule), "unknown") != 0;
  MPI_Allreduce(&d.rule, &rule_lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&d.rule, &rule_hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  int sane = d.remapped == remapped && known && rule_lo == rule_hi && isfinite(d.t_current) && d.t_current >= 0 &&
             isfinite(d.forgone) && d.forgone >= 0 && d.iterations == 10;
  expect(sane ? NUCE_OK : -1, NUCE_OK, 1, "last_decision(matches the balance point)");
  expect(strcmp(nuce_rule_name(-1), "unknown") == 0 ? NUCE_OK : -1, NUCE_OK, 0, "rule_name(-1)");
  expect(nuce_graph_free(dg), NUCE_OK, 0, "graph_free");
  expect(nuce_graph_free(NULL), NUCE_OK, 0, "graph_free(NULL)");

  /* The pure functions: a bad platform, a bad mesh. */
  double t[2] = {1.0, -2.0};
  nuce_task_platform pf = {t, 2, 0.1, 0.0};
  uint64_t counts[2];
  int64_t so[2], ro[2], sub[8];
  expect(nuce_tasks_min_time(&pf, 10, counts, so, ro, NULL), NUCE_ERR_INVALID_SPEED, 0, "tasks_min_time(t < 0)");
  t[1] = 2.0;
  expect(nuce_tasks_min_time(&pf, 10, counts, so, ro, NULL), NUCE_OK, 0, "tasks_min_time");
  expect(counts[0] + counts[1] == 10 ? NUCE_OK : -1, NUCE_OK, 0, "tasks_min_time schedules every task");
  uint64_t grids[4] = {8, 4, 4, 4};
  expect(nuce_amr_allocate(grids, 2, 1, 1, NUCE_PACK_TIGHT, NUCE_SCALE_NONUNIFORM, sub, NULL),
         NUCE_ERR_TOO_MANY_PARTS, 0, "amr_allocate(more grids than processors)");
  free(ids);
  free(lx);
  free(la);
  free(u);
}

/* nuce_ownership_ranges (PETSc DMDA ranges): bad input is the same code on
 * every rank, including a NULL output on one rank only; a good call gives
 * ranges summing to the extents. */
static void ranges_errors(nuce_balancer *b) {
  int64_t n[3] = {12, 10, 8}, zero[3] = {12, 0, 8}, lx[16], ly[16], lz[16];
  double imb;
  int procs[3] = {0, 0, 0};
  expect(nuce_ownership_ranges(b, zero, procs, lx, ly, lz, &imb), NUCE_ERR_EMPTY, 1,
         "ownership_ranges(zero extent)");
  int wrong[3] = {size + 1, 1, 1};
  expect(nuce_ownership_ranges(b, n, wrong, lx, ly, lz, &imb), NUCE_ERR_INVALID_INPUT, 1,
         "ownership_ranges(procs product != ranks)");
  int part[3] = {size, 0, 0};
  expect(nuce_ownership_ranges(b, n, part, lx, ly, lz, &imb), NUCE_ERR_INVALID_INPUT, 1,
         "ownership_ranges(procs partly given)");
  expect(nuce_ownership_ranges(b, n, procs, lx, rank == size - 1 ? NULL : ly, lz, &imb),
         NUCE_ERR_INVALID_INPUT, 1, "ownership_ranges(NULL ly on the last rank)");
  expect(nuce_ownership_ranges(b, n, procs, lx, ly, lz, NULL), NUCE_OK, 1, "ownership_ranges");
  int64_t sx = 0, sy = 0, sz = 0;
  for (int i = 0; i < procs[0]; i++) sx += lx[i];
  for (int i = 0; i < procs[1]; i++) sy += ly[i];
  for (int i = 0; i < procs[2]; i++) sz += lz[i];
  expect(procs[0] * procs[1] * procs[2] == size && sx == 12 && sy == 10 && sz == 8 ? NUCE_OK : -1,
         NUCE_OK, 0, "ownership ranges sum to the extents");
}

/* nuce_plan_1d (counts of one dimension): bad input is the same code on
 * every rank, including a wrong count buffer on one rank only and an n that
 * differs between ranks; a good call gives counts summing to n, each within
 * one unit of its share of the current speeds. */
static void plan1d_checks(nuce_balancer *b) {
  int64_t *c = malloc((size + 1) * sizeof(int64_t));
  double *s = malloc(size * sizeof(double));
  expect(nuce_speeds(b, s, size), NUCE_OK, 0, "speeds");
  expect(nuce_plan_1d(b, -3, c, size), NUCE_ERR_INVALID_INPUT, 1, "plan_1d(negative n)");
  if (size > 1) expect(nuce_plan_1d(b, size - 1, c, size), NUCE_ERR_TOO_MANY_PARTS, 1, "plan_1d(n < ranks)");
  expect(nuce_plan_1d(b, 100, rank == size - 1 ? NULL : c, size), NUCE_ERR_INVALID_INPUT, 1,
         "plan_1d(counts NULL on the last rank)");
  expect(nuce_plan_1d(b, 100, c, rank == 0 ? size + 1 : size), NUCE_ERR_SHAPE_MISMATCH, 1,
         "plan_1d(ncounts wrong on the root)");
  if (size > 1)
    expect(nuce_plan_1d(b, rank == size - 1 ? 101 : 100, c, size), NUCE_ERR_DISAGREEMENT, 1,
           "plan_1d(n differs on the last rank)");
  expect(nuce_plan_1d(b, 1000, c, size), NUCE_OK, 1, "plan_1d");
  double total = 0.0;
  for (int r = 0; r < size; r++) total += s[r];
  int64_t sum = 0;
  int within = 1;
  for (int r = 0; r < size; r++) {
    sum += c[r];
    within &= fabs((double)c[r] - 1000.0 * s[r] / total) < 1.0;
  }
  expect(sum == 1000 && within ? NUCE_OK : -1, NUCE_OK, 0, "plan_1d counts: sum n, each within 1 of its share");
  free(c);
  free(s);
}

/* nuce_set_memory_limit_from_machine on a balancer of its own: bytes per
 * cell NaN on the last rank, 0 on every rank and a fraction above 1 on the
 * root are the same code on every rank; 8-byte cells in 40 % of the machine
 * give a positive limit (cells_out may be NULL); cells that make the limit
 * about 1000 / (size + 1) make a plan of 1000 units fail on every rank. */
static void memory_checks(void) {
  nuce_balancer *m = NULL;
  int64_t cells = 0, big = 0, *c = malloc(size * sizeof(int64_t));
  expect(nuce_balancer_create(MPI_COMM_WORLD, &m), NUCE_OK, 1, "create (memory limits)");
  expect(nuce_set_memory_limit_from_machine(m, rank == size - 1 ? NAN : 8.0, 0.4, &cells), NUCE_ERR_INVALID_INPUT, 1,
         "set_memory_limit_from_machine(NaN bytes per cell on the last rank)");
  expect(nuce_set_memory_limit_from_machine(m, 0.0, 0.4, &cells), NUCE_ERR_INVALID_INPUT, 1,
         "set_memory_limit_from_machine(0 bytes per cell)");
  expect(nuce_set_memory_limit_from_machine(m, 8.0, rank == 0 ? 1.5 : 0.4, &cells), NUCE_ERR_INVALID_INPUT, 1,
         "set_memory_limit_from_machine(fraction 1.5 on the root)");
  expect(nuce_set_memory_limit_from_machine(m, 8.0, 0.4, NULL), NUCE_OK, 1,
         "set_memory_limit_from_machine(cells_out NULL)");
  expect(nuce_set_memory_limit_from_machine(m, 8.0, 0.4, &cells), NUCE_OK, 1, "set_memory_limit_from_machine");
  expect(cells > 0 ? NUCE_OK : -1, NUCE_OK, 0, "the limit from the machine is positive");
  expect(nuce_set_memory_limit_from_machine(m, 8.0 * (double)cells * (size + 1) / 1000.0, 0.4, &big), NUCE_OK, 1,
         "set_memory_limit_from_machine(big cells)");
  expect(big > 0 && big * size < 1000 ? NUCE_OK : -1, NUCE_OK, 0, "big cells: limits below 1000 units in all");
  int rc = nuce_plan_1d(m, 1000, c, size);
  int says = strstr(nuce_last_error(), "memory") != NULL;
  expect(rc, NUCE_ERR_INVALID_INPUT, 1, "plan_1d(beyond the memory limits)");
  expect(says ? NUCE_OK : -1, NUCE_OK, 0, "plan_1d beyond the limits: the message says memory");
  expect(nuce_balancer_free(m), NUCE_OK, 0, "balancer_free (memory limits)");
  free(c);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  set_stale_message();
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  expect(nuce_version()[0] != '\0' ? NUCE_OK : -1, NUCE_OK, 0, "nuce_version");

  /* Balancers: NULL out, MPI_COMM_NULL, the Fortran handle, a handle never freed by nuce. */
  nuce_balancer *b = (nuce_balancer *)&b;
  expect(nuce_balancer_create(MPI_COMM_WORLD, NULL), NUCE_ERR_INVALID_INPUT, 1, "create(out = NULL)");
  expect(nuce_balancer_create(MPI_COMM_NULL, &b), NUCE_ERR_INVALID_INPUT, 1, "create(MPI_COMM_NULL)");
  expect(b == NULL ? NUCE_OK : -1, NUCE_OK, 0, "create sets *out = NULL on failure");
  MPI_Comm mine;
  MPI_Comm_dup(MPI_COMM_WORLD, &mine);
  expect(nuce_balancer_create_f(MPI_Comm_c2f(mine), &b), NUCE_OK, 1, "create_f(Fortran handle)");
  expect(nuce_balancer_free(b), NUCE_OK, 0, "free");
  expect(MPI_Barrier(mine) == MPI_SUCCESS ? NUCE_OK : -1, NUCE_OK, 1, "the caller's communicator survives");
  MPI_Comm_free(&mine);
  expect(nuce_balancer_free(NULL), NUCE_OK, 0, "free(NULL)");
  expect(nuce_balancer_create(MPI_COMM_WORLD, &b), NUCE_OK, 1, "create");
  nuce_decision none;
  expect(nuce_last_decision(b, &none), NUCE_ERR_INVALID_INPUT, 0, "last_decision(before any balance point)");
  expect(nuce_last_decision(b, NULL), NUCE_ERR_INVALID_INPUT, 0, "last_decision(out NULL)");

  /* Speeds: a zero speed, NULL on the root, the wrong count. */
  double *speeds = malloc((size + 1) * sizeof(double));
  for (int r = 0; r <= size; r++) speeds[r] = 1.0 + r;
  speeds[size - 1] = 0.0;
  expect(nuce_set_speeds(b, speeds, size), NUCE_ERR_INVALID_SPEED, 1, "set_speeds(zero speed)");
  expect(nuce_set_speeds(b, rank == 0 ? NULL : speeds, size), NUCE_ERR_INVALID_INPUT, 1, "set_speeds(NULL)");
  speeds[size - 1] = 2.0;
  expect(nuce_set_speeds(b, speeds, size + 1), NUCE_ERR_SHAPE_MISMATCH, 1, "set_speeds(wrong count)");
  /* Size sweeps: a negative size on the last rank, a size beyond the bound, NULL; refused
     before anything is measured, so no speeds yet. */
  int64_t sweep[2] = {256, rank == size - 1 ? -5 : 256};
  expect(nuce_measure_sizes(b, sweep, 2), NUCE_ERR_INVALID_INPUT, 1, "measure_sizes(negative size)");
  sweep[1] = (int64_t)1 << 40;
  expect(nuce_measure_sizes(b, sweep, 2), NUCE_ERR_INVALID_INPUT, 1, "measure_sizes(2^40 cells)");
  expect(nuce_measure_sizes(b, NULL, 2), NUCE_ERR_INVALID_INPUT, 1, "measure_sizes(NULL)");
  expect(nuce_measure_sizes(b, sweep, 0), NUCE_ERR_INVALID_INPUT, 1, "measure_sizes(no size)");
  expect(nuce_speeds(b, speeds, size), NUCE_ERR_EMPTY, 0, "speeds() before any");
  expect(nuce_set_speeds(b, speeds, size), NUCE_OK, 1, "set_speeds");
  expect(nuce_speeds(b, speeds, size + 1), NUCE_ERR_SHAPE_MISMATCH, 0, "speeds(wrong length)");
  expect(nuce_speeds(b, NULL, size), NUCE_ERR_INVALID_INPUT, 0, "speeds(NULL)");

  /* Plans. */
  int64_t rect[4];
  expect(nuce_plan_rect(b, 0, rect), NUCE_ERR_INVALID_INPUT, 0, "plan_rect before plan");
  expect(nuce_plan(b, -4, 8), NUCE_ERR_INVALID_INPUT, 1, "plan(negative rows)");
  if (size > 1) expect(nuce_plan(b, 1, 1), NUCE_ERR_TOO_MANY_PARTS, 1, "plan(more ranks than cells)");
  expect(nuce_plan(b, 30, 20), NUCE_OK, 1, "plan");
  expect(nuce_plan_rect(b, size, rect), NUCE_ERR_INVALID_INPUT, 0, "plan_rect(rank out of range)");
  expect(nuce_plan_rect(b, 0, NULL), NUCE_ERR_INVALID_INPUT, 0, "plan_rect(out = NULL)");
  expect(nuce_plan_rect(NULL, 0, rect), NUCE_ERR_INVALID_INPUT, 0, "plan_rect(NULL balancer)");
  int64_t area = 0;
  for (int r = 0; r < size; r++) {
    expect(nuce_plan_rect(b, r, rect), NUCE_OK, 0, "plan_rect");
    area += rect[2] * rect[3];
  }
  expect(area == 600 ? NUCE_OK : -1, NUCE_OK, 0, "the plan tiles 30 x 20");

  /* Arrays: bad global buffers, element sizes, arguments differing between ranks. */
  int64_t rows = 12, cols = 10;
  double *global = calloc(rows * cols, sizeof(double));
  nuce_array *a = NULL;
  expect(nuce_array_scatter(b, rows, cols, 8, 1, rank == 0 ? NULL : global, rows * cols, &a),
         NUCE_ERR_INVALID_INPUT, 1, "scatter(global = NULL on the root)");
  expect(nuce_array_scatter(b, rows, cols, 8, 1, global, rows * cols - 1, &a), NUCE_ERR_SHAPE_MISMATCH, 1,
         "scatter(wrong global length)");
  expect(nuce_array_scatter(b, rows, cols, 3, 1, global, rows * cols, &a), NUCE_ERR_INVALID_INPUT, 1,
         "scatter(element size 3)");
  expect(nuce_array_scatter(b, rows, cols, 8, 1, global, rows * cols, rank == size - 1 ? NULL : &a),
         NUCE_ERR_INVALID_INPUT, 1, "scatter(out = NULL on the last rank)");
  if (size > 1)
    expect(nuce_array_create(b, rows, cols, 8, rank == 1 ? 2 : 1, &a), NUCE_ERR_DISAGREEMENT, 1,
           "create(ghost differs between ranks)");
  expect(a == NULL ? NUCE_OK : -1, NUCE_OK, 0, "no array after failures");
  for (int64_t i = 0; i < rows * cols; i++) global[i] = (double)i;
  expect(nuce_array_scatter(b, rows, cols, 8, 1, global, rows * cols, &a), NUCE_OK, 1, "scatter");
  size_t len = 0;
  expect(nuce_array_padded_len(a, &len), NUCE_OK, 0, "padded_len");
  expect(nuce_array_padded_len(a, NULL), NUCE_ERR_INVALID_INPUT, 0, "padded_len(NULL)");
  double *u = malloc((len + 1) * sizeof(double));
  expect(nuce_array_read(a, u, len + 1), NUCE_ERR_SHAPE_MISMATCH, 0, "read(wrong length)");
  expect(nuce_array_read(a, u, len), NUCE_OK, 0, "read");
  exchange_checks(array_exchange, a, u, len, "exchange_ghosts");
  expect(nuce_array_gather(a, u, len, rank == 0 ? NULL : global, rows * cols), NUCE_ERR_INVALID_INPUT, 1,
         "gather(global = NULL on the root)");
  double *back = calloc(rows * cols, sizeof(double));
  expect(nuce_array_gather(a, u, len, back, rows * cols), NUCE_OK, 1, "gather");
  if (rank == 0)
    expect(memcmp(back, global, rows * cols * sizeof(double)) == 0 ? NUCE_OK : -1, NUCE_OK, 0,
           "scatter then gather is the identity");

  /* Phases: the timing restarted (local), bad records, NULL outputs, iterations. */
  expect(nuce_start_phase(NULL), NUCE_ERR_INVALID_INPUT, 0, "start_phase(NULL)");
  expect(nuce_start_phase(b), NUCE_OK, 0, "start_phase");
  expect(nuce_record_phase(b, -1.0, 1.0), NUCE_ERR_INVALID_INPUT, 0, "record_phase(negative work)");
  expect(nuce_record_phase(b, 1.0, NAN), NUCE_ERR_INVALID_INPUT, 0, "record_phase(NaN seconds)");
  int remapped = -1;
  expect(nuce_maybe_remap(b, a, 10, u, len, rank == 0 ? NULL : &remapped), NUCE_ERR_INVALID_INPUT, 1,
         "maybe_remap(remapped = NULL on the root)");
  expect(nuce_maybe_remap(b, a, -1, u, len, &remapped), NUCE_ERR_INVALID_INPUT, 1,
         "maybe_remap(negative iterations)");
  expect(nuce_maybe_remap_ahead(b, a, 10, -5, u, len, &remapped), NUCE_ERR_INVALID_INPUT, 1,
         "maybe_remap_ahead(negative horizon)");

  /* Settings: collective, the same value on every rank. */
  expect(nuce_set_decomposer(b, "foo"), NUCE_ERR_INVALID_INPUT, 1, "set_decomposer(unknown name)");
  expect(nuce_set_decomposer(b, rank == 0 ? NULL : "rb"), NUCE_ERR_INVALID_INPUT, 1,
         "set_decomposer(NULL on the root)");
  if (size > 1)
    expect(nuce_set_decomposer(b, rank == size - 1 ? "rb" : "column"), NUCE_ERR_DISAGREEMENT, 1,
           "set_decomposer(names differ)");
  expect(nuce_set_decomposer(b, "rb"), NUCE_OK, 1, "set_decomposer(rb)");
  expect(nuce_set_decomposer3(b, "octree"), NUCE_ERR_INVALID_INPUT, 1, "set_decomposer3(unknown name)");
  expect(nuce_set_decomposer3(b, rank == size - 1 ? NULL : "rb"), NUCE_ERR_INVALID_INPUT, 1,
         "set_decomposer3(NULL on the last rank)");
  if (size > 1)
    expect(nuce_set_decomposer3(b, rank == 0 ? "rb" : "slabs"), NUCE_ERR_DISAGREEMENT, 1,
           "set_decomposer3(names differ)");
  expect(nuce_set_decomposer3(b, "rb"), NUCE_OK, 1, "set_decomposer3(rb)");
  expect(nuce_plan(b, 30, 20), NUCE_OK, 1, "plan with rb");
  expect(nuce_set_hysteresis(b, rank == size - 1 ? -0.1 : 0.1), NUCE_ERR_INVALID_INPUT, 1,
         "set_hysteresis(negative on the last rank)");
  expect(nuce_set_hysteresis(b, NAN), NUCE_ERR_INVALID_INPUT, 1, "set_hysteresis(NaN)");
  expect(nuce_set_hysteresis(b, 0.1), NUCE_OK, 1, "set_hysteresis(0.1)");
  expect(nuce_set_timeout(b, -1.0), NUCE_ERR_INVALID_INPUT, 1, "set_timeout(negative)");
  if (size > 1)
    expect(nuce_set_timeout(b, rank == 0 ? 30.0 : 31.0), NUCE_ERR_DISAGREEMENT, 1, "set_timeout(values differ)");
  expect(nuce_set_timeout(b, 30.0), NUCE_OK, 1, "set_timeout(30 s)");
  /* Waiting sections: local, nested, balanced. */
  expect(nuce_waiting_end(), NUCE_ERR_INVALID_INPUT, 0, "waiting_end without begin");
  expect(nuce_waiting_begin(), NUCE_OK, 0, "waiting_begin");
  expect(nuce_waiting_begin(), NUCE_OK, 0, "waiting_begin (nested)");
  expect(nuce_waiting_end(), NUCE_OK, 0, "waiting_end (nested)");
  expect(nuce_waiting_end(), NUCE_OK, 0, "waiting_end");
  expect(nuce_array_rect(a, -1, rect), NUCE_ERR_INVALID_INPUT, 0, "array_rect(rank -1)");
  graph_errors(b);
  ranges_errors(b);
  plan1d_checks(b);
  memory_checks();
  grid_errors(b);
  expect(nuce_array_free(a), NUCE_OK, 0, "array_free");
  expect(nuce_array_free(NULL), NUCE_OK, 0, "array_free(NULL)");
  expect(nuce_balancer_free(b), NUCE_OK, 0, "balancer_free");

  int total;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (total == 0)
      printf("errors: all %d checks passed on %d ranks\n", checks, size);
    else
      printf("errors: %d failed checks\n", total);
  }
  free(speeds);
  free(global);
  free(back);
  free(u);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
