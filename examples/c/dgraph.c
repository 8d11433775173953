/* dgraph.c — a distributed graph built from every rank's own vertices
 * (nuce_graph_from_local), no rank ever holding the whole graph: the
 * rows × cols grid graph, rank r building the rows r·rows/p .. (r+1)·rows/p.
 * The graph is partitioned by speeds given with nuce_set_speeds (rank r
 * r + 1 times as fast as rank 0), checked: each rank owns about its share;
 * ghosts are exchanged and checked against their global ids; then phases
 * recorded at the opposite speeds (rank r p − r times as fast) make
 * nuce_graph_maybe_remap and nuce_graph_maybe_remap_ahead move vertices,
 * and every record still belongs to its vertex (checked by global id, and
 * gathered on rank 0). Bad pieces (a duplicate id, a neighbour nobody owns,
 * NULL on one rank, no coordinates) are the same error on every rank.
 * The graph is then checkpointed with the balancer's speeds
 * (nuce_graph_checkpoint, nuce_saved_graph_speeds) and restarted on the ranks
 * but the last (nuce_saved_graph_open / _create on a sub-communicator,
 * speeds p' − r): the same vertices and records, in proportion to those
 * speeds; records of another size, or the file opened as a grid's, are
 * errors. Finally the last rank leaves (nuce_depart, nuce_graph_depart,
 * nuce_depart_finish_all): the others hold every vertex and record. Then a
 * standby rank joins a new graph (nuce_pool_admit_all, nuce_pool_wait_all). Run by scripts/test_capi.sh with 1, 2 and 3 ranks; prints
 * "dgraph: all N checks passed on P ranks" on rank 0 and exits 0 when all
 * pass. Usage: dgraph [rows cols]. */
#include <mpi.h>
#include <nuce.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size, checks, failures;

static void check(int ok, const char *what) {
  checks++;
  if (!ok) {
    failures++;
    fprintf(stderr, "dgraph: rank %d: %s (%s)\n", rank, what, nuce_last_error());
  }
}

/* `got` must be `want` on every rank. */
static void expect_all(int got, int want, const char *what) {
  int lo, hi;
  MPI_Allreduce(&got, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&got, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  check(got == want && lo == hi, what);
}

/* The record of vertex v: its id and a value derived from it. */
typedef struct {
  int64_t id;
  double x;
} record;
static record record_of(int64_t v) { return (record){v, 0.5 * (double)v + 1.0}; }

/* Rows lo..hi of the rows × cols grid: ids, CSR (global ids), 2D coordinates. */
typedef struct {
  size_t n;
  int64_t *ids, *xadj, *adj;
  double *coords;
  record *values;
} piece;

static piece grid_rows(int64_t rows, int64_t cols, int64_t lo, int64_t hi) {
  piece p;
  p.n = (size_t)((hi - lo) * cols);
  p.ids = malloc((p.n + 1) * sizeof *p.ids);
  p.xadj = malloc((p.n + 1) * sizeof *p.xadj);
  p.adj = malloc((4 * p.n + 1) * sizeof *p.adj);
  p.coords = malloc((2 * p.n + 1) * sizeof *p.coords);
  p.values = malloc((p.n + 1) * sizeof *p.values);
  size_t i = 0;
  int64_t k = 0;
  p.xadj[0] = 0;
  for (int64_t r = lo; r < hi; r++)
    for (int64_t c = 0; c < cols; c++, i++) {
      int64_t v = r * cols + c;
      p.ids[i] = v;
      if (r > 0) p.adj[k++] = v - cols;
      if (c > 0) p.adj[k++] = v - 1;
      if (c + 1 < cols) p.adj[k++] = v + 1;
      if (r + 1 < rows) p.adj[k++] = v + cols;
      p.xadj[i + 1] = k;
      p.coords[2 * i] = (double)c;
      p.coords[2 * i + 1] = (double)r;
      p.values[i] = record_of(v);
    }
  return p;
}

static void piece_free(piece *p) {
  free(p->ids);
  free(p->xadj);
  free(p->adj);
  free(p->coords);
  free(p->values);
}

/* This rank's slot buffer after a layout change: owned records read from
 * the graph, ghosts exchanged; every record checked against its global id.
 * Returns the buffer (its length in *len) and the number of owned vertices. */
static record *fresh_slots(nuce_graph *g, size_t *len, size_t *owned, const char *when) {
  size_t ghosts, arcs;
  char msg[128];
  check(nuce_graph_sizes(g, owned, &ghosts, &arcs) == NUCE_OK, "sizes");
  *len = *owned + ghosts;
  record *slots = calloc(*len + 1, sizeof *slots);
  int64_t *ids = malloc((*len + 1) * sizeof *ids);
  snprintf(msg, sizeof msg, "read (%s)", when);
  check(nuce_graph_read(g, slots, *len) == NUCE_OK, msg);
  snprintf(msg, sizeof msg, "exchange_ghosts (%s)", when);
  expect_all(nuce_graph_exchange_ghosts(g, slots, *len), NUCE_OK, msg);
  check(nuce_graph_owned(g, ids, *owned) == NUCE_OK, "owned");
  check(nuce_graph_ghosts(g, ids + *owned, ghosts) == NUCE_OK, "ghosts");
  int ok = 1;
  for (size_t s = 0; s < *len; s++) {
    record want = record_of(ids[s]);
    ok &= slots[s].id == want.id && slots[s].x == want.x;
  }
  snprintf(msg, sizeof msg, "every record belongs to its global id (%s)", when);
  check(ok, msg);
  free(ids);
  return slots;
}

/* Σ vertex weights (1 each) per rank against `targets` (one per rank): each
 * rank within 25 % + one row of its share. */
static void check_shares(size_t owned, const double *targets, int64_t n, int64_t cols, const char *when) {
  double mine = (double)owned, total = 0, t = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int r = 0; r < size; r++) t += targets[r];
  double share = (double)n * targets[rank] / t;
  char msg[160];
  snprintf(msg, sizeof msg, "%s: rank owns %zu, share %.1f of %.0f", when, owned, share, total);
  check(total == (double)n && mine > 0.75 * share - cols && mine < 1.25 * share + cols, msg);
}

