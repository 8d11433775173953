/* Zoltan's serial geometric partitioners (RCB, HSFC) on a graph with
 * coordinates, for the side-by-side benchmark of scripts/bench_zoltan.sh
 * (driver examples/bench_zoltan.rs).
 *
 * Reads a METIS graph file (only its vertex count and vertex weights are
 * used: the geometric methods ignore edges; the cut is measured by the Rust
 * driver) and a coordinates file (one vertex per line, 2 or 3 numbers, as
 * nuce's io::write_coords writes it). On one rank, with NUM_GLOBAL_PARTS = p,
 * OBJ_WEIGHT_DIM = 1 (the vertex weights; 1 when the file has none) and the
 * part sizes set to the targets (Zoltan_LB_Set_Part_Sizes), times
 * Zoltan_LB_Partition with LB_METHOD = METHOD, best of REPS, and writes the
 * part of every vertex to OUT (one per line, METIS .part format). Prints one
 * line:
 *   ZOLTAN method <METHOD> n <n> dim <d> parts <p> seconds <best of reps>
 *
 *   zoltan_geom METHOD GRAPH COORDS t0,t1,... OUT REPS [IMBALANCE_TOL]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zoltan.h>

#include "zoltan_geometric.h"

typedef struct {
  int n, dim;
  double *xyz;
  float *w;
} Points;

static void die(const char *msg, const char *what) {
  fprintf(stderr, "zoltan_geom: %s%s%s\n", msg, what ? ": " : "", what ? what : "");
  MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2);
}

/* Next line that is not a METIS comment ('%'); NULL at end of file. */
static char *next_line(FILE *f, char **buf, size_t *cap) {
  while (getline(buf, cap, f) >= 0)
    if ((*buf)[0] != '%') return *buf;
  return NULL;
}

/* n and the vertex weights (first constraint) of a METIS graph file. */
static void read_metis(const char *file, Points *pt) {
  FILE *f = fopen(file, "r");
  char *buf = NULL;
  size_t cap = 0;
  if (!f) die("cannot open graph", file);
  char *l = next_line(f, &buf, &cap);
  if (!l) die("empty graph file", file);
  long n = 0, m = 0, ncon = 1;
  char fmt[16] = "0";
  int got = sscanf(l, "%ld %ld %15s %ld", &n, &m, fmt, &ncon);
  if (got < 2 || n < 1) die("bad METIS header", file);
  size_t fl = strlen(fmt);
  int vsize = fl >= 3 && fmt[fl - 3] == '1';
  int vwgt = fl >= 2 && fmt[fl - 2] == '1';
  pt->n = (int)n;
  pt->w = malloc((size_t)n * sizeof(float));
  for (long v = 0; v < n; v++) {
    pt->w[v] = 1.0f;
    if (!(l = next_line(f, &buf, &cap))) die("graph file ends early", file);
    if (vwgt) {
      char *s = l, *e;
      if (vsize) strtol(s, &e, 10), s = e;
      pt->w[v] = (float)strtod(s, &e);
      if (e == s) die("bad vertex weight", file);
    }
  }
  free(buf);
  fclose(f);
}

static void read_coords(const char *file, Points *pt) {
  FILE *f = fopen(file, "r");
  char *buf = NULL;
  size_t cap = 0;
  if (!f) die("cannot open coordinates", file);
  pt->dim = 0;
  for (int v = 0; v < pt->n; v++) {
    if (getline(&buf, &cap, f) < 0) die("coordinates file ends early", file);
    double x[3];
    char *s = buf, *e;
    int d = 0;
    for (; d < 3; d++, s = e) {
      x[d] = strtod(s, &e);
      if (e == s) break;
    }
    if (v == 0) {
      if (d < 1) die("no coordinates on line 1", file);
      pt->dim = d;
      pt->xyz = malloc((size_t)pt->n * (size_t)d * sizeof(double));
    } else if (d != pt->dim) {
      die("coordinate lines of different lengths", file);
    }
    memcpy(pt->xyz + (size_t)v * (size_t)d, x, (size_t)d * sizeof(double));
  }
  free(buf);
  fclose(f);
}

static int num_obj(void *d, int *ierr) {
  *ierr = ZOLTAN_OK;
  return ((Points *)d)->n;
}

