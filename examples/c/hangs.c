/* hangs.c — one rank departs from a collective call of nuce's C API; no rank
 * may wait forever. Run under mpirun with NUCE_TIMEOUT_S set (e.g. 5):
 *
 *   mpirun -np 2 hangs CASE
 *
 * CASE (the departing rank is the last one, rank 0 for elem-size-rank0):
 *   null-array        passes a NULL array to nuce_array_gather
 *   null-array-remap  passes a NULL array to nuce_maybe_remap
 *   comm-null         passes MPI_COMM_NULL to nuce_balancer_create
 *   skip-remap        skips nuce_maybe_remap and calls nuce_array_gather
 *                     (after the timeout every rank returns
 *                     NUCE_ERR_DISAGREEMENT, naming both calls)
 *   late-rank         sleeps 30 s before nuce_maybe_remap
 *   elem-size-rank0   passes elem_size 4 to nuce_array_create (others 8)
 *
 * The first failing call prints, on each rank,
 *   "hangs: rank R: FUNCTION returned CODE after T s: MESSAGE"
 * and the rank finalises MPI and exits with CODE (the departing rank of
 * null-array and comm-null first sleeps 60 s: see check()). Where the departing rank
 * cannot be reached (a NULL array handle, MPI_COMM_NULL, a late call) the
 * others end the job within the timeout (nuce's "nuce: timeout:"
 * message on stderr, MPI_Abort with exit code 75). A run where every call
 * succeeds prints "hangs: rank R: no error" and exits 0: the test fails. */
#include <mpi.h>
#include <nuce.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size, unreachable;
static double t0;

/* Reports a failed call and ends this rank with its code. */
static void check(int rc, const char *fn) {
  if (rc == NUCE_OK) return;
  printf("hangs: rank %d: %s returned %d after %.1f s: %s\n", rank, fn, rc, MPI_Wtime() - t0, nuce_last_error());
  fflush(stdout);
  /* Where this rank cannot reach the others (a NULL array, MPI_COMM_NULL),
   * it goes on with other work, here a sleep: the others end the job within
   * the timeout. Calling MPI_Finalize here instead made Open MPI 4.1's
   * mpirun hang or crash in 2 of 5 runs when the others abort (RELIABILITY.md). */
  if (unreachable) sleep(60);
  MPI_Finalize();
  exit(rc);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  t0 = MPI_Wtime();
  const char *c = argc > 1 ? argv[1] : "";
  const char *cases[] = {"null-array", "null-array-remap", "comm-null", "skip-remap", "late-rank", "elem-size-rank0"};
  int known = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) known |= strcmp(c, cases[i]) == 0;
  if (!known) {
    if (rank == 0) fprintf(stderr, "usage: hangs null-array|null-array-remap|comm-null|skip-remap|late-rank|elem-size-rank0\n");
    MPI_Finalize();
    return 2;
  }
  int departs = strcmp(c, "elem-size-rank0") == 0 ? rank == 0 : rank == size - 1;
  unreachable = departs && (strcmp(c, "null-array") == 0 || strcmp(c, "comm-null") == 0);

  nuce_balancer *b = NULL;
  int comm_null = departs && strcmp(c, "comm-null") == 0;
  check(nuce_balancer_create(comm_null ? MPI_COMM_NULL : MPI_COMM_WORLD, &b), "nuce_balancer_create");

  const int64_t rows = 64, cols = 48;
  size_t elem = departs && strcmp(c, "elem-size-rank0") == 0 ? 4 : 8;
  nuce_array *a = NULL;
  check(nuce_array_create(b, rows, cols, elem, 1, &a), "nuce_array_create");
  size_t len = 0;
  check(nuce_array_padded_len(a, &len), "nuce_array_padded_len");
  double *u = calloc(len, sizeof *u);
  check(nuce_array_read(a, u, len), "nuce_array_read");

  if (departs && strcmp(c, "late-rank") == 0) sleep(30);
  if (!(departs && strcmp(c, "skip-remap") == 0)) {
    int remapped = 0;
    nuce_array *which = departs && strcmp(c, "null-array-remap") == 0 ? NULL : a;
    check(nuce_maybe_remap(b, which, 10, u, len, &remapped), "nuce_maybe_remap");
    if (remapped) { /* a new block: its size, then its cells */
      check(nuce_array_padded_len(a, &len), "nuce_array_padded_len");
      free(u);
      u = calloc(len, sizeof *u);
      check(nuce_array_read(a, u, len), "nuce_array_read");
    }
  }
  double *global = rank == 0 ? calloc((size_t)(rows * cols), sizeof *global) : NULL;
  nuce_array *which = departs && strcmp(c, "null-array") == 0 ? NULL : a;
  check(nuce_array_gather(which, u, len, global, rank == 0 ? (size_t)(rows * cols) : 0), "nuce_array_gather");

  printf("hangs: rank %d: no error after %.1f s\n", rank, MPI_Wtime() - t0);
  free(global);
  free(u);
  nuce_array_free(a);
  nuce_balancer_free(b);
  MPI_Finalize();
  return 0;
}