/* A phase recorded as done at speed `speed` (work = owned vertices × iters). */
static void record_phase(nuce_balancer *b, size_t owned, int iters, double speed) {
  double work = (double)owned * iters;
  check(nuce_record_phase(b, work, work / speed * 1e-6) == NUCE_OK, "record_phase");
}

/* After a layout change on the ranks of `comm`: every record (read, ghosts
 * exchanged) with its global id, every vertex once, and with `speeds` each
 * rank about its share. */
static void verify(nuce_graph *g, MPI_Comm comm, int64_t n, int64_t cols, const double *speeds, const char *when) {
  int cr, cs;
  char msg[160];
  MPI_Comm_rank(comm, &cr);
  MPI_Comm_size(comm, &cs);
  size_t owned = 0, ghosts = 0, arcs = 0;
  snprintf(msg, sizeof msg, "%s: sizes, read, exchange, ids", when);
  check(nuce_graph_sizes(g, &owned, &ghosts, &arcs) == NUCE_OK, msg);
  size_t len = owned + ghosts;
  record *slots = calloc(len + 1, sizeof *slots);
  int64_t *ids = malloc((len + 1) * sizeof *ids);
  check(nuce_graph_read(g, slots, len) == NUCE_OK && nuce_graph_exchange_ghosts(g, slots, len) == NUCE_OK &&
            nuce_graph_owned(g, ids, owned) == NUCE_OK && nuce_graph_ghosts(g, ids + owned, ghosts) == NUCE_OK,
        msg);
  int ok = 1;
  for (size_t k = 0; k < len; k++) ok &= slots[k].id == ids[k] && slots[k].x == record_of(ids[k]).x;
  snprintf(msg, sizeof msg, "%s: every record belongs to its global id", when);
  check(ok, msg);
  int64_t mine = (int64_t)owned, total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_INT64_T, MPI_SUM, comm);
  double t = 0;
  for (int r = 0; speeds && r < cs; r++) t += speeds[r];
  double share = speeds ? (double)n * speeds[cr] / t : (double)mine;
  snprintf(msg, sizeof msg, "%s: every vertex once, rank owns %lld, share %.1f", when, (long long)mine, share);
  check(total == n && mine > 0.75 * share - cols && mine < 1.25 * share + cols, msg);
  free(slots);
  free(ids);
}

