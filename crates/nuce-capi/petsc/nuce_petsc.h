/* nuce for PETSc: the DMPlex partitioner type "nuce" (libnuce_petsc,
 * pkg-config nuce-petsc). See docs/c-api.md, "PETSc DMPlex partitioner". */
#ifndef NUCE_PETSC_H
#define NUCE_PETSC_H

#include <petscpartitioner.h>
#include <nuce.h>

/* The type name: -petscpartitioner_type nuce, or PetscPartitionerSetType(part, PETSCPARTITIONERNUCE). */
#define PETSCPARTITIONERNUCE "nuce"

/* Registers the partitioner type "nuce" with PETSc (after PetscInitialize;
 * calling it again only changes the balancer). Partitioners of this type
 * created afterwards cut the cell graph into parts in proportion to the
 * speeds of the balancer `b` (created on the DM's communicator: the same
 * ranks in the same order) at the time of each partition, after making the
 * phases recorded since the last balance point its speeds
 * (nuce_update_speeds); equal parts while it knows no speed, or when `b` is
 * NULL. A target section given to PETSc (absolute part sizes) takes
 * precedence over the speeds. A distributed mesh is repartitioned from its
 * current distribution, moving few cells (nuce_repartition_graph). */
PETSC_EXTERN PetscErrorCode NucePetscPartitionerRegister(nuce_balancer *b);

/* The balancer of one partitioner of type "nuce" (NULL: equal parts). */
PETSC_EXTERN PetscErrorCode PetscPartitionerNuceSetBalancer(PetscPartitioner part, nuce_balancer *b);

#endif
