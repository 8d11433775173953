/* Benchmark helper of the PETSc ports (nuce): with -slow_rank R -slow_work K, rank R repeats K
   products of its local diagonal block (MPIAIJ) at every iteration of the KSP: a rank slower per
   cell, whatever the machine's load. Not part of PETSc's tutorials. */
#ifndef NUCE_SLOW_RANK_H
#define NUCE_SLOW_RANK_H
#include <petscksp.h>

static PetscInt slow_rank = -1, slow_work = 0;

static PetscErrorCode SlowRank(KSP ksp, PetscInt it, PetscReal rnorm, void *ctx)
{
  static Vec  x = NULL, y = NULL;
  PetscMPIInt rank;
  Mat         A, Ad;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)ksp), &rank));
  if (rank != slow_rank) PetscFunctionReturn(0);
  PetscCall(KSPGetOperators(ksp, &A, NULL));
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, NULL, NULL));
  if (!x) {
    PetscCall(MatCreateVecs(Ad, &x, &y));
    PetscCall(VecSet(x, 1.0));
  }
  for (PetscInt k = 0; k < slow_work; k++) PetscCall(MatMult(Ad, x, y));
  PetscFunctionReturn(0);
}

/* Reads -slow_rank and -slow_work and, when a rank is named, monitors ksp with SlowRank. */
static PetscErrorCode SlowRankSet(KSP ksp)
{
  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-slow_rank", &slow_rank, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-slow_work", &slow_work, NULL));
  if (slow_rank >= 0) PetscCall(KSPMonitorSet(ksp, SlowRank, NULL, NULL));
  PetscFunctionReturn(0);
}
#endif
