/* The PETSc partitioner type "nuce" (see nuce_petsc.h): PETSc gives each
 * rank its cells' part of the dual graph (CSR with global cell numbers, as
 * for ParMETIS); the graph is gathered on rank 0, which partitions it with
 * nuce (nuce_partition_graph) or, when the cells are already spread over
 * several ranks, repartitions it from where they are
 * (nuce_repartition_graph, moving few cells), for target weights from the
 * target section or the balancer's speeds, and scatters every cell's part
 * back. Errors are PETSc errors on every rank, with nuce's message. */
#include <petsc/private/partitionerimpl.h>
#include "nuce_petsc.h"

typedef struct {
  nuce_balancer *b;
  PetscReal      itr; /* cost of one cut edge over moving one cell (ParMETIS's itr) */
} PetscPartitioner_Nuce;

static nuce_balancer *default_balancer = NULL;

static PetscErrorCode PetscPartitionerDestroy_Nuce(PetscPartitioner part)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(part->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscPartitionerView_Nuce(PetscPartitioner part, PetscViewer viewer)
{
  PetscPartitioner_Nuce *p = (PetscPartitioner_Nuce *)part->data;
  PetscBool              iascii;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (iascii) {
    PetscCall(PetscViewerASCIIPushTab(viewer));
    PetscCall(PetscViewerASCIIPrintf(viewer, "nuce: parts by %s, itr %g\n", p->b ? "the balancer's speeds" : "equal weights", (double)p->itr));
    PetscCall(PetscViewerASCIIPopTab(viewer));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscPartitionerSetFromOptions_Nuce(PetscPartitioner part, PetscOptionItems *PetscOptionsObject)
{
  PetscPartitioner_Nuce *p = (PetscPartitioner_Nuce *)part->data;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "PetscPartitioner nuce options");
  PetscCall(PetscOptionsReal("-petscpartitioner_nuce_itr", "Cost of one cut edge over moving one cell, when repartitioning", "", p->itr, &p->itr, NULL));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

/* The target weight of every part: the target section's sizes, else the
 * balancer's speeds (one part per rank), else equal. Collective. */
static PetscErrorCode TargetWeights(PetscPartitioner part, PetscInt nparts, PetscSection targetSection, double *tp)
{
  PetscPartitioner_Nuce *p = (PetscPartitioner_Nuce *)part->data;
  PetscMPIInt            size;
  double                 sum = 0;

  PetscFunctionBegin;
  for (PetscInt q = 0; q < nparts; ++q) tp[q] = 1.0;
  if (targetSection) {
    for (PetscInt q = 0; q < nparts; ++q) {
      PetscInt dof;
      PetscCall(PetscSectionGetDof(targetSection, q, &dof));
      tp[q] = (double)dof;
      sum += tp[q];
    }
    if (sum <= 0)
      for (PetscInt q = 0; q < nparts; ++q) tp[q] = 1.0;
    else /* nuce wants every target > 0: an empty part gets a tiny one */
      for (PetscInt q = 0; q < nparts; ++q) tp[q] = PetscMax(tp[q], 1e-9 * sum);
    PetscFunctionReturn(0);
  }
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)part), &size));
  if (!p->b || nparts != size) PetscFunctionReturn(0);
  int rc = nuce_update_speeds(p->b);
  PetscCheck(rc == NUCE_OK, PetscObjectComm((PetscObject)part), PETSC_ERR_LIB, "nuce_update_speeds failed (%d): %s", rc, nuce_last_error());
  if (nuce_speeds(p->b, tp, (size_t)nparts) != NUCE_OK) /* no speed known yet: equal parts */
    for (PetscInt q = 0; q < nparts; ++q) tp[q] = 1.0;
  PetscFunctionReturn(0);
}

/* Rank 0's partition of the gathered graph (n cells, xadj/adjncy in global
 * numbers, vertex weights or NULL, the current rank of every cell): the
 * part of every cell, or a nuce error code with its message in msg. */