/* The saved graph at `path` (n vertices, saved from `saved` ranks) restarted
 * on the ranks of `sub` at speeds p' − r: every record with its vertex,
 * each rank about its share. */
static void restart(MPI_Comm sub, const char *path, int64_t n, int64_t cols, int saved) {
  int sr, ss;
  MPI_Comm_rank(sub, &sr);
  MPI_Comm_size(sub, &ss);
  nuce_balancer *b = NULL;
  check(nuce_balancer_create(sub, &b) == NUCE_OK, "restart: balancer");
  double *sp = malloc(ss * sizeof *sp);
  for (int r = 0; r < ss; r++) sp[r] = (double)(ss - r);
  check(nuce_set_speeds(b, sp, ss) == NUCE_OK, "restart: set_speeds");
  nuce_saved_graph *s = NULL;
  check(nuce_saved_graph_open(b, path, &s) == NUCE_OK, "restart: saved_graph_open");
  int64_t sn = 0;
  int from = 0;
  const void *user = NULL;
  size_t ulen = 0;
  check(nuce_saved_graph_info(s, &sn, &from, &user, &ulen) == NUCE_OK && sn == n && from == saved && ulen == 6 &&
            memcmp(user, "dgraph", 6) == 0,
        "restart: the saved graph's size, ranks and user bytes");
  double saved_speeds[8];
  int nspeeds = -1;
  check(nuce_saved_graph_speeds(s, 8, saved_speeds, &nspeeds) == NUCE_OK && nspeeds == saved &&
            saved_speeds[0] > 0.0,
        "restart: the checkpoint's speeds of the ranks that saved it");
  nuce_graph *g = NULL;
  check(nuce_saved_graph_create(s, b, 200, &g) == NUCE_ERR_SHAPE_MISMATCH && g == NULL,
        "restart: records of another size refused");
  check(nuce_saved_graph_create(s, b, sizeof(record), &g) == NUCE_OK, "restart: saved_graph_create");
  verify(g, sub, n, cols, sp, "restart");
  free(sp);
  nuce_graph_free(g);
  nuce_saved_graph_free(s);
  nuce_balancer_free(b);
}

/* A standby rank joins a graph: the last rank waits in a pool
 * (nuce_pool_wait_all), the others build the graph and admit it with their
 * records (nuce_pool_admit_all) — after a NULL slot buffer on one of them,
 * the same error on every active rank. Then every vertex once, every record
 * with its vertex on every rank of the grown communicator, the joined rank
 * owning some. */
