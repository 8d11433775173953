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

/* `got` must be `want` on this rank, with a message when it is an error;
 * when `collective`, every rank must have got the same code. */
static void expect(int got, int want, int collective, const char *what) {
  int bad = got != want || (want != NUCE_OK && nuce_last_error()[0] == '\0');
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
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
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

  /* Speeds: a zero speed, NULL on the root, the wrong count. */
  double *speeds = malloc((size + 1) * sizeof(double));
  for (int r = 0; r <= size; r++) speeds[r] = 1.0 + r;
  speeds[size - 1] = 0.0;
  expect(nuce_set_speeds(b, speeds, size), NUCE_ERR_INVALID_SPEED, 1, "set_speeds(zero speed)");
  expect(nuce_set_speeds(b, rank == 0 ? NULL : speeds, size), NUCE_ERR_INVALID_INPUT, 1, "set_speeds(NULL)");
  speeds[size - 1] = 2.0;
  expect(nuce_set_speeds(b, speeds, size + 1), NUCE_ERR_SHAPE_MISMATCH, 1, "set_speeds(wrong count)");
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
    expect(nuce_array_create(b, rows, cols, 8, rank == 1 ? 2 : 1, &a), NUCE_ERR_INVALID_INPUT, 1,
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
  expect(nuce_array_exchange_ghosts(a, u, rank == size - 1 ? len + 1 : len), NUCE_ERR_SHAPE_MISMATCH, 1,
         "exchange_ghosts(wrong length on the last rank)");
  expect(nuce_array_exchange_ghosts(a, rank == 0 ? NULL : u, len), NUCE_ERR_INVALID_INPUT, 1,
         "exchange_ghosts(NULL on the root)");
  expect(nuce_array_exchange_ghosts(a, u, len), NUCE_OK, 1, "exchange_ghosts");
  expect(nuce_array_gather(a, u, len, rank == 0 ? NULL : global, rows * cols), NUCE_ERR_INVALID_INPUT, 1,
         "gather(global = NULL on the root)");
  double *back = calloc(rows * cols, sizeof(double));
  expect(nuce_array_gather(a, u, len, back, rows * cols), NUCE_OK, 1, "gather");
  if (rank == 0)
    expect(memcmp(back, global, rows * cols * sizeof(double)) == 0 ? NUCE_OK : -1, NUCE_OK, 0,
           "scatter then gather is the identity");

  /* Phases: bad records, NULL outputs, iterations. */
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
    expect(nuce_set_decomposer(b, rank == size - 1 ? "rb" : "column"), NUCE_ERR_INVALID_INPUT, 1,
           "set_decomposer(names differ)");
  expect(nuce_set_decomposer(b, "rb"), NUCE_OK, 1, "set_decomposer(rb)");
  expect(nuce_plan(b, 30, 20), NUCE_OK, 1, "plan with rb");
  expect(nuce_set_hysteresis(b, rank == size - 1 ? -0.1 : 0.1), NUCE_ERR_INVALID_INPUT, 1,
         "set_hysteresis(negative on the last rank)");
  expect(nuce_set_hysteresis(b, NAN), NUCE_ERR_INVALID_INPUT, 1, "set_hysteresis(NaN)");
  expect(nuce_set_hysteresis(b, 0.1), NUCE_OK, 1, "set_hysteresis(0.1)");
  expect(nuce_set_timeout(b, -1.0), NUCE_ERR_INVALID_INPUT, 1, "set_timeout(negative)");
  if (size > 1)
    expect(nuce_set_timeout(b, rank == 0 ? 30.0 : 31.0), NUCE_ERR_INVALID_INPUT, 1, "set_timeout(values differ)");
  expect(nuce_set_timeout(b, 30.0), NUCE_OK, 1, "set_timeout(30 s)");
  /* Waiting sections: local, nested, balanced. */
  expect(nuce_waiting_end(), NUCE_ERR_INVALID_INPUT, 0, "waiting_end without begin");
  expect(nuce_waiting_begin(), NUCE_OK, 0, "waiting_begin");
  expect(nuce_waiting_begin(), NUCE_OK, 0, "waiting_begin (nested)");
  expect(nuce_waiting_end(), NUCE_OK, 0, "waiting_end (nested)");
  expect(nuce_waiting_end(), NUCE_OK, 0, "waiting_end");
  expect(nuce_array_rect(a, -1, rect), NUCE_ERR_INVALID_INPUT, 0, "array_rect(rank -1)");
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