static int PartitionAtRoot(PetscPartitioner_Nuce *p, int64_t n, const int64_t *xadj, const int64_t *adjncy, const double *vwgt, const int64_t *current, PetscInt nparts, const double *tp, int64_t *parts, char *msg, size_t len)
{
  nuce_csr g    = {n, xadj, adjncy, vwgt, NULL, 0, NULL};
  int      spread = 0;
  for (int64_t v = 0; v < n; ++v)
    if (current[v] != current[0]) spread = 1;
  int rc = spread ? nuce_repartition_graph(&g, nparts, tp, current, (double)p->itr, parts, NULL, NULL) : nuce_partition_graph(&g, nparts, tp, NUCE_ALGO_MULTILEVEL, parts, NULL);
  if (rc != NUCE_OK) snprintf(msg, len, "%s failed (%d): %s", spread ? "nuce_repartition_graph" : "nuce_partition_graph", rc, nuce_last_error());
  return rc;
}

static PetscErrorCode PetscPartitionerPartition_Nuce(PetscPartitioner part, PetscInt nparts, PetscInt numVertices, PetscInt start[], PetscInt adjacency[], PetscSection vertSection, PetscSection targetSection, PetscSection partSection, IS *partition)
{
  PetscPartitioner_Nuce *p = (PetscPartitioner_Nuce *)part->data;
  MPI_Comm               comm;
  PetscMPIInt            size, rank;
  int                   *counts = NULL, *displs = NULL, *acounts = NULL, *adispls = NULL;
  int64_t               *mine, *myadj, *xadj = NULL, *adjncy = NULL, *current = NULL, *parts = NULL, *myparts;
  int64_t               *deg = NULL;
  double                *tp, *myw = NULL, *vwgt = NULL;
  int64_t                total = 0, arcs = 0;
  int                    n = (int)numVertices, m = numVertices ? (int)start[numVertices] : 0, rc = NUCE_OK;
  char                   msg[1024] = "";
  PetscInt              *points;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetComm((PetscObject)part, &comm));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscMalloc1(nparts, &tp));
  PetscCall(TargetWeights(part, nparts, targetSection, tp));

  /* This rank's cells: degrees, global neighbours, weights. */
  PetscCall(PetscMalloc3(n + 1, &mine, m + 1, &myadj, n + 1, &myparts));
  for (int v = 0; v < n; ++v) mine[v] = start[v + 1] - start[v];
  for (int a = 0; a < m; ++a) myadj[a] = adjacency[a];
  PetscBool weighted = vertSection ? PETSC_TRUE : PETSC_FALSE, any = PETSC_FALSE;
  PetscCallMPI(MPI_Allreduce(&weighted, &any, 1, MPIU_BOOL, MPI_LOR, comm));
  if (any) {
    PetscCall(PetscMalloc1(n + 1, &myw));
    for (int v = 0; v < n; ++v) {
      PetscInt dof = 1;
      if (vertSection) PetscCall(PetscSectionGetDof(vertSection, v, &dof));
      myw[v] = (double)dof;
    }
  }

  /* Gather the graph on rank 0. */
  if (rank == 0) PetscCall(PetscCalloc4(size, &counts, size + 1, &displs, size, &acounts, size + 1, &adispls));
  PetscCallMPI(MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Gather(&m, 1, MPI_INT, acounts, 1, MPI_INT, 0, comm));
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      displs[r + 1]  = displs[r] + counts[r];
      adispls[r + 1] = adispls[r] + acounts[r];
    }
    total = displs[size];
    arcs  = adispls[size];
    PetscCall(PetscMalloc5(total + 1, &deg, total + 1, &xadj, arcs + 1, &adjncy, total + 1, &current, total + 1, &parts));
    if (any) PetscCall(PetscMalloc1(total + 1, &vwgt));
    for (int r = 0; r < size; ++r)
      for (int v = displs[r]; v < displs[r + 1]; ++v) current[v] = r;
  }
  PetscCallMPI(MPI_Gatherv(mine, n, MPI_INT64_T, deg, counts, displs, MPI_INT64_T, 0, comm));
  PetscCallMPI(MPI_Gatherv(myadj, m, MPI_INT64_T, adjncy, acounts, adispls, MPI_INT64_T, 0, comm));
  if (any) PetscCallMPI(MPI_Gatherv(myw, n, MPI_DOUBLE, vwgt, counts, displs, MPI_DOUBLE, 0, comm));

  if (rank == 0 && total > 0) {
    xadj[0] = 0;
    for (int64_t v = 0; v < total; ++v) xadj[v + 1] = xadj[v] + deg[v];
    rc = PartitionAtRoot(p, total, xadj, adjncy, vwgt, current, nparts, tp, parts, msg, sizeof msg);
  }
  PetscCallMPI(MPI_Bcast(&rc, 1, MPI_INT, 0, comm));
  if (rc != NUCE_OK) {
    PetscCallMPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, comm));
    SETERRQ(comm, PETSC_ERR_LIB, "PetscPartitioner nuce: %s", msg);
  }
  PetscCallMPI(MPI_Scatterv(parts, counts, displs, MPI_INT64_T, myparts, n, MPI_INT64_T, 0, comm));

  /* PETSc's result: this rank's cells part by part. */
  for (int v = 0; v < n; ++v) PetscCall(PetscSectionAddDof(partSection, (PetscInt)myparts[v], 1));
  PetscCall(PetscMalloc1(n, &points));
  PetscInt i = 0;
  for (PetscInt q = 0; q < nparts; ++q)
    for (int v = 0; v < n; ++v)
      if (myparts[v] == q) points[i++] = v;
  PetscCheck(i == n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%" PetscInt_FMT " cells placed of %d", i, n);
  PetscCall(ISCreateGeneral(comm, n, points, PETSC_OWN_POINTER, partition));
  if (rank == 0) {
    PetscCall(PetscFree4(counts, displs, acounts, adispls));
    PetscCall(PetscFree5(deg, xadj, adjncy, current, parts));
    PetscCall(PetscFree(vwgt));
  }
  PetscCall(PetscFree3(mine, myadj, myparts));
  PetscCall(PetscFree(myw));
  PetscCall(PetscFree(tp));
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscPartitionerCreate_Nuce(PetscPartitioner part)
{
  PetscPartitioner_Nuce *p;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(part, PETSCPARTITIONER_CLASSID, 1);
  PetscCall(PetscNew(&p));
  p->b                      = default_balancer;
  p->itr                    = 1.0;
  part->data                = p;
  part->noGraph             = PETSC_FALSE;
  part->ops->view           = PetscPartitionerView_Nuce;
  part->ops->setfromoptions = PetscPartitionerSetFromOptions_Nuce;
  part->ops->destroy        = PetscPartitionerDestroy_Nuce;
  part->ops->partition      = PetscPartitionerPartition_Nuce;
  PetscFunctionReturn(0);
}

PetscErrorCode NucePetscPartitionerRegister(nuce_balancer *b)
{
  PetscFunctionBegin;
  default_balancer = b;
  PetscCall(PetscPartitionerRegister(PETSCPARTITIONERNUCE, PetscPartitionerCreate_Nuce));
  PetscFunctionReturn(0);
}

PetscErrorCode PetscPartitionerNuceSetBalancer(PetscPartitioner part, nuce_balancer *b)
{
  PetscBool isnuce;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(part, PETSCPARTITIONER_CLASSID, 1);
  PetscCall(PetscObjectTypeCompare((PetscObject)part, PETSCPARTITIONERNUCE, &isnuce));
  PetscCheck(isnuce, PetscObjectComm((PetscObject)part), PETSC_ERR_ARG_WRONG, "not a partitioner of type nuce");
  ((PetscPartitioner_Nuce *)part->data)->b = b;
  PetscFunctionReturn(0);
}