static void obj_list(void *d, int ng, int nl, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int wdim,
                     float *w, int *ierr) {
  Points *pt = d;
  (void)ng; (void)nl; (void)wdim;
  for (int i = 0; i < pt->n; i++) {
    gids[i] = (ZOLTAN_ID_TYPE)i;
    lids[i] = (ZOLTAN_ID_TYPE)i;
    w[i] = pt->w[i];
  }
  *ierr = ZOLTAN_OK;
}

static int num_geom(void *d, int *ierr) {
  *ierr = ZOLTAN_OK;
  return ((Points *)d)->dim;
}

static void geom_multi(void *d, int ng, int nl, int nobj, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids,
                       int dim, double *out, int *ierr) {
  Points *pt = d;
  (void)ng; (void)nl; (void)gids;
  for (int i = 0; i < nobj; i++)
    memcpy(out + (size_t)dim * i, pt->xyz + (size_t)dim * lids[i], (size_t)dim * sizeof(double));
  *ierr = ZOLTAN_OK;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int nranks;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (argc < 7) die("usage: zoltan_geom METHOD GRAPH COORDS t0,t1,... OUT REPS [IMBALANCE_TOL]", NULL);
  if (nranks != 1) die("runs on one rank (serial, like nuce's planners)", NULL);
  const char *method = argv[1], *tol = argc > 7 ? argv[7] : "1.01";
  int reps = atoi(argv[6]);
  if (reps < 1) reps = 1;
  Points pt;
  read_metis(argv[2], &pt);
  read_coords(argv[3], &pt);
  int p = 1;
  for (const char *c = argv[4]; *c; c++) p += *c == ',';
  float *sizes = calloc((size_t)p, sizeof(float));
  int *ids = calloc((size_t)p, sizeof(int)), *widx = calloc((size_t)p, sizeof(int));
  int *part = calloc((size_t)pt.n, sizeof(int));
  char *tok = strtok(argv[4], ",");
  for (int k = 0; k < p; k++, tok = strtok(NULL, ",")) {
    if (!tok || (sizes[k] = (float)atof(tok)) <= 0.0f) die("bad target list", argv[4]);
  }
  char nparts[32];
  snprintf(nparts, sizeof nparts, "%d", p);
  float ver;
  Zoltan_Initialize(argc, argv, &ver);
  GeomCallbacks cb = {num_obj, obj_list, num_geom, geom_multi};
  double best = 1e300;
  for (int rep = 0; rep < reps; rep++) {
    struct Zoltan_Struct *zz = zoltan_geometric(method, "1", cb, &pt, p, ids, widx, sizes);
    Zoltan_Set_Param(zz, "NUM_GLOBAL_PARTS", nparts);
    Zoltan_Set_Param(zz, "IMBALANCE_TOL", tol);
    int changes, ng, nl, nimp, nexp;
    ZOLTAN_ID_PTR ig, il, eg, el;
    int *ip, *ipart, *ep, *epart;
    double t0 = MPI_Wtime();
    int rc = Zoltan_LB_Partition(zz, &changes, &ng, &nl, &nimp, &ig, &il, &ip, &ipart, &nexp, &eg,
                                 &el, &ep, &epart);
    double t = MPI_Wtime() - t0;
    if (rc != ZOLTAN_OK) die("Zoltan_LB_Partition failed", method);
    if (t < best) best = t;
    if (nexp != pt.n) die("Zoltan returned a part for fewer objects than given", method);
    for (int i = 0; i < nexp; i++) part[el[i]] = epart[i];
    Zoltan_LB_Free_Part(&ig, &il, &ip, &ipart);
    Zoltan_LB_Free_Part(&eg, &el, &ep, &epart);
    Zoltan_Destroy(&zz);
  }
  FILE *o = fopen(argv[5], "w");
  if (!o) die("cannot write", argv[5]);
  for (int i = 0; i < pt.n; i++) fprintf(o, "%d\n", part[i]);
  fclose(o);
  printf("ZOLTAN method %s n %d dim %d parts %d seconds %.6f\n", method, pt.n, pt.dim, p, best);
  free(pt.xyz);
  free(pt.w);
  free(part);
  free(sizes);
  free(ids);
  free(widx);
  MPI_Finalize();
  return 0;
}
