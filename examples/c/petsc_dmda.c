/* PETSc DMDA ownership ranges from nuce: measures the ranks' speeds with
 * nuce (or takes them from --speeds s0,s1,..., or, with --phases
 * s0,s1,..., has every rank record one phase at its speed with
 * nuce_record_phase, as a program timing its solves does, and checks that
 * lx then follows those speeds), asks nuce_ownership_ranges
 * for lx, ly, lz of an M x N x P grid, creates the DMDA with them
 * (DMDACreate3d) and checks on every rank that the corners PETSc gives
 * (DMDAGetCorners) are the box nuce planned for that rank: rank
 * r = i + m*(j + n*k) owns lx[i] x ly[j] x lz[k].
 *
 *   mpicc petsc_dmda.c $(pkg-config --cflags --libs nuce petsc) -o petsc_dmda
 *   mpirun -np 2 ./petsc_dmda --grid 48 32 16 --speeds 1,3
 */
#include <petscdmda.h>
#include <nuce.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NUCE_CALL(call)                                                                    \
  do {                                                                                     \
    int rc_ = (call);                                                                      \
    if (rc_ != NUCE_OK) {                                                                  \
      fprintf(stderr, "petsc_dmda: %s failed (%d): %s\n", #call, rc_, nuce_last_error()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                        \
    }                                                                                      \
  } while (0)

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  MPI_Comm comm = PETSC_COMM_WORLD;
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int64_t n[3] = {48, 32, 16};
  const char *speeds = NULL;
  int phases = 0;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--grid") && a + 3 < argc) {
      for (int d = 0; d < 3; d++) n[d] = atoll(argv[++a]);
    } else if (!strcmp(argv[a], "--speeds") && a + 1 < argc) {
      speeds = argv[++a];
    } else if (!strcmp(argv[a], "--phases") && a + 1 < argc) {
      speeds = argv[++a];
      phases = 1;
    }
  }

  nuce_balancer *b = NULL;
  NUCE_CALL(nuce_balancer_create(comm, &b));
  double *s = calloc((size_t)size, sizeof *s);
  if (speeds) { /* known speeds (rank 0's list is used), e.g. for a test */
    const char *p = speeds;
    for (int r = 0; r < size; r++) {
      s[r] = atof(p);
      p = strchr(p, ',');
      if (!p) break;
      p++;
    }
    if (phases) /* 1000 units of work at this rank's speed (per millisecond) */
      NUCE_CALL(nuce_record_phase(b, 1000.0, 1.0 / s[rank]));
    else
      NUCE_CALL(nuce_set_speeds(b, s, (size_t)size));
  } else {
    NUCE_CALL(nuce_measure(b)); /* nuce's built-in kernel on every rank */
  }

  /* All three 0: nuce chooses the processor grid. Room for min(n[a], size) ranges. */
  int procs[3] = {0, 0, 0};
  if (phases) procs[0] = size, procs[1] = procs[2] = 1; /* slabs along x: lx alone follows the speeds */
  int64_t *l[3];
  for (int a = 0; a < 3; a++) l[a] = calloc((size_t)size, sizeof(int64_t));
  double imbalance = 0;
  NUCE_CALL(nuce_ownership_ranges(b, n, procs, l[0], l[1], l[2], &imbalance));

  PetscInt *pl[3];
  for (int a = 0; a < 3; a++) {
    pl[a] = malloc((size_t)procs[a] * sizeof(PetscInt));
    for (int i = 0; i < procs[a]; i++) pl[a][i] = (PetscInt)l[a][i];
  }
  DM da;
  PetscCall(DMDACreate3d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE,
                         DMDA_STENCIL_STAR, (PetscInt)n[0], (PetscInt)n[1], (PetscInt)n[2],
                         procs[0], procs[1], procs[2], 1, 1, pl[0], pl[1], pl[2], &da));
  PetscCall(DMSetUp(da));
  PetscInt xs, ys, zs, xm, ym, zm;
  PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));

  /* nuce's box of this rank, in DMDA's rank order (x fastest). */
  int slot[3] = {rank % procs[0], (rank / procs[0]) % procs[1], rank / (procs[0] * procs[1])};
  int64_t lo[3] = {0, 0, 0};
  for (int a = 0; a < 3; a++)
    for (int i = 0; i < slot[a]; i++) lo[a] += l[a][i];
  int ok = xs == lo[0] && ys == lo[1] && zs == lo[2] && xm == l[0][slot[0]] &&
           ym == l[1][slot[1]] && zm == l[2][slot[2]];
  printf("petsc_dmda: rank %d corners (%d, %d, %d) size %d x %d x %d: %s\n", rank, (int)xs,
         (int)ys, (int)zs, (int)xm, (int)ym, (int)zm, ok ? "matches nuce" : "DIFFERS from nuce");
  fflush(stdout);
  if (phases) { /* lx follows the recorded speeds, up to a cell */
    double total = 0;
    for (int r = 0; r < size; r++) total += s[r];
    for (int r = 0; r < size; r++)
      if (fabs((double)l[0][r] - (double)n[0] * s[r] / total) > 1.0) ok = 0;
  }
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
  if (rank == 0) {
    printf("petsc_dmda: grid %d x %d x %d, lx =", procs[0], procs[1], procs[2]);
    for (int i = 0; i < procs[0]; i++) printf(" %lld", (long long)l[0][i]);
    printf(", ly =");
    for (int i = 0; i < procs[1]; i++) printf(" %lld", (long long)l[1][i]);
    printf(", lz =");
    for (int i = 0; i < procs[2]; i++) printf(" %lld", (long long)l[2][i]);
    printf(", imbalance %.4f\n", imbalance);
    printf("petsc_dmda: %s\n", all_ok ? "every rank's corners match nuce's ranges" : "MISMATCH");
  }
  PetscCall(DMDestroy(&da));
  for (int a = 0; a < 3; a++) {
    free(pl[a]);
    free(l[a]);
  }
  free(s);
  NUCE_CALL(nuce_balancer_free(b));
  PetscCall(PetscFinalize());
  return all_ok ? 0 : 1;
}
