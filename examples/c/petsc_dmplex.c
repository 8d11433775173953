/* The PETSc partitioner "nuce" on a DMPlex: registers it
 * (NucePetscPartitionerRegister), sets the ranks' speeds (--speeds, or
 * --phases to record a phase per rank with those speeds instead), creates a
 * 2D box mesh of --faces N x N cells on rank 0 and distributes it with the
 * partitioner chosen by -petscpartitioner_type (e.g. nuce). Checks that
 * every cell is owned exactly once (the local cell counts and the owned
 * cells of DMPlex's cell numbering both sum to N*N) and that the parts
 * follow the speeds (none above its share by more than 4 % + 2 cells, none
 * below 85 % of it: a repartition trades a little balance for the cut
 * and for cells that stay). With --then
 * s0,s1,..: sets those speeds and redistributes the distributed mesh,
 * checks the same, and reports how many cells changed rank (from the
 * migration SF) against the least any partition for the new speeds moves.
 *
 *   mpicc petsc_dmplex.c $(pkg-config --cflags --libs nuce-petsc) -o petsc_dmplex
 *   mpirun -np 2 ./petsc_dmplex --faces 40 --speeds 1,1 --then 1,3 -petscpartitioner_type nuce
 */
#include <nuce_petsc.h>
#include <petscdmplex.h>
#include <petscsf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NUCE_CALL(call)                                                                      \
  do {                                                                                       \
    int rc_ = (call);                                                                        \
    if (rc_ != NUCE_OK) {                                                                    \
      fprintf(stderr, "petsc_dmplex: %s failed (%d): %s\n", #call, rc_, nuce_last_error()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
    }                                                                                        \
  } while (0)

static void parse(const char *list, double *s, int size) {
  for (int r = 0; r < size; r++) s[r] = 1;
  for (int r = 0; list && r < size; r++) {
    s[r] = atof(list);
    list = strchr(list, ',');
    if (list) list++;
  }
}

/* Gives the balancer the speeds s: set, or recorded as one phase per rank. */
static void give_speeds(nuce_balancer *b, const double *s, int size, int rank, int phases) {
  if (phases)
    NUCE_CALL(nuce_record_phase(b, 1000.0, 1000.0 / s[rank] * 1e-3));
  else
    NUCE_CALL(nuce_set_speeds(b, s, (size_t)size));
}

/* Checks the distribution of dm (G cells in all) against the speeds s. */
static PetscErrorCode check(DM dm, const double *s, PetscInt G, int *ok) {
  MPI_Comm comm = PetscObjectComm((PetscObject)dm);
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  PetscInt cStart, cEnd, owned = 0;
  IS num;
  const PetscInt *id;
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  PetscCall(DMPlexGetCellNumbering(dm, &num));
  PetscCall(ISGetIndices(num, &id));
  for (PetscInt c = 0; c < cEnd - cStart; c++) owned += id[c] >= 0;
  PetscCall(ISRestoreIndices(num, &id));
  long long mine[2] = {cEnd - cStart, owned}, sum[2];
  PetscCallMPI(MPI_Allreduce(mine, sum, 2, MPI_LONG_LONG, MPI_SUM, comm));
  long long *all = malloc((size_t)size * sizeof *all);
  PetscCallMPI(MPI_Allgather(&mine[0], 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, comm));
  double total = 0;
  for (int r = 0; r < size; r++) total += s[r];
  *ok = sum[0] == G && sum[1] == G;
  if (rank == 0) printf("petsc_dmplex: cells per rank");
  for (int r = 0; r < size; r++) {
    double share = G * s[r] / total;
    if (all[r] > share * 1.04 + 2 || all[r] < share * 0.85 - 2) *ok = 0; /* over: the time; under: the cut */
    if (rank == 0) printf(" %lld (share %.0f)", all[r], share);
  }
  if (rank == 0)
    printf(", sum %lld, owned %lld of %lld: %s\n", sum[0], sum[1], (long long)G, *ok ? "ok" : "WRONG");
  free(all);
  return 0;
}

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  MPI_Comm comm = PETSC_COMM_WORLD;
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  PetscInt faces[2] = {40, 40};
  const char *first = NULL, *then = NULL;
  int phases = 0;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--faces") && a + 1 < argc) faces[0] = faces[1] = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--speeds") && a + 1 < argc) first = argv[++a];
    else if (!strcmp(argv[a], "--then") && a + 1 < argc) then = argv[++a];
    else if (!strcmp(argv[a], "--phases")) phases = 1;
  }
  const PetscInt G = faces[0] * faces[1];
  double *s = malloc((size_t)size * sizeof *s), *t = malloc((size_t)size * sizeof *t);
  parse(first, s, size);
  parse(then, t, size);

  nuce_balancer *b = NULL;
  NUCE_CALL(nuce_balancer_create(comm, &b));
  NUCE_CALL(nuce_set_speeds(b, s, (size_t)size)); /* the first speeds: known */
  PetscCall(NucePetscPartitionerRegister(b));

  DM dm, dist = NULL;
  PetscCall(DMPlexCreateBoxMesh(comm, 2, PETSC_FALSE, faces, NULL, NULL, NULL, PETSC_TRUE, &dm));
  PetscPartitioner part;
  PetscCall(DMPlexGetPartitioner(dm, &part));
  PetscCall(PetscPartitionerSetFromOptions(part));
  PetscSF sf;
  PetscCall(DMPlexDistribute(dm, 0, &sf, &dist));
  if (!dist) dist = dm; /* one rank */
  else PetscCall(DMDestroy(&dm));
  PetscCall(PetscSFDestroy(&sf));
  int ok = 1, ok2 = 1;
  PetscCall(check(dist, s, G, &ok));

  if (then && size > 1) {
    give_speeds(b, t, size, rank, phases);
    PetscCall(DMPlexGetPartitioner(dist, &part));
    PetscCall(PetscPartitionerSetFromOptions(part));
    DM again = NULL;
    PetscCall(DMPlexDistribute(dist, 0, &sf, &again));
    PetscCheck(again, comm, PETSC_ERR_PLIB, "no redistribution");
    PetscCall(check(again, t, G, &ok2));
    /* Cells that changed rank: leaves of the migration SF whose root is elsewhere. */
    PetscInt nroots, nleaves, cStart, cEnd;
    const PetscInt *ilocal;
    const PetscSFNode *iremote;
    PetscCall(PetscSFGetGraph(sf, &nroots, &nleaves, &ilocal, &iremote));
    PetscCall(DMPlexGetHeightStratum(again, 0, &cStart, &cEnd));
    long long moved = 0, all = 0;
    for (PetscInt l = 0; l < nleaves; l++) {
      PetscInt point = ilocal ? ilocal[l] : l;
      if (point >= cStart && point < cEnd && iremote[l].rank != rank) moved++;
    }
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_LONG_LONG, MPI_SUM, comm));
    /* The least any partition moves: the cells the ranks gain, sum of max(0, new share - old). */
    double ss = 0, ts = 0, least = 0;
    for (int r = 0; r < size; r++) ss += s[r], ts += t[r];
    for (int r = 0; r < size; r++) least += PetscMax(0.0, G * (t[r] / ts - s[r] / ss));
    all = G;
    if (rank == 0)
      printf("petsc_dmplex: redistribution moved %lld of %lld cells (least possible %.0f)\n", moved, all, least);
    if (moved > least + 0.10 * G) ok2 = 0;
    PetscCall(PetscSFDestroy(&sf));
    PetscCall(DMDestroy(&again));
  }
  if (rank == 0) printf("petsc_dmplex: %s\n", ok && ok2 ? "every cell owned once, parts follow the speeds" : "FAILED");
  PetscCall(DMDestroy(&dist));
  NUCE_CALL(nuce_balancer_free(b));
  free(s);
  free(t);
  PetscCall(PetscFinalize());
  return ok && ok2 ? 0 : 1;
}