static void join_graph(int64_t rows, int64_t cols) {
  int standby = rank == size - 1, joined = 0;
  MPI_Comm active = MPI_COMM_NULL, grown = MPI_COMM_NULL;
  nuce_pool *pool = NULL;
  nuce_balancer *b = NULL;
  nuce_graph *g = NULL;
  check(nuce_pool_create(MPI_COMM_WORLD, standby, &active, &pool) == NUCE_OK, "join: pool_create");
  if (standby) {
    int ngrids = -1, ngraphs = -1;
    check(nuce_pool_wait_all(pool, &joined, &grown, &b, 0, NULL, &ngrids, 1, &g, &ngraphs) == NUCE_OK &&
              joined && ngrids == 0 && ngraphs == 1,
          "join: wait_all gives the graph");
  } else {
    int ar, as, lo, hi;
    MPI_Comm_rank(active, &ar);
    MPI_Comm_size(active, &as);
    check(nuce_balancer_create(active, &b) == NUCE_OK, "join: balancer");
    piece p = grid_rows(rows, cols, ar * rows / as, (ar + 1) * rows / as);
    check(nuce_graph_from_local(b, p.n, p.ids, p.xadj, p.adj, NULL, NULL, 2, p.coords, sizeof(record), p.values,
                                &g) == NUCE_OK,
          "join: from_local");
    size_t owned = 0, ghosts = 0, arcs = 0;
    check(nuce_graph_sizes(g, &owned, &ghosts, &arcs) == NUCE_OK, "join: sizes");
    size_t len = owned + ghosts;
    record *slots = calloc(len + 1, sizeof *slots);
    check(nuce_graph_read(g, slots, len) == NUCE_OK, "join: read");
    const void *values = ar == as - 1 ? NULL : (const void *)slots;
    int rc = nuce_pool_admit_all(pool, b, 1, 0, NULL, 1, &g, &values, &len, &grown);
    MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, active);
    MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, active);
    check(rc == NUCE_ERR_INVALID_INPUT && lo == hi, "join: a NULL slot buffer on one active rank, the same error on all");
    values = slots;
    check(nuce_pool_admit_all(pool, b, 1, 0, NULL, 1, &g, &values, &len, &grown) == NUCE_OK, "join: admit_all");
    joined = 1;
    free(slots);
    piece_free(&p);
    MPI_Comm_free(&active);
  }
  if (joined) {
    size_t owned = 0, ghosts = 0, arcs = 0;
    verify(g, grown, rows * cols, cols, NULL, "after a standby rank joined");
    check(nuce_graph_sizes(g, &owned, &ghosts, &arcs) == NUCE_OK && (!standby || owned > 0),
          "join: the joined rank owns vertices");
    check(nuce_pool_release(pool, b) == NUCE_OK, "join: pool_release");
    MPI_Comm_free(&grown);
  }
  nuce_graph_free(g);
  nuce_balancer_free(b);
  nuce_pool_free(pool);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int64_t rows = argc > 2 ? atoll(argv[1]) : 24, cols = argc > 2 ? atoll(argv[2]) : 20;
  int64_t n = rows * cols;
  nuce_balancer *b = NULL;
  check(nuce_balancer_create(MPI_COMM_WORLD, &b) == NUCE_OK, "balancer");
  double *speeds = malloc(size * sizeof *speeds), *slow = malloc(size * sizeof *slow);
  for (int r = 0; r < size; r++) {
    speeds[r] = r + 1.0;
    slow[r] = (double)(size - r);
  }
  expect_all(nuce_set_speeds(b, speeds, size), NUCE_OK, "set_speeds");

  // ANCHOR: dgraph_c
  /* Every rank builds only its own rows. */
  piece p = grid_rows(rows, cols, rank * rows / size, (rank + 1) * rows / size);
  nuce_graph *g = NULL;
  int rc = nuce_graph_from_local(b, p.n, p.ids, p.xadj, p.adj, NULL, NULL, 2, p.coords, sizeof(record),
                                 p.values, &g); /* partitioned ∝ speeds */
  // ANCHOR_END: dgraph_c
  expect_all(rc, NUCE_OK, "from_local");
  if (rc != NUCE_OK) MPI_Abort(MPI_COMM_WORLD, 1);
  size_t len, owned;
  record *slots = fresh_slots(g, &len, &owned, "first partition");
  check_shares(owned, speeds, n, cols, "first partition in proportion to nuce_set_speeds");

  /* Phases at the opposite speeds: the balance points move vertices. */
  int iters = 1000, remaps = 0;
  for (int phase = 0; phase < 2; phase++) {
    record_phase(b, owned, iters, slow[rank]);
    int remapped = 0;
    rc = phase == 0 ? nuce_graph_maybe_remap(b, g, iters, slots, len, &remapped)
                    : nuce_graph_maybe_remap_ahead(b, g, iters, 100 * iters, slots, len, &remapped);
    expect_all(rc, NUCE_OK, phase == 0 ? "maybe_remap" : "maybe_remap_ahead");
    expect_all(remapped, remapped, "remapped the same on every rank");
    if (remapped) {
      remaps++;
      free(slots);
      slots = fresh_slots(g, &len, &owned, phase == 0 ? "after maybe_remap" : "after maybe_remap_ahead");
    }
  }
  check(size == 1 || remaps > 0, "a remap after the speeds changed");
  check_shares(owned, slow, n, cols, "after the remaps in proportion to the phases' speeds");

  /* Every record on rank 0, in global order. */
  record *all = rank == 0 ? malloc(n * sizeof *all) : NULL;
  expect_all(nuce_graph_gather(g, slots, len, all, rank == 0 ? (size_t)n : 0), NUCE_OK, "gather");
  if (rank == 0) {
    int ok = 1;
    for (int64_t v = 0; v < n; v++) ok &= all[v].id == v && all[v].x == record_of(v).x;
    check(ok, "gathered records in global order");
    free(all);
  }

  /* Save, then restart on the ranks but the last (on the one rank alone). */
  char path[512];
  const char *dir = getenv("TMPDIR");
  long pid = (long)getpid();
  MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  snprintf(path, sizeof path, "%s/nuce-dgraph-%ld.nuce", dir ? dir : "/tmp", pid);
  /* A checkpoint: the graph and the balancer's speeds. */
  expect_all(nuce_graph_checkpoint(b, g, path, slots, len, "dgraph", 6), NUCE_OK, "graph_checkpoint");
  nuce_saved *as_grid = NULL;
  expect_all(nuce_saved_open(b, path, &as_grid), NUCE_ERR_INVALID_INPUT, "a graph's file opened as a grid's");
  int in = size == 1 || rank < size - 1;
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, rank, &sub);
  if (in) {
    restart(sub, path, n, cols, size);
    MPI_Comm_free(&sub);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) remove(path);

  /* Bad pieces: the same error on every rank, no handle. */
  nuce_graph *bad = NULL;
  int64_t keep = p.n ? p.ids[0] : 0;
  if (size > 1 && rank == size - 1 && p.n) p.ids[0] = 0; /* vertex 0 twice */
  expect_all(nuce_graph_from_local(b, p.n, p.ids, p.xadj, p.adj, NULL, NULL, 2, p.coords, sizeof(record), p.values,
                                   &bad),
             size > 1 ? NUCE_ERR_INVALID_INPUT : NUCE_OK, "duplicate global id");
  nuce_graph_free(bad);
  bad = NULL;
  if (p.n) p.ids[0] = keep;
  int64_t keep_adj = p.xadj[p.n] ? p.adj[0] : 0;
  if (rank == 0 && p.xadj[p.n]) p.adj[0] = n + 7; /* nobody owns it */
  expect_all(nuce_graph_from_local(b, p.n, p.ids, p.xadj, p.adj, NULL, NULL, 2, p.coords, sizeof(record), p.values,
                                   &bad),
             NUCE_ERR_INVALID_INPUT, "neighbour id nobody owns");
  check(bad == NULL, "no handle after an error");
  if (p.xadj[p.n]) p.adj[0] = keep_adj;
  expect_all(nuce_graph_from_local(b, p.n, rank == size - 1 ? NULL : p.ids, p.xadj, p.adj, NULL, NULL, 2, p.coords,
                                   sizeof(record), p.values, &bad),
             NUCE_ERR_INVALID_INPUT, "global_ids NULL on the last rank");
  expect_all(nuce_graph_from_local(b, p.n, p.ids, p.xadj, p.adj, NULL, NULL, 0, NULL, sizeof(record), p.values, &bad),
             NUCE_ERR_INVALID_INPUT, "no coordinates");
  check(bad == NULL, "no handle after an error");

  /* The last rank leaves: its vertices move to the others, which go on. */
  if (size > 1) {
    int nleaving = 0, released = 0;
    MPI_Comm stay = MPI_COMM_NULL;
    expect_all(nuce_depart(b, rank == size - 1, &nleaving), NUCE_OK, "depart");
    expect_all(nuce_graph_depart(b, g, slots, len), NUCE_OK, "graph_depart");
    expect_all(nuce_depart_finish_all(b, 0, NULL, 1, &g, &stay, &released), NUCE_OK, "depart_finish_all");
    check(nleaving == 1 && released == (rank == size - 1), "the last rank released, the others stay");
    if (!released) {
      verify(g, stay, n, cols, NULL, "after the last rank left");
      MPI_Comm_free(&stay);
    }
  }

  if (size > 1) join_graph(rows, cols);

  free(slots);
  nuce_graph_free(g);
  piece_free(&p);
  free(speeds);
  free(slow);
  nuce_balancer_free(b);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && total == 0) printf("dgraph: all %d checks passed on %d ranks\n", checks, size);
  MPI_Finalize();
  return total != 0;
}
