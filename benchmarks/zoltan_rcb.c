/* Zoltan's parallel RCB (or HSFC) on the grid of examples/graph_scale.rs,
 * for the side-by-side benchmark of scripts/bench_graph_scale.sh.
 *
 * Every rank generates the same slab as graph_scale (vertices
 * [r*n/p, (r+1)*n/p) of the nx*ny*nz grid in the order x + nx*(y + ny*z),
 * coordinates jittered by the same SplitMix64 hash), sets the part sizes to
 * the given speeds and times Zoltan_LB_Partition with LB_METHOD=METHOD
 * (RCB when not given; HSFC to compare with DistGraph::partition_sfc) and
 * RETURN_LISTS=PARTS (the part of every local object, as nuce's
 * partition_rcb returns the owner of every local vertex). Prints one line:
 *   ZOLTAN method <METHOD> n <n> ranks <p> partition_s <best of reps, max over ranks> imbalance <max load/target - 1> vmhwm_kib <max over ranks>
 *
 *   mpirun -np P zoltan_rcb N REPS s0,s1,... [METHOD]
 */
#include <mpi.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zoltan.h>

#include "zoltan_geometric.h"

typedef struct {
  int64_t lo, n_local;
  double *xyz;
} Slab;

static double hash_unit(uint64_t v, uint64_t salt) {
  uint64_t z = v + salt * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (double)(z >> 11) / (double)(1ULL << 52) - 1.0;
}

static int num_obj(void *d, int *ierr) {
  *ierr = ZOLTAN_OK;
  return (int)((Slab *)d)->n_local;
}

static void obj_list(void *d, int ng, int nl, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int wdim,
                     float *w, int *ierr) {
  Slab *s = d;
  (void)ng; (void)nl; (void)wdim; (void)w;
  for (int64_t i = 0; i < s->n_local; i++) {
    gids[i] = (ZOLTAN_ID_TYPE)(s->lo + i);
    lids[i] = (ZOLTAN_ID_TYPE)i;
  }
  *ierr = ZOLTAN_OK;
}

static int num_geom(void *d, int *ierr) {
  (void)d;
  *ierr = ZOLTAN_OK;
  return 3;
}

static void geom_multi(void *d, int ng, int nl, int nobj, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids,
                       int dim, double *out, int *ierr) {
  Slab *s = d;
  (void)ng; (void)nl; (void)gids; (void)dim;
  for (int i = 0; i < nobj; i++) memcpy(out + 3 * i, s->xyz + 3 * lids[i], 3 * sizeof(double));
  *ierr = ZOLTAN_OK;
}

static long vm_hwm_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = 0;
  if (!f) return 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "VmHWM:", 6) == 0) kib = strtol(line + 6, NULL, 10);
  fclose(f);
  return kib;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (argc < 4) {
    if (rank == 0) fprintf(stderr, "usage: zoltan_rcb N REPS s0,s1,... [RCB|HSFC]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int64_t want = atoll(argv[1]);
  int reps = atoi(argv[2]);
  const char *method = argc > 4 ? argv[4] : "RCB";
  float *sizes = calloc((size_t)p, sizeof(float));
  int *ids = calloc((size_t)p, sizeof(int));
  int *widx = calloc((size_t)p, sizeof(int));
  double tsum = 0.0;
  char *tok = strtok(argv[3], ",");
  for (int k = 0; k < p; k++) {
    if (!tok) {
      if (rank == 0) fprintf(stderr, "need %d speeds\n", p);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    sizes[k] = (float)atof(tok);
    tsum += sizes[k];
    tok = strtok(NULL, ",");
  }
  /* The same grid sides as graph_scale: nx = ny = round(cbrt(N)), nz = ceil(N / nx^2). */
  int64_t nx = (int64_t)llround(cbrt((double)want));
  if (nx < 1) nx = 1;
  int64_t ny = nx, nz = (want + nx * ny - 1) / (nx * ny);
  int64_t n = nx * ny * nz;
  Slab s;
  s.lo = (int64_t)((__int128)n * rank / p);
  s.n_local = (int64_t)((__int128)n * (rank + 1) / p) - s.lo;
  s.xyz = malloc((size_t)(3 * s.n_local + 1) * sizeof(double));
  for (int64_t i = 0; i < s.n_local; i++) {
    int64_t v = s.lo + i;
    int64_t c[3] = {v % nx, (v / nx) % ny, v / (nx * ny)};
    for (int a = 0; a < 3; a++) s.xyz[3 * i + a] = (double)c[a] + 0.3 * hash_unit((uint64_t)v, (uint64_t)a + 1);
  }
  float ver;
  Zoltan_Initialize(argc, argv, &ver);
  GeomCallbacks cb = {num_obj, obj_list, num_geom, geom_multi};
  double best = 1e300, imbalance = 0.0;
  for (int rep = 0; rep < reps; rep++) {
    struct Zoltan_Struct *zz = zoltan_geometric(method, "0", cb, &s, p, ids, widx, sizes);
    int changes, ng, nl, nimp, nexp;
    ZOLTAN_ID_PTR ig, il, eg, el;
    int *ip, *ipart, *ep, *epart;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc = Zoltan_LB_Partition(zz, &changes, &ng, &nl, &nimp, &ig, &il, &ip, &ipart, &nexp, &eg,
                                 &el, &ep, &epart);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rc != ZOLTAN_OK) {
      if (rank == 0) fprintf(stderr, "Zoltan_LB_Partition failed: %d\n", rc);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (tmax < best) best = tmax;
    /* Loads per part from the part of every local object. */
    double *load = calloc((size_t)p, sizeof(double)), *all = calloc((size_t)p, sizeof(double));
    for (int i = 0; i < nexp; i++) load[epart[i]] += 1.0;
    MPI_Allreduce(load, all, p, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    imbalance = 0.0;
    for (int k = 0; k < p; k++) {
      double e = all[k] / ((double)n * sizes[k] / tsum) - 1.0;
      if (e > imbalance) imbalance = e;
    }
    free(load);
    free(all);
    Zoltan_LB_Free_Part(&ig, &il, &ip, &ipart);
    Zoltan_LB_Free_Part(&eg, &el, &ep, &epart);
    Zoltan_Destroy(&zz);
  }
  long hwm = vm_hwm_kib(), hwm_max;
  MPI_Allreduce(&hwm, &hwm_max, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("ZOLTAN method %s n %lld ranks %d partition_s %.4f imbalance %.5f vmhwm_kib %ld\n",
           method, (long long)n, p, best, imbalance, hwm_max);
  free(s.xyz);
  free(sizes);
  free(ids);
  free(widx);
  MPI_Finalize();
  return 0;
}
