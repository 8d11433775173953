! nuce.f90 — the Fortran 2008 interface of nuce (module `nuce`), over the C
! API of libnuce (nuce.h; reference: docs/fortran-api.md).
!
! Arrays are seen in Fortran order. A global n1 x n2 array `g(n1, n2)` is the
! C API's row-major `rows = n2` x `cols = n1` array, so the two describe the
! same memory. A rank's block is given as global index bounds `lo(2)`,
! `hi(2)` (1-based, inclusive) and the application allocates its padded block
! with them:
!
!     allocate (u(lo(1) - g:hi(1) + g, lo(2) - g:hi(2) + g))
!
! which is exactly the C API's padded row-major block, ghost border of width
! `g` included. Elements are real(c_double).
!
! Every procedure takes an optional last argument `ierr` (NUCE_OK or one of
! the NUCE_ERR_* codes, the same on every rank for a collective call). When
! `ierr` is absent and the call fails, the message is written to the error
! unit and the program stops with `error stop` (on every rank, since the
! code agrees), the way MPI's default error handler ends a job.
!
! Communicators: `type(MPI_Comm)` (mpi_f08) or an integer handle (mpi, mpif.h);
! nuce duplicates it and never frees it; it never initialises nor finalises MPI.
!
! Graphs are CSR arrays `xadj(n + 1)`, `adjncy(xadj(n + 1) - numflag)` of
! integer(c_int64_t) numbered from `numflag` (optional: 1, Fortran numbering,
! by default; 0 for C/METIS numbering), as ParMETIS's `numflag`. Vertex ids,
! offsets and local slots that nuce returns, and the vertex ids in its
! messages, follow the same numbering; parts
! and owners are always MPI ranks, 0-based. Master-worker orders are 1-based
! worker indices; AMR submeshes are 1-based inclusive bounds like blocks.
module nuce
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use mpi_f08, only: MPI_Comm
  implicit none
  private

  public :: nuce_balancer, nuce_array, nuce_graph
  public :: nuce_version, nuce_last_error
  public :: nuce_balancer_create, nuce_balancer_free, nuce_measure, nuce_set_speeds, nuce_speeds
  public :: nuce_measure_sizes
  public :: nuce_plan, nuce_plan_box, nuce_plan_1d, nuce_record_phase, nuce_start_phase
  public :: nuce_array_create, nuce_array_scatter, nuce_array_free, nuce_array_box
  public :: nuce_array_read, nuce_array_exchange_ghosts, nuce_array_gather, nuce_maybe_remap
  public :: nuce_set_decomposer, nuce_set_decomposer3, nuce_set_hysteresis, nuce_set_timeout
  public :: nuce_set_memory_limit, nuce_set_memory_limit_from_machine
  public :: nuce_waiting_begin, nuce_waiting_end
  public :: nuce_partition_graph, nuce_graph_partition
  public :: nuce_graph_scatter, nuce_graph_free, nuce_graph_sizes, nuce_graph_owned
  public :: nuce_graph_from_local
  public :: nuce_graph_ghosts, nuce_graph_adjacency, nuce_graph_read
  public :: nuce_graph_exchange_ghosts, nuce_graph_gather, nuce_graph_migrate
  public :: nuce_tasks_min_time, nuce_tasks_max_tasks, nuce_amr_allocate
  public :: nuce_ownership_ranges  ! PETSc DMDA ranges (its procedure: one block below)
  public :: nuce_plan_1d_weighted  ! p4est counts (its procedure: one block below)
  public :: nuce_grid, nuce_field, nuce_exchange
  public :: nuce_grid_create, nuce_grid_free, nuce_grid_box, nuce_grid_neighbours
  public :: nuce_grid_field, nuce_grid_exchange, nuce_grid_exchange_begin
  public :: nuce_grid_exchange_end, nuce_grid_maybe_remap, nuce_grid_move
  public :: nuce_decision, nuce_last_decision, nuce_rule_name
  public :: nuce_grid_set_cost, nuce_grid_clear_cost, nuce_grid_gather, nuce_grid_scatter
  public :: nuce_saved, nuce_grid_save, nuce_saved_open, nuce_saved_grid, nuce_saved_user
  public :: nuce_saved_grid_create, nuce_saved_read, nuce_saved_free
  public :: nuce_grid_checkpoint, nuce_graph_checkpoint, nuce_saved_speeds
  public :: nuce_saved_graph_speeds
  public :: nuce_depart, nuce_grid_depart, nuce_depart_finish
  public :: nuce_catch_leave_signal, nuce_leave_signalled
  public :: nuce_saved_graph, nuce_graph_save, nuce_saved_graph_open, nuce_saved_graph_info
  public :: nuce_saved_graph_create, nuce_saved_graph_free
  public :: nuce_graph_depart, nuce_depart_finish_all
  public :: nuce_pool, nuce_pool_create, nuce_pool_wait, nuce_pool_admit, nuce_pool_release
  public :: nuce_pool_free, nuce_pool_wait_all, nuce_pool_admit_all

  ! The codes of nuce.h (a test checks that they agree).
  integer, parameter, public :: NUCE_OK = 0
  integer, parameter, public :: NUCE_ERR_INVALID_SPEED = 1
  integer, parameter, public :: NUCE_ERR_EMPTY = 2
  integer, parameter, public :: NUCE_ERR_SHAPE_MISMATCH = 3
  integer, parameter, public :: NUCE_ERR_TOO_MANY_PARTS = 4
  integer, parameter, public :: NUCE_ERR_INVALID_PLAN = 5
  integer, parameter, public :: NUCE_ERR_INVALID_INPUT = 6
  !> The rules of a balance point's decision (nuce_decision%rule).
  integer, parameter, public :: NUCE_RULE_EXACT = 0
  integer, parameter, public :: NUCE_RULE_WITHIN_NOISE = 1
  integer, parameter, public :: NUCE_RULE_PERSISTENT = 2
  integer, parameter, public :: NUCE_RULE_AMORTIZED = 3
  integer, parameter, public :: NUCE_RULE_NO_PAYOFF = 4
  integer, parameter, public :: NUCE_RULE_VETOED = 5
  integer, parameter, public :: NUCE_ERR_PARSE = 7
  integer, parameter, public :: NUCE_ERR_IO = 8
  integer, parameter, public :: NUCE_ERR_SOLVER = 9
  integer, parameter, public :: NUCE_ERR_BAD_MESSAGE = 10
  integer, parameter, public :: NUCE_ERR_TIMEOUT = 11
  integer, parameter, public :: NUCE_ERR_PANIC = 12
  integer, parameter, public :: NUCE_ERR_UNKNOWN = 13
  integer, parameter, public :: NUCE_ERR_DISAGREEMENT = 14
  integer, parameter, public :: NUCE_ERR_MPI = 15
  ! AMR packers and scalings, graph algorithms (nuce.h's, checked alike).
  integer, parameter, public :: NUCE_PACK_TIGHT = 0
  integer, parameter, public :: NUCE_PACK_LEVEL = 1
  integer, parameter, public :: NUCE_SCALE_NONUNIFORM = 0
  integer, parameter, public :: NUCE_SCALE_UNIFORM = 1
  ! Grid stencils (nuce_grid_create).
  integer, parameter, public :: NUCE_STENCIL_FACES = 7
  integer, parameter, public :: NUCE_STENCIL_BOX = 27
  integer, parameter, public :: NUCE_ALGO_BEST = 0
  integer, parameter, public :: NUCE_ALGO_MULTILEVEL = 1
  integer, parameter, public :: NUCE_ALGO_RCB = 2
  integer, parameter, public :: NUCE_ALGO_ZCI = 3
  integer, parameter, public :: NUCE_ALGO_HCI = 4
  integer, parameter, public :: NUCE_ALGO_RSB = 5
  integer, parameter, public :: NUCE_ALGO_RSBKL = 6
  integer, parameter, public :: NUCE_ALGO_RSBI = 7
  integer, parameter, public :: NUCE_ALGO_RCBI = 8

  !> A load balancer (wraps `nuce_balancer *`).
  type :: nuce_balancer
    type(c_ptr) :: ptr = c_null_ptr
  end type nuce_balancer

  !> A distributed 2D array of real(c_double) (wraps `nuce_array *`).
  type :: nuce_array
    type(c_ptr) :: ptr = c_null_ptr
  end type nuce_array

  !> A distributed graph with `m` real(c_double) values per vertex (wraps
  !> `nuce_graph *`; records of 8 m bytes), numbered from `base` (numflag).
  type :: nuce_graph
    type(c_ptr) :: ptr = c_null_ptr
    integer(c_int64_t) :: m = 0
    integer(c_int64_t) :: base = 1
  end type nuce_graph

  ! nuce.h's `nuce_csr` and `nuce_task_platform`.
  type, bind(c) :: c_csr
    integer(c_int64_t) :: n = 0
    type(c_ptr) :: xadj = c_null_ptr, adjncy = c_null_ptr, vwgt = c_null_ptr, ewgt = c_null_ptr
    integer(c_int32_t) :: dim = 0
    type(c_ptr) :: coords = c_null_ptr
  end type c_csr
  type, bind(c) :: c_platform
    type(c_ptr) :: cycle_times = c_null_ptr
    integer(c_size_t) :: workers = 0
    real(c_double) :: tcom = 0, tcom_return = 0
  end type c_platform

  ! --- Grids on the application's own arrays (types) -------------------------

  !> A 3D grid distributed over the balancer's ranks whose data lives in the
  !> application's arrays (wraps `nuce_grid *`). Seen in Fortran order:
  !> n(1) (i, fastest) x n(2) x n(3), global indices 1-based.
  type :: nuce_grid
    type(c_ptr) :: ptr = c_null_ptr
  end type nuce_grid

  !> The job's ranks split into active ranks and a standby pool (wraps
  !> `nuce_pool *`).
  type :: nuce_pool
    type(c_ptr) :: ptr = c_null_ptr
  end type nuce_pool

  !> A save file opened for a restart (wraps `nuce_saved *`).
  type :: nuce_saved
    type(c_ptr) :: ptr = c_null_ptr
  end type nuce_saved

  !> A graph's save file opened for a restart (wraps `nuce_saved_graph *`).
  type :: nuce_saved_graph
    type(c_ptr) :: ptr = c_null_ptr
  end type nuce_saved_graph

  !> A ghost exchange in flight (wraps `nuce_exchange *`), from
  !> nuce_grid_exchange_begin until nuce_grid_exchange_end.
  type :: nuce_exchange
    type(c_ptr) :: ptr = c_null_ptr
  end type nuce_exchange

  !> Why the last balance point did or did not remap (nuce.h's
  !> `nuce_decision`; docs/c-api.md, "Why nuce did or did not remap").
  type, bind(c) :: nuce_decision
    !> 1 when the layout changed.
    integer(c_int) :: remapped = 0
    !> The rule that decided (NUCE_RULE_*; nuce_rule_name names it).
    integer(c_int) :: rule = 0
    !> Imbalance (slowest rank's time over the balanced time, minus 1; 0 =
    !> balanced) of the layout before, and of the candidate.
    real(c_double) :: imbalance_current = 0, imbalance_candidate = 0
    !> Predicted seconds per iteration before and after, and of the move.
    real(c_double) :: t_current = 0, t_candidate = 0, t_migration = 0
    !> Predicted gain over the horizon minus the move; what the imbalance cost so far.
    real(c_double) :: net_gain = 0, forgone = 0
    !> The horizon in iterations.
    integer(c_int64_t) :: iterations = 0
  end type nuce_decision

  !> One field of the application (nuce.h's `nuce_field`, C order): make it
  !> with nuce_grid_field, which reverses the paddings.
  type, bind(c) :: nuce_field
    !> First element of the padded block (c_null_ptr for an empty box).
    type(c_ptr) :: data = c_null_ptr
    !> Bytes per cell.
    integer(c_size_t) :: elem_size = 0
    !> Halo cells on each side, C order: pad(1) along Fortran's third index.
    integer(c_int64_t) :: pad(3) = 0
  end type nuce_field

  interface nuce_grid_field
    module procedure grid_field_real3, grid_field_ptr
  end interface nuce_grid_field

  interface nuce_grid_set_cost
    module procedure grid_set_cost3, grid_set_cost2
  end interface nuce_grid_set_cost

  interface nuce_grid_gather
    module procedure grid_gather3, grid_gather2
  end interface nuce_grid_gather

  interface nuce_grid_scatter
    module procedure grid_scatter3, grid_scatter2
  end interface nuce_grid_scatter

  interface
    function c_grid_create(b, n, ghost, stencil, out) bind(c, name='nuce_grid_create') result(rc)
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: b
      integer(c_int64_t), intent(in) :: n(3)
      integer(c_int64_t), value :: ghost
      integer(c_int), value :: stencil
      type(c_ptr), intent(out) :: out
      integer(c_int) :: rc
    end function c_grid_create
    function c_grid_free(g) bind(c, name='nuce_grid_free') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: g
      integer(c_int) :: rc
    end function c_grid_free
    function c_grid_box(g, rank, lo, size) bind(c, name='nuce_grid_box') result(rc)
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: g
      integer(c_int), value :: rank
      integer(c_int64_t), intent(out) :: lo(3), size(3)
      integer(c_int) :: rc
    end function c_grid_box
    function c_grid_neighbours(g, count, ranks, max) bind(c, name='nuce_grid_neighbours') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: g, ranks
      integer(c_int), intent(out) :: count
      integer(c_int), value :: max
      integer(c_int) :: rc
    end function c_grid_neighbours
    function c_grid_exchange(g, nfields, fields) bind(c, name='nuce_grid_exchange') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: g, fields
      integer(c_int), value :: nfields
      integer(c_int) :: rc
    end function c_grid_exchange
    function c_grid_exchange_begin(g, nfields, fields, req) &
        bind(c, name='nuce_grid_exchange_begin') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: g, fields
      integer(c_int), value :: nfields
      type(c_ptr), intent(out) :: req
      integer(c_int) :: rc
    end function c_grid_exchange_begin
    function c_grid_exchange_end(req) bind(c, name='nuce_grid_exchange_end') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: req
      integer(c_int) :: rc
    end function c_grid_exchange_end
    function c_last_decision(b, d) bind(c, name='nuce_last_decision') result(rc)
      import :: c_int, c_ptr, nuce_decision
      type(c_ptr), value :: b
      type(nuce_decision), intent(out) :: d
      integer(c_int) :: rc
    end function c_last_decision
    function c_grid_maybe_remap_ahead(b, g, iterations, ahead, remapped) &
        bind(c, name='nuce_grid_maybe_remap_ahead') result(rc)
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: b, g
      integer(c_int64_t), value :: iterations, ahead
      integer(c_int), intent(out) :: remapped
      integer(c_int) :: rc
    end function c_grid_maybe_remap_ahead
    function c_grid_move(g, nfields, old_fields, new_fields) bind(c, name='nuce_grid_move') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: g, old_fields, new_fields
      integer(c_int), value :: nfields
      integer(c_int) :: rc
    end function c_grid_move
    function c_grid_set_cost(g, cost, n) bind(c, name='nuce_grid_set_cost') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: g, cost
      integer(c_size_t), value :: n
      integer(c_int) :: rc
    end function c_grid_set_cost
    function c_grid_clear_cost(g) bind(c, name='nuce_grid_clear_cost') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: g
      integer(c_int) :: rc
    end function c_grid_clear_cost
    function c_grid_gather(g, field, global, global_len) bind(c, name='nuce_grid_gather') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: g, field, global
      integer(c_size_t), value :: global_len
      integer(c_int) :: rc
    end function c_grid_gather
    function c_grid_scatter(g, global, global_len, field) bind(c, name='nuce_grid_scatter') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: g, global, field
      integer(c_size_t), value :: global_len
      integer(c_int) :: rc
    end function c_grid_scatter
  end interface

  interface
    function c_grid_save(g, path, nfields, fields, user, user_len) &
        bind(c, name='nuce_grid_save') result(rc)
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: g, fields, user
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int), value :: nfields
      integer(c_size_t), value :: user_len
      integer(c_int) :: rc
    end function c_grid_save
    function c_grid_checkpoint(b, g, path, nfields, fields, user, user_len) &
        bind(c, name='nuce_grid_checkpoint') result(rc)
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: b, g, fields, user
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int), value :: nfields
      integer(c_size_t), value :: user_len
      integer(c_int) :: rc
    end function c_grid_checkpoint
    function c_saved_speeds(s, n, speeds, count) bind(c, name='nuce_saved_speeds') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: s, speeds
      integer(c_int), value :: n
      integer(c_int), intent(out) :: count
      integer(c_int) :: rc
    end function c_saved_speeds
    function c_saved_graph_speeds(s, n, speeds, count) &
        bind(c, name='nuce_saved_graph_speeds') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: s, speeds
      integer(c_int), value :: n
      integer(c_int), intent(out) :: count
      integer(c_int) :: rc
    end function c_saved_graph_speeds
    function c_saved_open(b, path, out) bind(c, name='nuce_saved_open') result(rc)
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: b
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), intent(out) :: out
      integer(c_int) :: rc
    end function c_saved_open
    function c_saved_grid(s, n, ghost, stencil, nfields, saved_ranks) &
        bind(c, name='nuce_saved_grid') result(rc)
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: s
      integer(c_int64_t), intent(out) :: n(3), ghost
      integer(c_int), intent(out) :: stencil, nfields, saved_ranks
      integer(c_int) :: rc
    end function c_saved_grid
    function c_saved_user(s, data, len) bind(c, name='nuce_saved_user') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: s
      type(c_ptr), intent(out) :: data
      integer(c_size_t), intent(out) :: len
      integer(c_int) :: rc
    end function c_saved_user
    function c_saved_grid_create(s, b, out) bind(c, name='nuce_saved_grid_create') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: s, b
      type(c_ptr), intent(out) :: out
      integer(c_int) :: rc
    end function c_saved_grid_create
    function c_saved_read(s, g, nfields, fields) bind(c, name='nuce_saved_read') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: s, g, fields
      integer(c_int), value :: nfields
      integer(c_int) :: rc
    end function c_saved_read
    function c_saved_free(s) bind(c, name='nuce_saved_free') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: s
      integer(c_int) :: rc
    end function c_saved_free
    function c_depart(b, leaving, nleaving) bind(c, name='nuce_depart') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: b
      integer(c_int), value :: leaving
      integer(c_int), intent(out) :: nleaving
      integer(c_int) :: rc
    end function c_depart
    function c_catch_leave_signal_name(name) bind(c, name='nuce_catch_leave_signal_name') &
        result(rc)
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int) :: rc
    end function c_catch_leave_signal_name
    function c_leave_signalled(flag) bind(c, name='nuce_leave_signalled') result(rc)
      import :: c_int
      integer(c_int), intent(out) :: flag
      integer(c_int) :: rc
    end function c_leave_signalled
    function c_grid_depart(b, g) bind(c, name='nuce_grid_depart') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: b, g
      integer(c_int) :: rc
    end function c_grid_depart
    function c_depart_finish_all_f(b, ngrids, grids, ngraphs, graphs, comm, released) &
        bind(c, name='nuce_depart_finish_all_f') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: b, grids, graphs
      integer(c_int), value :: ngrids, ngraphs
      integer(c_int), intent(out) :: comm, released
      integer(c_int) :: rc
    end function c_depart_finish_all_f
  end interface

  ! Graphs' save files and departures (nuce.h's graph counterparts of the above).
  interface
    function c_graph_save(g, path, values, len, user, user_len) &
        bind(c, name='nuce_graph_save') result(rc)
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: g, values, user
      character(kind=c_char), intent(in) :: path(*)
      integer(c_size_t), value :: len, user_len
      integer(c_int) :: rc
    end function c_graph_save
    function c_graph_checkpoint(b, g, path, values, len, user, user_len) &
        bind(c, name='nuce_graph_checkpoint') result(rc)
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: b, g, values, user
      character(kind=c_char), intent(in) :: path(*)
      integer(c_size_t), value :: len, user_len
      integer(c_int) :: rc
    end function c_graph_checkpoint
    function c_saved_graph_open(b, path, out) bind(c, name='nuce_saved_graph_open') result(rc)
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: b
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), intent(out) :: out
      integer(c_int) :: rc
    end function c_saved_graph_open
    function c_saved_graph_info(s, n, saved_ranks, user, user_len) &
        bind(c, name='nuce_saved_graph_info') result(rc)
      import :: c_int, c_ptr, c_int64_t, c_size_t
      type(c_ptr), value :: s
      integer(c_int64_t), intent(out) :: n
      integer(c_int), intent(out) :: saved_ranks
      type(c_ptr), intent(out) :: user
      integer(c_size_t), intent(out) :: user_len
      integer(c_int) :: rc
    end function c_saved_graph_info
    function c_saved_graph_create(s, b, elem_size, out) &
        bind(c, name='nuce_saved_graph_create') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: s, b
      integer(c_size_t), value :: elem_size
      type(c_ptr), intent(out) :: out
      integer(c_int) :: rc
    end function c_saved_graph_create
    function c_saved_graph_free(s) bind(c, name='nuce_saved_graph_free') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: s
      integer(c_int) :: rc
    end function c_saved_graph_free
    function c_graph_depart(b, g, values, len) bind(c, name='nuce_graph_depart') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: b, g, values
      integer(c_size_t), value :: len
      integer(c_int) :: rc
    end function c_graph_depart
  end interface

  interface
    function c_pool_create_f(comm, standby, active, out) bind(c, name='nuce_pool_create_f') result(rc)
      import :: c_int, c_ptr
      integer(c_int), value :: comm, standby
      integer(c_int), intent(out) :: active
      type(c_ptr), intent(out) :: out
      integer(c_int) :: rc
    end function c_pool_create_f
    function c_pool_wait_f(p, joined, comm, b, max_grids, grids, ngrids) &
        bind(c, name='nuce_pool_wait_f') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: p, grids
      integer(c_int), intent(out) :: joined, comm, ngrids
      type(c_ptr), intent(out) :: b
      integer(c_int), value :: max_grids
      integer(c_int) :: rc
    end function c_pool_wait_f
    function c_pool_admit_f(p, b, count, ngrids, grids, comm) bind(c, name='nuce_pool_admit_f') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: p, b, grids
      integer(c_int), value :: count, ngrids
      integer(c_int), intent(out) :: comm
      integer(c_int) :: rc
    end function c_pool_admit_f
    function c_pool_wait_all_f(p, joined, comm, b, max_grids, grids, ngrids, max_graphs, graphs, &
                               ngraphs) bind(c, name='nuce_pool_wait_all_f') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: p, grids, graphs
      integer(c_int), intent(out) :: joined, comm, ngrids, ngraphs
      type(c_ptr), intent(out) :: b
      integer(c_int), value :: max_grids, max_graphs
      integer(c_int) :: rc
    end function c_pool_wait_all_f
    function c_pool_admit_all_f(p, b, count, ngrids, grids, ngraphs, graphs, values, lens, comm) &
        bind(c, name='nuce_pool_admit_all_f') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: p, b, grids, graphs, values, lens
      integer(c_int), value :: count, ngrids, ngraphs
      integer(c_int), intent(out) :: comm
      integer(c_int) :: rc
    end function c_pool_admit_all_f
    function c_graph_record_size(g, elem) bind(c, name='nuce_graph_record_size') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: g
      integer(c_size_t), intent(out) :: elem
      integer(c_int) :: rc
    end function c_graph_record_size
    function c_pool_release(p, b) bind(c, name='nuce_pool_release') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: p, b
      integer(c_int) :: rc
    end function c_pool_release
    function c_pool_free(p) bind(c, name='nuce_pool_free') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: p
      integer(c_int) :: rc
    end function c_pool_free
  end interface

  interface nuce_balancer_create
    module procedure balancer_create_f08, balancer_create_int
  end interface nuce_balancer_create

  interface nuce_maybe_remap
    module procedure array_maybe_remap, graph_maybe_remap
  end interface nuce_maybe_remap

  ! Valid addresses for empty buffers (the C API wants non-NULL pointers).
  real(c_double), target, save :: empty(1)
  integer(c_int64_t), target, save :: empty_i(1)

  interface
    function c_version() bind(c, name='nuce_version') result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function c_version
    function c_last_error() bind(c, name='nuce_last_error') result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function c_last_error
    function c_fortran_call(code, refusal) bind(c, name='nuce_fortran_call') result(rc)
      import :: c_int, c_char
      integer(c_int), value :: code
      character(kind=c_char), intent(in) :: refusal(*)
      integer(c_int) :: rc
    end function c_fortran_call
    function c_fortran_ids(base) bind(c, name='nuce_fortran_ids') result(rc)
      import :: c_int, c_int64_t
      integer(c_int64_t), value :: base
      integer(c_int) :: rc
    end function c_fortran_ids
    function c_fortran_done(refusal) bind(c, name='nuce_fortran_done') result(rc)
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: refusal(*)
      integer(c_int) :: rc
    end function c_fortran_done
    function c_balancer_create_f(comm, out) bind(c, name='nuce_balancer_create_f') result(rc)
      import :: c_int, c_ptr
      integer(c_int), value :: comm
      type(c_ptr), intent(out) :: out
      integer(c_int) :: rc
    end function c_balancer_create_f
    function c_balancer_free(b) bind(c, name='nuce_balancer_free') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: b
      integer(c_int) :: rc
    end function c_balancer_free
    function c_measure(b) bind(c, name='nuce_measure') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: b
      integer(c_int) :: rc
    end function c_measure
    function c_measure_sizes(b, sizes, n) bind(c, name='nuce_measure_sizes') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: b, sizes
      integer(c_size_t), value :: n
      integer(c_int) :: rc
    end function c_measure_sizes
    function c_set_speeds(b, speeds, n) bind(c, name='nuce_set_speeds') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: b, speeds
      integer(c_size_t), value :: n
      integer(c_int) :: rc
    end function c_set_speeds
    function c_speeds(b, out, n) bind(c, name='nuce_speeds') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: b, out
      integer(c_size_t), value :: n
      integer(c_int) :: rc
    end function c_speeds
    function c_plan(b, rows, cols) bind(c, name='nuce_plan') result(rc)
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: b
      integer(c_int64_t), value :: rows, cols
      integer(c_int) :: rc
    end function c_plan
    function c_plan_rect(b, rank, out) bind(c, name='nuce_plan_rect') result(rc)
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: b
      integer(c_int), value :: rank
      integer(c_int64_t), intent(out) :: out(4)
      integer(c_int) :: rc
    end function c_plan_rect
    function c_plan_1d(b, n, counts, ncounts) bind(c, name='nuce_plan_1d') result(rc)
      import :: c_int, c_ptr, c_int64_t, c_size_t
      type(c_ptr), value :: b, counts
      integer(c_int64_t), value :: n
      integer(c_size_t), value :: ncounts
      integer(c_int) :: rc
    end function c_plan_1d
    function c_start_phase(b) bind(c, name='nuce_start_phase') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: b
      integer(c_int) :: rc
    end function c_start_phase
    function c_record_phase(b, work, seconds) bind(c, name='nuce_record_phase') result(rc)
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: b
      real(c_double), value :: work, seconds
      integer(c_int) :: rc
    end function c_record_phase
    function c_array_create(b, rows, cols, elem_size, ghost, out) &
        bind(c, name='nuce_array_create') result(rc)
      import :: c_int, c_ptr, c_int64_t, c_size_t
      type(c_ptr), value :: b
      integer(c_int64_t), value :: rows, cols, ghost
      integer(c_size_t), value :: elem_size
      type(c_ptr), intent(out) :: out
      integer(c_int) :: rc
    end function c_array_create
    function c_array_scatter(b, rows, cols, elem_size, ghost, global, global_len, out) &
        bind(c, name='nuce_array_scatter') result(rc)
      import :: c_int, c_ptr, c_int64_t, c_size_t
      type(c_ptr), value :: b, global
      integer(c_int64_t), value :: rows, cols, ghost
      integer(c_size_t), value :: elem_size, global_len
      type(c_ptr), intent(out) :: out
      integer(c_int) :: rc
    end function c_array_scatter
    function c_array_free(a) bind(c, name='nuce_array_free') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: a
      integer(c_int) :: rc
    end function c_array_free
    function c_array_rect(a, rank, out) bind(c, name='nuce_array_rect') result(rc)
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: a
      integer(c_int), value :: rank
      integer(c_int64_t), intent(out) :: out(4)
      integer(c_int) :: rc
    end function c_array_rect
    function c_array_read(a, padded, len) bind(c, name='nuce_array_read') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: a, padded
      integer(c_size_t), value :: len
      integer(c_int) :: rc
    end function c_array_read
    function c_array_exchange_ghosts(a, padded, len) &
        bind(c, name='nuce_array_exchange_ghosts') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: a, padded
      integer(c_size_t), value :: len
      integer(c_int) :: rc
    end function c_array_exchange_ghosts
    function c_array_gather(a, padded, len, global, global_len) &
        bind(c, name='nuce_array_gather') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: a, padded, global
      integer(c_size_t), value :: len, global_len
      integer(c_int) :: rc
    end function c_array_gather
    function c_maybe_remap_ahead(b, a, iterations, ahead, padded, len, remapped) &
        bind(c, name='nuce_maybe_remap_ahead') result(rc)
      import :: c_int, c_ptr, c_int64_t, c_size_t
      type(c_ptr), value :: b, a, padded
      integer(c_int64_t), value :: iterations, ahead
      integer(c_size_t), value :: len
      integer(c_int), intent(out) :: remapped
      integer(c_int) :: rc
    end function c_maybe_remap_ahead
    function c_maybe_remap(b, a, iterations, padded, len, remapped) &
        bind(c, name='nuce_maybe_remap') result(rc)
      import :: c_int, c_ptr, c_int64_t, c_size_t
      type(c_ptr), value :: b, a, padded
      integer(c_int64_t), value :: iterations
      integer(c_size_t), value :: len
      integer(c_int), intent(out) :: remapped
      integer(c_int) :: rc
    end function c_maybe_remap
    function c_set_decomposer(b, name) bind(c, name='nuce_set_decomposer') result(rc)
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: b
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int) :: rc
    end function c_set_decomposer
    function c_set_decomposer3(b, name) bind(c, name='nuce_set_decomposer3') result(rc)
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: b
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int) :: rc
    end function c_set_decomposer3
    function c_set_hysteresis(b, fraction) bind(c, name='nuce_set_hysteresis') result(rc)
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: b
      real(c_double), value :: fraction
      integer(c_int) :: rc
    end function c_set_hysteresis
    function c_set_timeout(b, seconds) bind(c, name='nuce_set_timeout') result(rc)
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: b
      real(c_double), value :: seconds
      integer(c_int) :: rc
    end function c_set_timeout
    function c_set_memory_limit(b, cells) bind(c, name='nuce_set_memory_limit') result(rc)
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: b
      integer(c_int64_t), value :: cells
      integer(c_int) :: rc
    end function c_set_memory_limit
    function c_set_memory_limit_from_machine(b, bytes_per_cell, fraction, cells) &
        bind(c, name='nuce_set_memory_limit_from_machine') result(rc)
      import :: c_int, c_ptr, c_double, c_int64_t
      type(c_ptr), value :: b
      real(c_double), value :: bytes_per_cell, fraction
      integer(c_int64_t), intent(out) :: cells
      integer(c_int) :: rc
    end function c_set_memory_limit_from_machine
    function c_waiting_begin() bind(c, name='nuce_waiting_begin') result(rc)
      import :: c_int
      integer(c_int) :: rc
    end function c_waiting_begin
    function c_waiting_end() bind(c, name='nuce_waiting_end') result(rc)
      import :: c_int
      integer(c_int) :: rc
    end function c_waiting_end
    function c_partition_graph(g, nparts, tpwgts, algo, part, edgecut) &
        bind(c, name='nuce_partition_graph') result(rc)
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: g, tpwgts, part, edgecut
      integer(c_int64_t), value :: nparts
      integer(c_int), value :: algo
      integer(c_int) :: rc
    end function c_partition_graph
    function c_graph_partition(b, g, algo, part, edgecut) &
        bind(c, name='nuce_graph_partition') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: b, g, part, edgecut
      integer(c_int), value :: algo
      integer(c_int) :: rc
    end function c_graph_partition
    function c_graph_scatter(b, g, elem_size, records, out) &
        bind(c, name='nuce_graph_scatter') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: b, g, records
      integer(c_size_t), value :: elem_size
      type(c_ptr), intent(out) :: out
      integer(c_int) :: rc
    end function c_graph_scatter
    function c_graph_free(g) bind(c, name='nuce_graph_free') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: g
      integer(c_int) :: rc
    end function c_graph_free
    function c_graph_sizes(g, owned, ghosts, arcs) bind(c, name='nuce_graph_sizes') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: g
      integer(c_size_t), intent(out) :: owned, ghosts, arcs
      integer(c_int) :: rc
    end function c_graph_sizes
    function c_graph_owned(g, ids, len) bind(c, name='nuce_graph_owned') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: g, ids
      integer(c_size_t), value :: len
      integer(c_int) :: rc
    end function c_graph_owned
    function c_graph_ghosts(g, ids, len) bind(c, name='nuce_graph_ghosts') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: g, ids
      integer(c_size_t), value :: len
      integer(c_int) :: rc
    end function c_graph_ghosts
    function c_graph_adjacency(g, xadj, xadj_len, adjncy, ewgt, arcs) &
        bind(c, name='nuce_graph_adjacency') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: g, xadj, adjncy, ewgt
      integer(c_size_t), value :: xadj_len, arcs
      integer(c_int) :: rc
    end function c_graph_adjacency
    function c_graph_read(g, values, len) bind(c, name='nuce_graph_read') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: g, values
      integer(c_size_t), value :: len
      integer(c_int) :: rc
    end function c_graph_read
    function c_graph_exchange_ghosts(g, values, len) &
        bind(c, name='nuce_graph_exchange_ghosts') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: g, values
      integer(c_size_t), value :: len
      integer(c_int) :: rc
    end function c_graph_exchange_ghosts
    function c_graph_gather(g, values, len, global, global_len) &
        bind(c, name='nuce_graph_gather') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: g, values, global
      integer(c_size_t), value :: len, global_len
      integer(c_int) :: rc
    end function c_graph_gather
    function c_graph_migrate(g, values, len, owner, n) &
        bind(c, name='nuce_graph_migrate') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: g, values, owner
      integer(c_size_t), value :: len, n
      integer(c_int) :: rc
    end function c_graph_migrate
    function c_graph_maybe_remap_ahead(b, g, iterations, ahead, values, len, remapped) &
        bind(c, name='nuce_graph_maybe_remap_ahead') result(rc)
      import :: c_int, c_ptr, c_int64_t, c_size_t
      type(c_ptr), value :: b, g, values
      integer(c_int64_t), value :: iterations, ahead
      integer(c_size_t), value :: len
      integer(c_int), intent(out) :: remapped
      integer(c_int) :: rc
    end function c_graph_maybe_remap_ahead
    function c_tasks_min_time(pf, tasks, counts, send_order, return_order, makespan) &
        bind(c, name='nuce_tasks_min_time') result(rc)
      import :: c_int, c_ptr, c_int64_t, c_double, c_platform
      type(c_platform), intent(in) :: pf
      integer(c_int64_t), value :: tasks
      integer(c_int64_t), intent(out) :: counts(*), send_order(*), return_order(*)
      real(c_double), intent(out) :: makespan
      integer(c_int) :: rc
    end function c_tasks_min_time
    function c_tasks_max_tasks(pf, deadline, counts, send_order, return_order, makespan) &
        bind(c, name='nuce_tasks_max_tasks') result(rc)
      import :: c_int, c_ptr, c_int64_t, c_double, c_platform
      type(c_platform), intent(in) :: pf
      real(c_double), value :: deadline
      integer(c_int64_t), intent(out) :: counts(*), send_order(*), return_order(*)
      real(c_double), intent(out) :: makespan
      integer(c_int) :: rc
    end function c_tasks_max_tasks
    function c_amr_allocate(grids, m, p, q, packer, scaling, submeshes, rotated) &
        bind(c, name='nuce_amr_allocate') result(rc)
      import :: c_int, c_int64_t, c_size_t
      integer(c_int64_t), intent(in) :: grids(*)
      integer(c_size_t), value :: m
      integer(c_int64_t), value :: p, q
      integer(c_int), value :: packer, scaling
      integer(c_int64_t), intent(out) :: submeshes(*)
      integer(c_int), intent(out) :: rotated(*)
      integer(c_int) :: rc
    end function c_amr_allocate
  end interface

contains

  !> A C string as a Fortran string.
  function from_c(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: n
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    call c_f_pointer(p, chars, [huge(0)])
    n = 0
    do while (chars(n + 1) /= c_null_char)
      n = n + 1
    end do
    allocate (character(len=n) :: s)
    s = transfer(chars(1:n), s)
  end function from_c

  !> The version of libnuce.
  function nuce_version() result(s)
    character(len=:), allocatable :: s
    s = from_c(c_version())
  end function nuce_version

  !> The message of the last failed call on this thread ('' if none).
  function nuce_last_error() result(s)
    character(len=:), allocatable :: s
    s = from_c(c_last_error())
  end function nuce_last_error

  !> Announces the next call of the C API as this module's (every procedure
  !> does, just before it): the C API's messages then name Fortran's
  !> arguments, in Fortran's order, with 1-based indices. With `why` (not
  !> ''), this rank refuses that call (code `code`, default
  !> NUCE_ERR_INVALID_INPUT): the call returns that error, on every rank of
  !> a collective call, which names this rank to the others. With `base`
  !> (a graph call's numflag), the call's messages number vertex ids from it.
  subroutine fortran_call(why, code, base)
    character(len=*), intent(in), optional :: why
    integer, intent(in), optional :: code
    integer(c_int64_t), intent(in), optional :: base
    integer(c_int) :: rc, k
    k = NUCE_OK
    if (present(why)) then
      if (len(why) > 0) then
        k = NUCE_ERR_INVALID_INPUT
        if (present(code)) k = int(code, c_int)
      end if
    end if
    if (k == NUCE_OK) then
      rc = c_fortran_call(k, c_null_char)
    else
      rc = c_fortran_call(k, why // c_null_char)
    end if
    if (present(base)) rc = c_fortran_ids(base)
  end subroutine fortran_call

  !> Reports `rc` of the call `what` through `ierr`, or stops on failure.
  !> `why` (when not '') is the message of a failure this module found on
  !> its own, without calling C. Every procedure ends here: an announcement
  !> (fortran_call) that no C call took, because the procedure refused on
  !> its own or had nothing to ask of C, is withdrawn, so that it never
  !> applies to a later, unrelated C call (one from C code in the same
  !> program); a refusal of its own becomes the thread's last message in C
  !> (nuce_last_error), which the next failing call replaces.
  subroutine done(rc, what, ierr, why)
    integer(c_int), intent(in) :: rc
    character(len=*), intent(in) :: what
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: why
    integer(c_int) :: withdrawn
    if (rc /= NUCE_OK .and. present(why)) then
      withdrawn = c_fortran_done(why // c_null_char)
    else
      withdrawn = c_fortran_done(c_null_char)
    end if
    if (present(ierr)) then
      ierr = int(rc)
    else if (rc /= NUCE_OK) then
      write (error_unit, '(a, a, a, i0, a, a)') 'nuce: ', what, ' failed (code ', rc, '): ', &
        nuce_last_error()
      error stop 2
    end if
  end subroutine done

  !> The address of a buffer, or of `empty` when it has no element.
  function address(x) result(p)
    real(c_double), intent(in), target, contiguous :: x(:, :)
    type(c_ptr) :: p
    if (size(x) > 0) then
      p = c_loc(x)
    else
      p = c_loc(empty)
    end if
  end function address

  !> Global bounds in Fortran order from a C rectangle {row, col, rows, cols}.
  subroutine to_box(rect, lo, hi)
    integer(c_int64_t), intent(in) :: rect(4)
    integer(c_int64_t), intent(out) :: lo(2), hi(2)
    lo = [rect(2) + 1, rect(1) + 1]
    hi = [rect(2) + rect(4), rect(1) + rect(3)]
  end subroutine to_box

  !> Creates a balancer over a duplicate of `comm` (collective).
  subroutine balancer_create_f08(comm, b, ierr)
    type(MPI_Comm), intent(in) :: comm
    type(nuce_balancer), intent(out) :: b
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_balancer_create_f(int(comm%MPI_VAL, c_int), b%ptr), 'nuce_balancer_create', ierr)
  end subroutine balancer_create_f08

  !> Creates a balancer over a duplicate of the integer handle `comm` (collective).
  subroutine balancer_create_int(comm, b, ierr)
    integer, intent(in) :: comm
    type(nuce_balancer), intent(out) :: b
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_balancer_create_f(int(comm, c_int), b%ptr), 'nuce_balancer_create', ierr)
  end subroutine balancer_create_int

  !> Frees a balancer (local); the caller's communicator stays.
  subroutine nuce_balancer_free(b, ierr)
    type(nuce_balancer), intent(inout) :: b
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_balancer_free(b%ptr), 'nuce_balancer_free', ierr)
    b%ptr = c_null_ptr
  end subroutine nuce_balancer_free

  !> Measures every rank with the built-in kernel (collective).
  subroutine nuce_measure(b, ierr)
    type(nuce_balancer), intent(in) :: b
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_measure(b%ptr), 'nuce_measure', ierr)
  end subroutine nuce_measure

  !> A size sweep (collective; the same `sizes` on every rank): every rank
  !> times the built-in stencil on blocks of each of the `sizes(n)` cells
  !> (1 to 64 sizes of 16 to 2**26 cells) and keeps the points as its speed
  !> function, so that the first plan can use the functional speed model.
  subroutine nuce_measure_sizes(b, sizes, ierr)
    type(nuce_balancer), intent(in) :: b
    integer(c_int64_t), intent(in), target, contiguous :: sizes(:)
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_measure_sizes(b%ptr, iaddr(sizes), int(size(sizes), c_size_t)), &
              'nuce_measure_sizes', ierr)
  end subroutine nuce_measure_sizes

  !> Sets every rank's speed from rank 0's `speeds` (collective; one per rank).
  subroutine nuce_set_speeds(b, speeds, ierr)
    type(nuce_balancer), intent(in) :: b
    real(c_double), intent(in), target, contiguous :: speeds(:)
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(speeds) > 0) p = c_loc(speeds)
    call fortran_call()
    call done(c_set_speeds(b%ptr, p, int(size(speeds), c_size_t)), 'nuce_set_speeds', ierr)
  end subroutine nuce_set_speeds

  !> The current speed estimates, one per rank (local).
  subroutine nuce_speeds(b, speeds, ierr)
    type(nuce_balancer), intent(in) :: b
    real(c_double), intent(out), target, contiguous :: speeds(:)
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    p = c_loc(empty)
    if (size(speeds) > 0) p = c_loc(speeds)
    call fortran_call()
    call done(c_speeds(b%ptr, p, int(size(speeds), c_size_t)), 'nuce_speeds', ierr)
  end subroutine nuce_speeds

  !> Plans an n1 x n2 array for the current speeds (collective).
  subroutine nuce_plan(b, n1, n2, ierr)
    type(nuce_balancer), intent(in) :: b
    integer(c_int64_t), intent(in) :: n1, n2
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_plan(b%ptr, n2, n1), 'nuce_plan', ierr)
  end subroutine nuce_plan

  !> Rank `rank`'s block of the last nuce_plan as global bounds lo(2), hi(2) (local).
  subroutine nuce_plan_box(b, rank, lo, hi, ierr)
    type(nuce_balancer), intent(in) :: b
    integer, intent(in) :: rank
    integer(c_int64_t), intent(out) :: lo(2), hi(2)
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: rect(4)
    integer(c_int) :: rc
    rect = 0
    call fortran_call()
    rc = c_plan_rect(b%ptr, int(rank, c_int), rect)
    call to_box(rect, lo, hi)
    call done(rc, 'nuce_plan_box', ierr)
  end subroutine nuce_plan_box

  !> Splits `n` units of one dimension (matrix rows, particles, vector
  !> entries) for the current speeds (collective; a balance point):
  !> `counts(r + 1)` units for MPI rank `r` (`size(counts)` = the number of
  !> ranks), which owns units `sum(counts(1:r)) + 1` to `sum(counts(1:r + 1))`
  !> (1-based); the counts add up to `n`, within the memory limits.
  subroutine nuce_plan_1d(b, n, counts, ierr)
    type(nuce_balancer), intent(in) :: b
    integer(c_int64_t), intent(in) :: n
    integer(c_int64_t), intent(out), target, contiguous :: counts(:)
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_plan_1d(b%ptr, n, iaddr(counts), int(size(counts), c_size_t)), 'nuce_plan_1d', &
              ierr)
  end subroutine nuce_plan_1d

  !> Restarts this rank's phase timing now (local): the set-up since the
  !> last balance point (initial fields, input) is not compute of the phase.
  subroutine nuce_start_phase(b, ierr)
    type(nuce_balancer), intent(in) :: b
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_start_phase(b%ptr), 'nuce_start_phase', ierr)
  end subroutine nuce_start_phase

  !> This rank did `work` units in `seconds` of compute this phase (local).
  subroutine nuce_record_phase(b, work, seconds, ierr)
    type(nuce_balancer), intent(in) :: b
    real(c_double), intent(in) :: work, seconds
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_record_phase(b%ptr, work, seconds), 'nuce_record_phase', ierr)
  end subroutine nuce_record_phase

  !> Plans and creates a zero-filled n1 x n2 array with ghost width `ghost` (collective).
  subroutine nuce_array_create(b, n1, n2, ghost, a, ierr)
    type(nuce_balancer), intent(in) :: b
    integer(c_int64_t), intent(in) :: n1, n2, ghost
    type(nuce_array), intent(out) :: a
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_array_create(b%ptr, n2, n1, c_sizeof(empty(1)), ghost, a%ptr), &
              'nuce_array_create', ierr)
  end subroutine nuce_array_create

  !> Plans an n1 x n2 array and scatters rank 0's `global(n1, n2)` (ignored
  !> elsewhere: pass a zero-size array) with ghost width `ghost` (collective).
  subroutine nuce_array_scatter(b, n1, n2, ghost, global, a, ierr)
    type(nuce_balancer), intent(in) :: b
    integer(c_int64_t), intent(in) :: n1, n2, ghost
    real(c_double), intent(in), target, contiguous :: global(:, :)
    type(nuce_array), intent(out) :: a
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(global) > 0) p = c_loc(global)
    call fortran_call()
    call done(c_array_scatter(b%ptr, n2, n1, c_sizeof(empty(1)), ghost, p, &
                              int(size(global), c_size_t), a%ptr), 'nuce_array_scatter', ierr)
  end subroutine nuce_array_scatter

  !> Frees an array (local).
  subroutine nuce_array_free(a, ierr)
    type(nuce_array), intent(inout) :: a
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_array_free(a%ptr), 'nuce_array_free', ierr)
    a%ptr = c_null_ptr
  end subroutine nuce_array_free

  !> Rank `rank`'s block in the array's current layout as global bounds
  !> lo(2), hi(2), 1-based and inclusive (local). An empty block has hi < lo.
  subroutine nuce_array_box(a, rank, lo, hi, ierr)
    type(nuce_array), intent(in) :: a
    integer, intent(in) :: rank
    integer(c_int64_t), intent(out) :: lo(2), hi(2)
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: rect(4)
    integer(c_int) :: rc
    rect = 0
    call fortran_call()
    rc = c_array_rect(a%ptr, int(rank, c_int), rect)
    call to_box(rect, lo, hi)
    call done(rc, 'nuce_array_box', ierr)
  end subroutine nuce_array_box

  !> Copies nuce's current block, ghosts included, into the padded block `u`
  !> (local): after create, scatter and every remap.
  subroutine nuce_array_read(a, u, ierr)
    type(nuce_array), intent(in) :: a
    real(c_double), intent(inout), target, contiguous :: u(:, :)
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_array_read(a%ptr, address(u), int(size(u), c_size_t)), 'nuce_array_read', ierr)
  end subroutine nuce_array_read

  !> Fills the ghost border of the padded block `u` from the neighbours (collective).
  subroutine nuce_array_exchange_ghosts(a, u, ierr)
    type(nuce_array), intent(in) :: a
    real(c_double), intent(inout), target, contiguous :: u(:, :)
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_array_exchange_ghosts(a%ptr, address(u), int(size(u), c_size_t)), &
              'nuce_array_exchange_ghosts', ierr)
  end subroutine nuce_array_exchange_ghosts

  !> Gathers the array into rank 0's `global(n1, n2)` (ignored elsewhere:
  !> pass a zero-size array) from every rank's padded block `u` (collective).
  subroutine nuce_array_gather(a, u, global, ierr)
    type(nuce_array), intent(in) :: a
    real(c_double), intent(in), target, contiguous :: u(:, :)
    real(c_double), intent(inout), target, contiguous :: global(:, :)
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(global) > 0) p = c_loc(global)
    call fortran_call()
    call done(c_array_gather(a%ptr, address(u), int(size(u), c_size_t), p, &
                             int(size(global), c_size_t)), 'nuce_array_gather', ierr)
  end subroutine nuce_array_gather

  !> A balance point after a phase of `iterations` iterations (collective):
  !> measures, decides, remaps. A remap must pay off within `ahead`
  !> iterations (default: `iterations`). `remapped` is .true. on every rank
  !> when the layout changed: then reallocate `u` from nuce_array_box and
  !> refill it with nuce_array_read.
  subroutine array_maybe_remap(b, a, iterations, u, remapped, ahead, ierr)
    type(nuce_balancer), intent(in) :: b
    type(nuce_array), intent(in) :: a
    integer(c_int64_t), intent(in) :: iterations
    real(c_double), intent(in), target, contiguous :: u(:, :)
    logical, intent(out) :: remapped
    integer(c_int64_t), intent(in), optional :: ahead
    integer, intent(out), optional :: ierr
    integer(c_int) :: flag
    flag = 0
    ! Without `ahead`, nuce_maybe_remap: messages then name the call as written.
    if (present(ahead)) then
      call fortran_call()
      call done(c_maybe_remap_ahead(b%ptr, a%ptr, iterations, ahead, address(u), &
                                    int(size(u), c_size_t), flag), 'nuce_maybe_remap', ierr)
    else
      call fortran_call()
      call done(c_maybe_remap(b%ptr, a%ptr, iterations, address(u), &
                              int(size(u), c_size_t), flag), 'nuce_maybe_remap', ierr)
    end if
    remapped = flag /= 0
  end subroutine array_maybe_remap

  !> Plans arrays with the decomposer `name` ('column', 'rb', 'best', ...;
  !> collective, the same name on every rank).
  subroutine nuce_set_decomposer(b, name, ierr)
    type(nuce_balancer), intent(in) :: b
    character(len=*), intent(in) :: name
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_set_decomposer(b%ptr, trim(name) // c_null_char), 'nuce_set_decomposer', ierr)
  end subroutine nuce_set_decomposer

  !> Plans 3D grids with the decomposer `name` ('best', the default, 'rb',
  !> 'column', 'pencils', 'rectilinear', 'slabs'; collective, the same name
  !> on every rank).
  subroutine nuce_set_decomposer3(b, name, ierr)
    type(nuce_balancer), intent(in) :: b
    character(len=*), intent(in) :: name
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_set_decomposer3(b%ptr, trim(name) // c_null_char), 'nuce_set_decomposer3', ierr)
  end subroutine nuce_set_decomposer3

  !> The remap hysteresis, a fraction >= 0 (collective, the same on every rank).
  subroutine nuce_set_hysteresis(b, fraction, ierr)
    type(nuce_balancer), intent(in) :: b
    real(c_double), intent(in) :: fraction
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_set_hysteresis(b%ptr, fraction), 'nuce_set_hysteresis', ierr)
  end subroutine nuce_set_hysteresis

  !> The timeout of the balancer's collectives in seconds, 0 = none
  !> (collective, the same on every rank).
  subroutine nuce_set_timeout(b, seconds, ierr)
    type(nuce_balancer), intent(in) :: b
    real(c_double), intent(in) :: seconds
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_set_timeout(b%ptr, seconds), 'nuce_set_timeout', ierr)
  end subroutine nuce_set_timeout

  !> The most cells this rank can hold, < 0 = no limit (collective: every
  !> rank passes its own limit); later plans of arrays never exceed it.
  subroutine nuce_set_memory_limit(b, cells, ierr)
    type(nuce_balancer), intent(in) :: b
    integer(c_int64_t), intent(in) :: cells
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_set_memory_limit(b%ptr, cells), 'nuce_set_memory_limit', ierr)
  end subroutine nuce_set_memory_limit

  !> Sets this rank's memory limit from its machine's memory (collective,
  !> each rank its own arguments): `fraction` (in (0, 1]) of the machine's
  !> memory over the ranks on its host, in cells of `bytes_per_cell` bytes;
  !> `cells` (optional) returns the limit.
  subroutine nuce_set_memory_limit_from_machine(b, bytes_per_cell, fraction, cells, ierr)
    type(nuce_balancer), intent(in) :: b
    real(c_double), intent(in) :: bytes_per_cell, fraction
    integer(c_int64_t), intent(out), optional :: cells
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: got
    got = 0
    call fortran_call()
    call done(c_set_memory_limit_from_machine(b%ptr, bytes_per_cell, fraction, got), &
              'nuce_set_memory_limit_from_machine', ierr)
    if (present(cells)) cells = got
  end subroutine nuce_set_memory_limit_from_machine

  !> Opens a waiting section (local): its time is not compute for nuce's
  !> automatic timing (the application's own collectives and waits).
  subroutine nuce_waiting_begin(ierr)
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_waiting_begin(), 'nuce_waiting_begin', ierr)
  end subroutine nuce_waiting_begin

  !> Closes the innermost waiting section (local).
  subroutine nuce_waiting_end(ierr)
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_waiting_end(), 'nuce_waiting_end', ierr)
  end subroutine nuce_waiting_end

  ! --- Graphs ---------------------------------------------------------------

  !> The numbering of vertex ids: `numflag`, 1 when absent.
  function base_of(numflag) result(base)
    integer, intent(in), optional :: numflag
    integer(c_int64_t) :: base
    base = 1
    if (present(numflag)) base = int(numflag, c_int64_t)
  end function base_of

  !> The C API's CSR of the application's arrays, vertex ids shifted into
  !> `x0`, `a0` (0-based). `why` is '' when the shapes agree (the C API
  !> checks the values), else the reason; `n` is size(xadj) - 1.
  subroutine csr_of(xadj, adjncy, base, x0, a0, csr, why, vwgt, ewgt, coords)
    integer(c_int64_t), intent(in) :: xadj(:), adjncy(:), base
    integer(c_int64_t), intent(out), allocatable, target :: x0(:), a0(:)
    type(c_csr), intent(out) :: csr
    character(len=:), allocatable, intent(out) :: why
    real(c_double), intent(in), target, contiguous, optional :: vwgt(:), ewgt(:), coords(:, :)
    integer(c_int64_t) :: n
    character(len=64) :: line
    why = ''
    n = size(xadj, kind=c_int64_t) - 1
    x0 = xadj - base
    a0 = adjncy - base
    csr%n = max(n, 0_c_int64_t)
    if (n < 0) return
    csr%xadj = c_loc(x0)
    if (size(a0) > 0) csr%adjncy = c_loc(a0)
    if (x0(n + 1) >= 0 .and. x0(n + 1) /= size(adjncy)) then
      write (line, '(i0, a, i0)') size(adjncy), ' entries, xadj(n + 1) - numflag = ', x0(n + 1)
      why = 'adjncy has ' // trim(line) // ' expected'
    end if
    if (present(vwgt)) then
      if (size(vwgt) /= n) why = 'vwgt must have n = size(xadj) - 1 entries'
      if (size(vwgt) > 0) csr%vwgt = c_loc(vwgt)
    end if
    if (present(ewgt)) then
      if (size(ewgt) /= size(adjncy)) why = 'ewgt must have size(adjncy) entries'
      if (size(ewgt) > 0) csr%ewgt = c_loc(ewgt)
    end if
    if (present(coords)) then
      if (size(coords, 2) /= n) why = 'coords must be coords(dim, n)'
      csr%dim = int(size(coords, 1), c_int32_t)
      if (size(coords) > 0) csr%coords = c_loc(coords)
    end if
  end subroutine csr_of

  !> Partitions the graph `xadj`, `adjncy` (numbered from `numflag`, 1 by
  !> default) into `nparts` parts whose vertex weights are in the ratio of
  !> `tpwgts(nparts)` (equal when absent) with algorithm `algo`
  !> (NUCE_ALGO_*, default NUCE_ALGO_BEST). `part(n)` gets the part of every
  !> vertex, 0 .. nparts - 1; `edgecut` the weight of the cut edges. Local
  !> and pure (callable before MPI_Init). Not nuce_graph_partition: the verb
  !> first is the pure call with explicit targets, the nuce_graph_* name the
  !> balancer's collective call for its speeds.
  subroutine nuce_partition_graph(xadj, adjncy, nparts, part, vwgt, ewgt, coords, tpwgts, &
                                  algo, numflag, edgecut, ierr)
    integer(c_int64_t), intent(in) :: xadj(:), adjncy(:)
    integer, intent(in) :: nparts
    integer(c_int64_t), intent(out), target, contiguous :: part(:)
    real(c_double), intent(in), target, contiguous, optional :: vwgt(:), ewgt(:), coords(:, :)
    real(c_double), intent(in), target, contiguous, optional :: tpwgts(:)
    integer, intent(in), optional :: algo, numflag
    real(c_double), intent(out), target, optional :: edgecut
    integer, intent(out), optional :: ierr
    integer(c_int64_t), allocatable, target :: x0(:), a0(:)
    type(c_csr), target :: csr
    character(len=:), allocatable :: why
    type(c_ptr) :: g, tp, cut
    call csr_of(xadj, adjncy, base_of(numflag), x0, a0, csr, why, vwgt, ewgt, coords)
    if (size(part) /= size(xadj) - 1) why = 'part must have n = size(xadj) - 1 entries'
    tp = c_null_ptr
    if (present(tpwgts)) then
      if (size(tpwgts) /= nparts) why = 'tpwgts must have nparts entries'
      if (size(tpwgts) > 0) tp = c_loc(tpwgts)
    end if
    g = c_loc(csr)
    if (len(why) > 0 .or. size(xadj) == 0) g = c_null_ptr
    cut = c_null_ptr
    if (present(edgecut)) cut = c_loc(edgecut)
    call fortran_call(why, base=base_of(numflag))
    call done(c_partition_graph(g, int(nparts, c_int64_t), tp, algo_of(algo), iaddr(part), cut), &
              'nuce_partition_graph', ierr)
  end subroutine nuce_partition_graph

  !> The `NUCE_ALGO_*` code, NUCE_ALGO_BEST when absent.
  function algo_of(algo) result(code)
    integer, intent(in), optional :: algo
    integer(c_int) :: code
    code = NUCE_ALGO_BEST
    if (present(algo)) code = int(algo, c_int)
  end function algo_of

  !> The address of an integer(c_int64_t) buffer, or of `empty_i` when it
  !> has no element.
  function iaddr(x) result(p)
    integer(c_int64_t), intent(in), target, contiguous :: x(:)
    type(c_ptr) :: p
    p = c_loc(empty_i)
    if (size(x) > 0) p = c_loc(x)
  end function iaddr

  !> Partitions rank 0's graph into one part per rank in proportion to the
  !> balancer's speeds (collective; `algo` the same on every rank). `xadj`,
  !> `adjncy`, the weights, `coords`, `part(n)` (MPI ranks, 0-based) and
  !> `edgecut` are read and written on rank 0 only: elsewhere pass
  !> zero-size arrays. Not nuce_partition_graph (the pure, local call with
  !> explicit targets): this nuce_graph_* call is the balancer's, collective.
  subroutine nuce_graph_partition(b, xadj, adjncy, part, vwgt, ewgt, coords, algo, numflag, &
                                  edgecut, ierr)
    type(nuce_balancer), intent(in) :: b
    integer(c_int64_t), intent(in) :: xadj(:), adjncy(:)
    integer(c_int64_t), intent(out), target, contiguous :: part(:)
    real(c_double), intent(in), target, contiguous, optional :: vwgt(:), ewgt(:), coords(:, :)
    integer, intent(in), optional :: algo, numflag
    real(c_double), intent(out), target, optional :: edgecut
    integer, intent(out), optional :: ierr
    integer(c_int64_t), allocatable, target :: x0(:), a0(:)
    type(c_csr), target :: csr
    character(len=:), allocatable :: why
    type(c_ptr) :: g, cut, p
    call csr_of(xadj, adjncy, base_of(numflag), x0, a0, csr, why, vwgt, ewgt, coords)
    if (size(xadj) > 0 .and. size(part) > 0 .and. size(part) /= size(xadj) - 1) &
      why = 'part must have n = size(xadj) - 1 entries'
    g = c_loc(csr)
    if (len(why) > 0 .or. size(xadj) == 0) g = c_null_ptr
    p = c_null_ptr
    if (size(part) > 0) p = c_loc(part)
    cut = c_null_ptr
    if (present(edgecut)) cut = c_loc(edgecut)
    call fortran_call(why, base=base_of(numflag))
    call done(c_graph_partition(b%ptr, g, algo_of(algo), p, cut), 'nuce_graph_partition', ierr)
  end subroutine nuce_graph_partition

  !> Partitions rank 0's graph for the balancer's speeds and scatters it with
  !> rank 0's `records(m, n)`, `m` values per vertex (collective): elsewhere
  !> pass zero-size arrays, `records(m, 0)` (the first extent, the same on
  !> every rank, is the record length). Numbering: `numflag` (default 1).
  !> A balance point; copy this rank's records out with nuce_graph_read.
  subroutine nuce_graph_scatter(b, xadj, adjncy, records, g, vwgt, ewgt, coords, numflag, ierr)
    type(nuce_balancer), intent(in) :: b
    integer(c_int64_t), intent(in) :: xadj(:), adjncy(:)
    real(c_double), intent(in), target, contiguous :: records(:, :)
    type(nuce_graph), intent(out) :: g
    real(c_double), intent(in), target, contiguous, optional :: vwgt(:), ewgt(:), coords(:, :)
    integer, intent(in), optional :: numflag
    integer, intent(out), optional :: ierr
    integer(c_int64_t), allocatable, target :: x0(:), a0(:)
    type(c_csr), target :: csr
    character(len=:), allocatable :: why
    type(c_ptr) :: gp, r
    call csr_of(xadj, adjncy, base_of(numflag), x0, a0, csr, why, vwgt, ewgt, coords)
    if (size(xadj) > 0 .and. size(records, 2) > 0 .and. size(records, 2) /= size(xadj) - 1) &
      why = 'records must be records(m, n) on rank 0'
    gp = c_loc(csr)
    if (len(why) > 0 .or. size(xadj) == 0) gp = c_null_ptr
    r = c_null_ptr
    if (size(records) > 0) r = c_loc(records)
    g%m = size(records, 1, kind=c_int64_t)
    g%base = base_of(numflag)
    call fortran_call(why, base=g%base)
    call done(c_graph_scatter(b%ptr, gp, int(8 * g%m, c_size_t), r, g%ptr), &
              'nuce_graph_scatter', ierr)
  end subroutine nuce_graph_scatter

  ! --- Distributed graphs built from local pieces (nuce_graph_from_local) ---

  !> Builds a distributed graph from every rank's own vertices and
  !> partitions it by the balancer's current speeds (collective; no rank
  !> sees the whole graph). Each rank gives its nlocal vertices (0 allowed):
  !> `ids(nlocal)` their global ids (all ranks' together exactly the ids
  !> numflag .. numflag + n - 1, each once), `xadj(nlocal + 1)` and `adjncy`
  !> their adjacency (numbered from numflag, neighbours as global ids),
  !> `coords(dim, nlocal)` (dim 1 to 3, the same on every rank; required:
  !> the graph is partitioned and remapped geometrically) and
  !> `records(m, nlocal)` their values, in the order of `ids`; optional
  !> `vwgt(nlocal)` and `ewgt(size(adjncy))`. The vertices then live where
  !> the partition put them: ask nuce_graph_sizes and nuce_graph_read; then
  !> nuce_maybe_remap(b, g, ...) re-cuts the graph as for nuce_graph_scatter.
  subroutine nuce_graph_from_local(b, ids, xadj, adjncy, coords, records, g, vwgt, ewgt, &
                                   numflag, ierr)
    interface
      function c_graph_from_local(cb, nlocal, cids, cxadj, cadjncy, cvwgt, cewgt, dim, ccoords, &
                                  elem_size, values, out) &
          bind(c, name='nuce_graph_from_local') result(rc)
        import :: c_int, c_ptr, c_size_t
        type(c_ptr), value :: cb, cids, cxadj, cadjncy, cvwgt, cewgt, ccoords, values
        integer(c_size_t), value :: nlocal, elem_size
        integer(c_int), value :: dim
        type(c_ptr), intent(out) :: out
        integer(c_int) :: rc
      end function c_graph_from_local
    end interface
    type(nuce_balancer), intent(in) :: b
    integer(c_int64_t), intent(in) :: ids(:), xadj(:), adjncy(:)
    real(c_double), intent(in), target, contiguous :: coords(:, :), records(:, :)
    type(nuce_graph), intent(out) :: g
    real(c_double), intent(in), target, contiguous, optional :: vwgt(:), ewgt(:)
    integer, intent(in), optional :: numflag
    integer, intent(out), optional :: ierr
    integer(c_int64_t), allocatable, target :: i0(:), x0(:), a0(:)
    character(len=:), allocatable :: why
    type(c_ptr) :: vw, ew, xp
    integer(c_size_t) :: nl
    g%base = base_of(numflag)
    g%m = size(records, 1, kind=c_int64_t)
    nl = size(ids, kind=c_size_t)
    i0 = ids - g%base
    x0 = xadj - g%base
    a0 = adjncy - g%base
    why = ''
    vw = c_null_ptr
    ew = c_null_ptr
    if (present(vwgt)) then
      if (size(vwgt) /= size(ids)) why = 'vwgt must have size(ids) entries'
      if (size(vwgt) > 0) vw = c_loc(vwgt)
    end if
    if (present(ewgt)) then
      if (size(ewgt) /= size(adjncy)) why = 'ewgt must have size(adjncy) entries'
      if (size(ewgt) > 0) ew = c_loc(ewgt)
    end if
    if (size(xadj) /= size(ids) + 1) why = 'xadj must have size(ids) + 1 entries'
    if (size(coords, 2) /= size(ids)) why = 'coords must be coords(dim, size(ids))'
    if (size(records, 2) /= size(ids)) why = 'records must be records(m, size(ids))'
    ! A shape this module found wrong: this rank refuses the call (and
    ! passes no xadj), so that every rank returns the same error.
    xp = c_null_ptr
    if (len(why) == 0) xp = c_loc(x0)
    call fortran_call(why, base=g%base)
    call done(c_graph_from_local(b%ptr, nl, iaddr(i0), xp, iaddr(a0), vw, ew, &
                                 int(size(coords, 1), c_int), address(coords), &
                                 int(8 * g%m, c_size_t), address(records), g%ptr), &
              'nuce_graph_from_local', ierr)
  end subroutine nuce_graph_from_local

  ! --- end of nuce_graph_from_local ---

  !> Frees a graph (local).
  subroutine nuce_graph_free(g, ierr)
    type(nuce_graph), intent(inout) :: g
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_graph_free(g%ptr), 'nuce_graph_free', ierr)
    g%ptr = c_null_ptr
  end subroutine nuce_graph_free

  !> This rank's `owned` vertices, `ghosts` and `arcs` (entries of its local
  !> adjacency; local). Slot buffers are `values(m, owned + ghosts)`.
  subroutine nuce_graph_sizes(g, owned, ghosts, arcs, ierr)
    type(nuce_graph), intent(in) :: g
    integer(c_int64_t), intent(out) :: owned, ghosts
    integer(c_int64_t), intent(out), optional :: arcs
    integer, intent(out), optional :: ierr
    integer(c_size_t) :: o, h, a
    integer(c_int) :: rc
    o = 0
    h = 0
    a = 0
    call fortran_call()
    rc = c_graph_sizes(g%ptr, o, h, a)
    owned = o
    ghosts = h
    if (present(arcs)) arcs = a
    call done(rc, 'nuce_graph_sizes', ierr)
  end subroutine nuce_graph_sizes

  !> The global ids (numbered from numflag) of this rank's owned vertices,
  !> increasing; size(ids) = owned (local). Owned vertex k is slot k.
  subroutine nuce_graph_owned(g, ids, ierr)
    type(nuce_graph), intent(in) :: g
    integer(c_int64_t), intent(out), target, contiguous :: ids(:)
    integer, intent(out), optional :: ierr
    integer(c_int) :: rc
    call fortran_call()
    rc = c_graph_owned(g%ptr, iaddr(ids), size(ids, kind=c_size_t))
    if (rc == NUCE_OK) ids = ids + g%base
    call done(rc, 'nuce_graph_owned', ierr)
  end subroutine nuce_graph_owned

  !> The global ids (numbered from numflag) of this rank's ghosts,
  !> increasing; size(ids) = ghosts (local). Ghost k is slot owned + k.
  subroutine nuce_graph_ghosts(g, ids, ierr)
    type(nuce_graph), intent(in) :: g
    integer(c_int64_t), intent(out), target, contiguous :: ids(:)
    integer, intent(out), optional :: ierr
    integer(c_int) :: rc
    call fortran_call()
    rc = c_graph_ghosts(g%ptr, iaddr(ids), size(ids, kind=c_size_t))
    if (rc == NUCE_OK) ids = ids + g%base
    call done(rc, 'nuce_graph_ghosts', ierr)
  end subroutine nuce_graph_ghosts

  !> This rank's adjacency in slots (local), numbered from numflag: the
  !> neighbours of owned slot i are adjncy(xadj(i) : xadj(i + 1) - 1) with
  !> numflag 1 (a slot <= owned is owned, else a ghost), in the order of the
  !> global CSR; `ewgt` their edge weights. size(xadj) = owned + 1,
  !> size(adjncy) = size(ewgt) = arcs.
  subroutine nuce_graph_adjacency(g, xadj, adjncy, ewgt, ierr)
    type(nuce_graph), intent(in) :: g
    integer(c_int64_t), intent(out), target, contiguous :: xadj(:), adjncy(:)
    real(c_double), intent(out), target, contiguous, optional :: ewgt(:)
    integer, intent(out), optional :: ierr
    integer(c_int) :: rc
    character(len=:), allocatable :: why
    type(c_ptr) :: w
    why = ''
    w = c_null_ptr
    if (present(ewgt)) then
      if (size(ewgt) > 0) w = c_loc(ewgt)
      if (size(ewgt) /= size(adjncy)) why = 'ewgt must have size(adjncy) entries'
    end if
    if (len(why) > 0) then
      call done(int(NUCE_ERR_SHAPE_MISMATCH, c_int), 'nuce_graph_adjacency', ierr, why)
      return
    end if
    call fortran_call()
    rc = c_graph_adjacency(g%ptr, iaddr(xadj), size(xadj, kind=c_size_t), iaddr(adjncy), w, &
                           size(adjncy, kind=c_size_t))
    if (rc == NUCE_OK) then
      xadj = xadj + g%base
      adjncy = adjncy + g%base
    end if
    call done(rc, 'nuce_graph_adjacency', ierr)
  end subroutine nuce_graph_adjacency

  !> The number of records of the buffer `name`, `values(m, :)`. When its
  !> first extent is not the graph's m: a count the C API rejects (it never
  !> reads the buffer then), and `why` (if still '') says so, to be this
  !> rank's refusal of the call.
  function records_of(g, values, name, why) result(count)
    type(nuce_graph), intent(in) :: g
    real(c_double), intent(in) :: values(:, :)
    character(len=*), intent(in) :: name
    character(len=:), allocatable, intent(inout) :: why
    integer(c_size_t) :: count
    character(len=100) :: line
    count = size(values, 2, kind=c_size_t)
    if (size(values, 1) == g%m) return
    count = huge(count)
    if (len(why) > 0) return
    write (line, '(a, i0, a, i0)') '(m, :) must have m = ', g%m, &
      ' (the graph''s record length): its first extent is ', size(values, 1)
    why = name // trim(line)
  end function records_of

  !> Copies this rank's owned records into values(:, 1 : owned) of its slot
  !> buffer `values(m, owned + ghosts)` (local): after scatter, migrate and
  !> every remap. The ghost records are left untouched.
  subroutine nuce_graph_read(g, values, ierr)
    type(nuce_graph), intent(in) :: g
    real(c_double), intent(inout), target, contiguous :: values(:, :)
    integer, intent(out), optional :: ierr
    character(len=:), allocatable :: why
    integer(c_size_t) :: count
    why = ''
    count = records_of(g, values, 'values', why)
    call fortran_call(why, NUCE_ERR_SHAPE_MISMATCH)
    call done(c_graph_read(g%ptr, address(values), count), 'nuce_graph_read', ierr)
  end subroutine nuce_graph_read

  !> Fills the ghost records of the slot buffer `values` from their owners'
  !> slot buffers (collective).
  subroutine nuce_graph_exchange_ghosts(g, values, ierr)
    type(nuce_graph), intent(in) :: g
    real(c_double), intent(inout), target, contiguous :: values(:, :)
    integer, intent(out), optional :: ierr
    character(len=:), allocatable :: why
    integer(c_size_t) :: count
    why = ''
    count = records_of(g, values, 'values', why)
    call fortran_call(why, NUCE_ERR_SHAPE_MISMATCH, g%base)
    call done(c_graph_exchange_ghosts(g%ptr, address(values), count), &
              'nuce_graph_exchange_ghosts', ierr)
  end subroutine nuce_graph_exchange_ghosts

  !> Gathers every vertex's record into rank 0's `global(m, n)` (global
  !> vertex order; elsewhere pass a zero-size array) from every rank's slot
  !> buffer `values` (collective).
  subroutine nuce_graph_gather(g, values, global, ierr)
    type(nuce_graph), intent(in) :: g
    real(c_double), intent(in), target, contiguous :: values(:, :)
    real(c_double), intent(inout), target, contiguous :: global(:, :)
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    character(len=:), allocatable :: why
    integer(c_size_t) :: count, global_count
    why = ''
    count = records_of(g, values, 'values', why)
    ! A zero-size `global` off rank 0 is ignored (C's NULL).
    p = c_null_ptr
    global_count = 0
    if (size(global) > 0) then
      p = c_loc(global)
      global_count = records_of(g, global, 'global', why)
    end if
    call fortran_call(why, NUCE_ERR_SHAPE_MISMATCH, g%base)
    call done(c_graph_gather(g%ptr, address(values), count, p, global_count), &
              'nuce_graph_gather', ierr)
  end subroutine nuce_graph_gather

  !> Moves the graph to the partition `owner(n)` (the new MPI rank of every
  !> vertex, 0-based, identical on every rank; e.g. nuce_graph_partition's
  !> `part` broadcast), sending records from the slot buffer `values`
  !> (collective). Then reallocate `values` from nuce_graph_sizes, refill it
  !> with nuce_graph_read and exchange ghosts.
  subroutine nuce_graph_migrate(g, values, owner, ierr)
    type(nuce_graph), intent(in) :: g
    real(c_double), intent(in), target, contiguous :: values(:, :)
    integer(c_int64_t), intent(in), target, contiguous :: owner(:)
    integer, intent(out), optional :: ierr
    character(len=:), allocatable :: why
    integer(c_size_t) :: count
    why = ''
    count = records_of(g, values, 'values', why)
    call fortran_call(why, NUCE_ERR_SHAPE_MISMATCH, g%base)
    call done(c_graph_migrate(g%ptr, address(values), count, iaddr(owner), &
                              size(owner, kind=c_size_t)), 'nuce_graph_migrate', ierr)
  end subroutine nuce_graph_migrate

  !> A balance point for a graph after a phase of `iterations` iterations
  !> (collective), as for arrays: `remapped` is .true. on every rank when
  !> the layout changed; then proceed as after nuce_graph_migrate.
  subroutine graph_maybe_remap(b, g, iterations, values, remapped, ahead, ierr)
    type(nuce_balancer), intent(in) :: b
    type(nuce_graph), intent(in) :: g
    integer(c_int64_t), intent(in) :: iterations
    real(c_double), intent(in), target, contiguous :: values(:, :)
    logical, intent(out) :: remapped
    integer(c_int64_t), intent(in), optional :: ahead
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: horizon
    integer(c_int) :: flag
    character(len=:), allocatable :: why
    integer(c_size_t) :: count
    why = ''
    count = records_of(g, values, 'values', why)
    horizon = iterations
    if (present(ahead)) horizon = ahead
    flag = 0
    call fortran_call(why, NUCE_ERR_SHAPE_MISMATCH, g%base)
    call done(c_graph_maybe_remap_ahead(b%ptr, g%ptr, iterations, horizon, address(values), &
                                        count, flag), 'nuce_maybe_remap', ierr)
    remapped = flag /= 0
  end subroutine graph_maybe_remap

  ! --- Master-worker schedules ---------------------------------------------

  !> The platform of `cycle_times` (seconds per task of each worker) and the
  !> message costs; `why` names a shape error of the outputs.
  subroutine platform_of(cycle_times, tcom, tcom_return, counts, send_order, return_order, &
                         pf, why)
    real(c_double), intent(in), target, contiguous :: cycle_times(:)
    real(c_double), intent(in) :: tcom, tcom_return
    integer(c_int64_t), intent(in) :: counts(:), send_order(:), return_order(:)
    type(c_platform), intent(out) :: pf
    character(len=:), allocatable, intent(out) :: why
    why = ''
    pf%cycle_times = c_loc(empty)
    if (size(cycle_times) > 0) pf%cycle_times = c_loc(cycle_times)
    pf%workers = size(cycle_times, kind=c_size_t)
    pf%tcom = tcom
    pf%tcom_return = tcom_return
    if (any([size(counts), size(send_order), size(return_order)] /= size(cycle_times))) &
      why = 'counts, send_order and return_order must have one entry per worker'
  end subroutine platform_of

  !> The schedule of exactly `tasks` equal tasks with the least makespan
  !> found (MinTime, [BBLRR01]) on workers of `cycle_times(p)` seconds per
  !> task, initial messages of `tcom` and final ones of `tcom_return`
  !> seconds: `counts(p)` tasks per worker, `send_order(p)` and
  !> `return_order(p)` the workers (1-based indices) in the order the master
  !> sends and receives, `makespan` in seconds (local and pure).
  subroutine nuce_tasks_min_time(cycle_times, tcom, tcom_return, tasks, counts, send_order, &
                                 return_order, makespan, ierr)
    real(c_double), intent(in), target, contiguous :: cycle_times(:)
    real(c_double), intent(in) :: tcom, tcom_return
    integer(c_int64_t), intent(in) :: tasks
    integer(c_int64_t), intent(out) :: counts(:), send_order(:), return_order(:)
    real(c_double), intent(out), optional :: makespan
    integer, intent(out), optional :: ierr
    type(c_platform) :: pf
    character(len=:), allocatable :: why
    integer(c_int) :: rc
    real(c_double) :: t
    call platform_of(cycle_times, tcom, tcom_return, counts, send_order, return_order, pf, why)
    if (tasks < 0) why = 'tasks is negative'
    rc = NUCE_ERR_SHAPE_MISMATCH
    if (tasks < 0) rc = NUCE_ERR_INVALID_INPUT
    call fortran_call()
    if (len(why) == 0) rc = c_tasks_min_time(pf, tasks, counts, send_order, return_order, t)
    call schedule_done(rc, t, send_order, return_order, makespan, 'nuce_tasks_min_time', why, ierr)
  end subroutine nuce_tasks_min_time

  !> The schedule of as many tasks as fit within `deadline` seconds
  !> (MaxTasks, [BBLRR01]; arguments as nuce_tasks_min_time; local and pure).
  subroutine nuce_tasks_max_tasks(cycle_times, tcom, tcom_return, deadline, counts, send_order, &
                                  return_order, makespan, ierr)
    real(c_double), intent(in), target, contiguous :: cycle_times(:)
    real(c_double), intent(in) :: tcom, tcom_return, deadline
    integer(c_int64_t), intent(out) :: counts(:), send_order(:), return_order(:)
    real(c_double), intent(out), optional :: makespan
    integer, intent(out), optional :: ierr
    type(c_platform) :: pf
    character(len=:), allocatable :: why
    integer(c_int) :: rc
    real(c_double) :: t
    call platform_of(cycle_times, tcom, tcom_return, counts, send_order, return_order, pf, why)
    rc = NUCE_ERR_SHAPE_MISMATCH
    call fortran_call()
    if (len(why) == 0) rc = c_tasks_max_tasks(pf, deadline, counts, send_order, return_order, t)
    call schedule_done(rc, t, send_order, return_order, makespan, 'nuce_tasks_max_tasks', why, ierr)
  end subroutine nuce_tasks_max_tasks

  !> Shifts a schedule's orders to 1-based and reports `rc`.
  subroutine schedule_done(rc, t, send_order, return_order, makespan, what, why, ierr)
    integer(c_int), intent(in) :: rc
    real(c_double), intent(in) :: t
    integer(c_int64_t), intent(inout) :: send_order(:), return_order(:)
    real(c_double), intent(out), optional :: makespan
    character(len=*), intent(in) :: what, why
    integer, intent(out), optional :: ierr
    if (rc == NUCE_OK) then
      send_order = send_order + 1
      return_order = return_order + 1
      if (present(makespan)) makespan = t
    end if
    call done(rc, what, ierr, why)
  end subroutine schedule_done

  ! --- AMR ------------------------------------------------------------------

  !> Allocates one submesh of the p x q processor mesh to each grid
  !> `grids(:, i) = [w, h]` (mesh points along x and y, > 0; m = size(grids,
  !> 2) <= p q), packed by `packer` (NUCE_PACK_*, default NUCE_PACK_TIGHT)
  !> and scaled by `scaling` (NUCE_SCALE_*, default NUCE_SCALE_NONUNIFORM).
  !> Grid i gets processors lo(1, i) .. hi(1, i) along x (1 .. p) and
  !> lo(2, i) .. hi(2, i) along y (1 .. q), non-empty and pairwise
  !> disjoint; `rotated(i)` is .true. where the grid was packed turned by
  !> 90 degrees. Local and pure.
  subroutine nuce_amr_allocate(grids, p, q, lo, hi, packer, scaling, rotated, ierr)
    integer(c_int64_t), intent(in) :: grids(:, :)
    integer(c_int64_t), intent(in) :: p, q
    integer(c_int64_t), intent(out) :: lo(:, :), hi(:, :)
    integer, intent(in), optional :: packer, scaling
    logical, intent(out), optional :: rotated(:)
    integer, intent(out), optional :: ierr
    integer(c_int64_t), allocatable :: sub(:, :)
    integer(c_int), allocatable :: rot(:)
    integer(c_int) :: rc, pk, sc
    integer :: m, i
    character(len=:), allocatable :: why
    m = size(grids, 2)
    why = ''
    rc = NUCE_ERR_SHAPE_MISMATCH
    if (size(grids, 1) /= 2) why = 'grids must be grids(2, m)'
    if (any(shape(lo) /= [2, m]) .or. any(shape(hi) /= [2, m])) &
      why = 'lo and hi must be lo(2, m), hi(2, m)'
    if (present(rotated)) then
      if (size(rotated) /= m) why = 'rotated must have m entries'
    end if
    if (len(why) == 0 .and. any(grids <= 0)) then
      why = 'every grid size must be > 0'
      rc = NUCE_ERR_INVALID_INPUT
    end if
    pk = NUCE_PACK_TIGHT
    if (present(packer)) pk = int(packer, c_int)
    sc = NUCE_SCALE_NONUNIFORM
    if (present(scaling)) sc = int(scaling, c_int)
    allocate (sub(4, max(m, 1)), rot(max(m, 1)))
    sub = 0
    rot = 0
    call fortran_call()
    if (len(why) == 0) rc = c_amr_allocate(grids, int(m, c_size_t), p, q, pk, sc, sub, rot)
    if (rc == NUCE_OK) then
      do i = 1, m
        call to_box(sub(:, i), lo(:, i), hi(:, i))
      end do
      if (present(rotated)) rotated = rot(1:m) /= 0
    end if
    call done(rc, 'nuce_amr_allocate', ierr, why)
  end subroutine nuce_amr_allocate


  ! ---- PETSc DMDA ownership ranges (nuce_ownership_ranges; one block) ----
  !> Ownership ranges lx, ly, lz of an n(1) x n(2) x n(3) grid (PETSc's M, N, P) for
  !> DMDACreate3d, fitted to the current speeds in DMDA's rank order (collective;
  !> docs/c-api.md, "PETSc DMDA ownership ranges"). procs(3) (DMDA's m, n, p): in, all
  !> 0 to let nuce choose, or all given; out, the grid used. lx, ly, lz are allocated
  !> to procs(1), procs(2), procs(3) entries summing to n(1), n(2), n(3). imbalance
  !> (optional): the slowest rank's predicted time over the speeds' ideal, minus 1.
  subroutine nuce_ownership_ranges(b, n, procs, lx, ly, lz, imbalance, ierr)
    type(nuce_balancer), intent(in) :: b
    integer(c_int64_t), intent(in) :: n(3)
    integer, intent(inout) :: procs(3)
    integer(c_int64_t), allocatable, intent(out) :: lx(:), ly(:), lz(:)
    real(c_double), intent(out), optional :: imbalance
    integer, intent(out), optional :: ierr
    interface
      function c_ownership_ranges(b, n, procs, lx, ly, lz, imbalance) &
          bind(c, name='nuce_ownership_ranges') result(rc)
        import :: c_int, c_int64_t, c_double, c_ptr
        type(c_ptr), value :: b
        integer(c_int64_t), intent(in) :: n(3)
        integer(c_int), intent(inout) :: procs(3)
        integer(c_int64_t), intent(out) :: lx(*), ly(*), lz(*)
        real(c_double), intent(out) :: imbalance
        integer(c_int) :: rc
      end function c_ownership_ranges
    end interface
    integer(c_int64_t), allocatable :: bx(:), by(:), bz(:)
    integer(c_int) :: g(3), rc
    real(c_double) :: imb
    integer(c_int64_t) :: room(3)
    g = int(procs, c_int)
    ! Room for the ranges: the given grid, else at most n(a) (every range holds a cell).
    room = max(1_c_int64_t, n)
    if (all(procs > 0)) room = int(procs, c_int64_t)
    allocate (bx(room(1)), by(room(2)), bz(room(3)))
    imb = 0
    call fortran_call()
    rc = c_ownership_ranges(b%ptr, n, g, bx, by, bz, imb)
    if (rc == NUCE_OK) then
      procs = int(g)
      lx = bx(1:g(1))
      ly = by(1:g(2))
      lz = bz(1:g(3))
      if (present(imbalance)) imbalance = imb
    else
      allocate (lx(0), ly(0), lz(0))
    end if
    call done(rc, 'nuce_ownership_ranges', ierr)
  end subroutine nuce_ownership_ranges
  ! ---- end of PETSc DMDA ownership ranges ----

  ! ---- p4est counts (nuce_plan_1d_weighted; one block) ----
  !> Partitions the items of all ranks (rank 0's, then rank 1's, ..., each rank's in
  !> curve order: p4est's local quadrants) with this rank's weights(:) (finite, >= 0)
  !> into contiguous counts whose weights follow the speeds of the timed phases
  !> (collective; a balance point; docs/c-api.md, "p4est"): counts(r + 1) items for
  !> MPI rank r (size(counts) = the number of ranks), summing to the global number.
  !> The phase since the last balance point counts `iterations` iterations of the
  !> weight this rank received from the previous call, unless nuce_record_phase
  !> recorded it (0: nothing timed). imbalance (optional): the slowest rank's time
  !> over the ideal, minus 1.
  subroutine nuce_plan_1d_weighted(b, weights, iterations, counts, imbalance, ierr)
    type(nuce_balancer), intent(in) :: b
    real(c_double), intent(in), target, contiguous :: weights(:)
    integer(c_int64_t), intent(in) :: iterations
    integer(c_int64_t), intent(out), target, contiguous :: counts(:)
    real(c_double), intent(out), optional :: imbalance
    integer, intent(out), optional :: ierr
    interface
      function c_plan_1d_weighted(b, weights, nlocal, iterations, counts, ncounts, imbalance) &
          bind(c, name='nuce_plan_1d_weighted') result(rc)
        import :: c_int, c_int64_t, c_double, c_ptr, c_size_t
        type(c_ptr), value :: b, weights, counts
        integer(c_int64_t), value :: nlocal, iterations
        integer(c_size_t), value :: ncounts
        real(c_double), intent(out) :: imbalance
        integer(c_int) :: rc
      end function c_plan_1d_weighted
    end interface
    type(c_ptr) :: w
    real(c_double) :: imb
    integer(c_int) :: rc
    w = c_null_ptr
    if (size(weights) > 0) w = c_loc(weights)
    imb = 0
    call fortran_call()
    rc = c_plan_1d_weighted(b%ptr, w, int(size(weights), c_int64_t), iterations, iaddr(counts), &
                            int(size(counts), c_size_t), imb)
    if (rc == NUCE_OK .and. present(imbalance)) imbalance = imb
    call done(rc, 'nuce_plan_1d_weighted', ierr)
  end subroutine nuce_plan_1d_weighted
  ! ---- end of p4est counts ----

  ! --- Grids on the application's own arrays ----------------------------------
  ! The C API is C order (dimension 3 fastest); here the axes are reversed:
  ! Fortran's n(1) (i, fastest) is the C API's n[2], and boxes are shifted to
  ! 1-based inclusive bounds.

  !> Plans an n(1) x n(2) x n(3) grid (i fastest; a 2D grid has n(3) = 1)
  !> for the current speeds and makes its layout for `stencil`
  !> (NUCE_STENCIL_FACES or NUCE_STENCIL_BOX) with `ghost` layers, 0 to 4
  !> (collective, the same arguments on every rank). A balance point.
  subroutine nuce_grid_create(b, n, ghost, stencil, g, ierr)
    type(nuce_balancer), intent(in) :: b
    integer(c_int64_t), intent(in) :: n(3), ghost
    integer, intent(in) :: stencil
    type(nuce_grid), intent(out) :: g
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_grid_create(b%ptr, n(3:1:-1), ghost, int(stencil, c_int), g%ptr), &
              'nuce_grid_create', ierr)
  end subroutine nuce_grid_create

  !> Frees a grid (local); no exchange of it may be in flight.
  subroutine nuce_grid_free(g, ierr)
    type(nuce_grid), intent(inout) :: g
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_grid_free(g%ptr), 'nuce_grid_free', ierr)
    g%ptr = c_null_ptr
  end subroutine nuce_grid_free

  !> Rank `rank`'s box (0-based MPI rank) as global bounds lo(3), hi(3),
  !> 1-based and inclusive (local); an empty box has hi < lo. While a move
  !> is pending (after nuce_grid_maybe_remap set `remapped`), the new box.
  subroutine nuce_grid_box(g, rank, lo, hi, ierr)
    type(nuce_grid), intent(in) :: g
    integer, intent(in) :: rank
    integer(c_int64_t), intent(out) :: lo(3), hi(3)
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: clo(3), csize(3)
    integer(c_int) :: rc
    clo = 0
    csize = 0
    call fortran_call()
    rc = c_grid_box(g%ptr, int(rank, c_int), clo, csize)
    lo = clo(3:1:-1) + 1
    hi = clo(3:1:-1) + csize(3:1:-1)
    call done(rc, 'nuce_grid_box', ierr)
  end subroutine nuce_grid_box

  !> This rank's neighbours in the current layout, ascending 0-based MPI
  !> ranks (local).
  subroutine nuce_grid_neighbours(g, ranks, ierr)
    type(nuce_grid), intent(in) :: g
    integer, allocatable, intent(out) :: ranks(:)
    integer, intent(out), optional :: ierr
    integer(c_int), allocatable, target :: r(:)
    integer(c_int) :: rc, count, room
    count = 0
    call fortran_call()
    rc = c_grid_neighbours(g%ptr, count, c_null_ptr, 0_c_int)
    if (rc /= NUCE_OK) count = 0
    room = count
    allocate (r(max(room, 1)))
    call fortran_call()
    if (room > 0) rc = c_grid_neighbours(g%ptr, count, c_loc(r), room)
    count = min(count, room)
    if (rc /= NUCE_OK) count = 0
    ranks = int(r(1:count))
    call done(rc, 'nuce_grid_neighbours', ierr)
  end subroutine nuce_grid_neighbours

  !> The field of the whole padded array `u`, allocated as
  !> u(lo(1) - pad(1):hi(1) + pad(1), lo(2) - pad(2):..., lo(3) - pad(3):...)
  !> from nuce_grid_box (pad(d) >= the ghost width where n(d) > 1). `u` must
  !> be a whole array with the target attribute (not a section) and stay
  !> allocated while nuce uses the field.
  function grid_field_real3(u, pad) result(f)
    real(c_double), intent(in), target, contiguous :: u(:, :, :)
    integer(c_int64_t), intent(in) :: pad(3)
    type(nuce_field) :: f
    f = grid_field_ptr(c_null_ptr, c_sizeof(empty(1)), pad)
    if (size(u) > 0) f%data = c_loc(u)
  end function grid_field_real3

  !> The field of a padded block of `elem_size`-byte cells starting at `data`
  !> (e.g. c_loc(u) of any cell type, c_null_ptr for an empty box), with
  !> pad(d) halo cells on each side of Fortran dimension d.
  function grid_field_ptr(data, elem_size, pad) result(f)
    type(c_ptr), intent(in) :: data
    integer(c_size_t), intent(in) :: elem_size
    integer(c_int64_t), intent(in) :: pad(3)
    type(nuce_field) :: f
    f%data = data
    f%elem_size = elem_size
    f%pad = pad(3:1:-1)
  end function grid_field_ptr

  !> The address of an array of fields (c_null_ptr when empty).
  function fields_address(fields) result(p)
    type(nuce_field), intent(in), target, contiguous :: fields(:)
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(fields) > 0) p = c_loc(fields)
  end function fields_address

  !> Fills the ghost cells of `fields` from the neighbours, in place
  !> (collective over the grid's ranks; the same number of fields and
  !> element sizes on every rank). Ghost cells outside the grid stay.
  subroutine nuce_grid_exchange(g, fields, ierr)
    type(nuce_grid), intent(in) :: g
    type(nuce_field), intent(in), target, contiguous :: fields(:)
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_grid_exchange(g%ptr, size(fields, kind=c_int), fields_address(fields)), &
              'nuce_grid_exchange', ierr)
  end subroutine nuce_grid_exchange

  !> Starts the exchange of nuce_grid_exchange and returns at once with `x`:
  !> compute meanwhile (reading any cell, writing none that is sent,
  !> touching no ghost cell), then end it with nuce_grid_exchange_end. The
  !> arrays must stay allocated until then.
  subroutine nuce_grid_exchange_begin(g, fields, x, ierr)
    type(nuce_grid), intent(in) :: g
    type(nuce_field), intent(in), target, contiguous :: fields(:)
    type(nuce_exchange), intent(out) :: x
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_grid_exchange_begin(g%ptr, size(fields, kind=c_int), fields_address(fields), &
                                    x%ptr), 'nuce_grid_exchange_begin', ierr)
  end subroutine nuce_grid_exchange_begin

  !> Ends an exchange begun by nuce_grid_exchange_begin: the ghost cells are
  !> filled (or the same error is returned on every rank involved).
  subroutine nuce_grid_exchange_end(x, ierr)
    type(nuce_exchange), intent(inout) :: x
    integer, intent(out), optional :: ierr
    integer(c_int) :: rc
    call fortran_call()
    rc = c_grid_exchange_end(x%ptr)
    x%ptr = c_null_ptr
    call done(rc, 'nuce_grid_exchange_end', ierr)
  end subroutine nuce_grid_exchange_end

  !> A balance point after a phase of `iterations` iterations (collective
  !> over the balancer's ranks): measures, and decides whether a new layout
  !> pays off within `ahead` iterations (default: `iterations`). When
  !> `remapped` is .true. (on every rank), a move is pending: ask the new
  !> box (nuce_grid_box), allocate new arrays and call nuce_grid_move.
  subroutine nuce_grid_maybe_remap(b, g, iterations, remapped, ahead, ierr)
    type(nuce_balancer), intent(in) :: b
    type(nuce_grid), intent(in) :: g
    integer(c_int64_t), intent(in) :: iterations
    logical, intent(out) :: remapped
    integer(c_int64_t), intent(in), optional :: ahead
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: horizon
    integer(c_int) :: flag
    horizon = iterations
    if (present(ahead)) horizon = ahead
    flag = 0
    call fortran_call()
    call done(c_grid_maybe_remap_ahead(b%ptr, g%ptr, iterations, horizon, flag), &
              'nuce_grid_maybe_remap', ierr)
    remapped = flag /= 0
  end subroutine nuce_grid_maybe_remap

  !> The decision of the balancer's last balance point (local; the same on
  !> every rank): NUCE_ERR_INVALID_INPUT before the first one.
  subroutine nuce_last_decision(b, d, ierr)
    type(nuce_balancer), intent(in) :: b
    type(nuce_decision), intent(out) :: d
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_last_decision(b%ptr, d), 'nuce_last_decision', ierr)
  end subroutine nuce_last_decision

  !> The name of a NUCE_RULE_* value, as C's nuce_rule_name and Rust's
  !> DecisionRule give it ('unknown' for any other value).
  function nuce_rule_name(rule) result(name)
    integer(c_int), intent(in) :: rule
    character(len=:), allocatable :: name
    select case (rule)
    case (NUCE_RULE_EXACT)
      name = 'Exact'
    case (NUCE_RULE_WITHIN_NOISE)
      name = 'WithinNoise'
    case (NUCE_RULE_PERSISTENT)
      name = 'Persistent'
    case (NUCE_RULE_AMORTIZED)
      name = 'Amortized'
    case (NUCE_RULE_NO_PAYOFF)
      name = 'NoPayoff'
    case (NUCE_RULE_VETOED)
      name = 'Vetoed'
    case default
      name = 'unknown'
    end select
  end function nuce_rule_name

  !> Completes a pending remap (collective over the grid's ranks): fills
  !> `new_fields` (arrays allocated for the new box) from `old_fields` (the
  !> box before the remap), field by field. Ghost cells are not filled:
  !> exchange afterwards. Errors are the same on every rank; nothing is
  !> moved then.
  subroutine nuce_grid_move(g, old_fields, new_fields, ierr)
    type(nuce_grid), intent(in) :: g
    type(nuce_field), intent(in), target, contiguous :: old_fields(:), new_fields(:)
    integer, intent(out), optional :: ierr
    type(c_ptr) :: pnew
    character(len=:), allocatable :: why
    why = ''
    pnew = fields_address(new_fields)
    if (size(new_fields) /= size(old_fields)) then
      ! This rank refuses the call (and passes no new_fields): the same error everywhere.
      why = 'old_fields and new_fields must have the same number of fields'
      pnew = c_null_ptr
    end if
    call fortran_call(why)
    call done(c_grid_move(g%ptr, size(old_fields, kind=c_int), fields_address(old_fields), pnew), &
              'nuce_grid_move', ierr)
  end subroutine nuce_grid_move

  !> Sets the cost per cell of this rank's box (local): `cost` holds one
  !> value per cell of the box of nuce_grid_box, without padding, e.g.
  !> cost(lo(1):hi(1), lo(2):hi(2), lo(3):hi(3)) (a 2D grid's box may be
  !> given as cost(lo(1):hi(1), lo(2):hi(2))); any unit, finite and >= 0.
  !> The balancer then times, plans and decides by the summed cost (see
  !> docs/fortran-api.md). Checked at the next balance point, where a bad
  !> cost on any rank is the same error on every rank. The cost does not
  !> follow a move: after a remap that changes the box, set it again for
  !> the new box (nuce_grid_box gives it already while the move is pending).
  subroutine grid_set_cost3(g, cost, ierr)
    type(nuce_grid), intent(in) :: g
    real(c_double), intent(in), target, contiguous :: cost(:, :, :)
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(cost) > 0) p = c_loc(cost)
    call fortran_call()
    call done(c_grid_set_cost(g%ptr, p, int(size(cost), c_size_t)), 'nuce_grid_set_cost', ierr)
  end subroutine grid_set_cost3

  !> nuce_grid_set_cost for a 2D grid's box (its third extent is 1).
  subroutine grid_set_cost2(g, cost, ierr)
    type(nuce_grid), intent(in) :: g
    real(c_double), intent(in), target, contiguous :: cost(:, :)
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(cost) > 0) p = c_loc(cost)
    call fortran_call()
    call done(c_grid_set_cost(g%ptr, p, int(size(cost), c_size_t)), 'nuce_grid_set_cost', ierr)
  end subroutine grid_set_cost2

  !> Drops the cost per cell (local): the balancer counts cells again.
  subroutine nuce_grid_clear_cost(g, ierr)
    type(nuce_grid), intent(in) :: g
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_grid_clear_cost(g%ptr), 'nuce_grid_clear_cost', ierr)
  end subroutine nuce_grid_clear_cost

  !> Gathers the grid's `field` (nuce_grid_field of this rank's real(c_double)
  !> array; halo cells are not read) into rank 0's whole array
  !> `global(n(1), n(2), n(3))` (ignored elsewhere: pass a zero-size array)
  !> (collective over the grid's ranks).
  subroutine grid_gather3(g, field, global, ierr)
    type(nuce_grid), intent(in) :: g
    type(nuce_field), intent(in), target :: field
    real(c_double), intent(inout), target, contiguous :: global(:, :, :)
    integer, intent(out), optional :: ierr
    call grid_whole(g, field, global, size(global), .true., ierr)
  end subroutine grid_gather3

  !> nuce_grid_gather of a 2D grid into rank 0's `global(n(1), n(2))`.
  subroutine grid_gather2(g, field, global, ierr)
    type(nuce_grid), intent(in) :: g
    type(nuce_field), intent(in), target :: field
    real(c_double), intent(inout), target, contiguous :: global(:, :)
    integer, intent(out), optional :: ierr
    call grid_whole(g, field, global, size(global), .true., ierr)
  end subroutine grid_gather2

  !> Scatters rank 0's whole array `global(n(1), n(2), n(3))` (read on rank
  !> 0 only: pass a zero-size array elsewhere) into every rank's `field`
  !> (nuce_grid_field of its real(c_double) array; halo cells are not
  !> written: exchange next) (collective over the grid's ranks).
  subroutine grid_scatter3(g, global, field, ierr)
    type(nuce_grid), intent(in) :: g
    real(c_double), intent(in), target, contiguous :: global(:, :, :)
    type(nuce_field), intent(in), target :: field
    integer, intent(out), optional :: ierr
    call grid_whole(g, field, global, size(global), .false., ierr)
  end subroutine grid_scatter3

  !> nuce_grid_scatter of a 2D grid from rank 0's `global(n(1), n(2))`.
  subroutine grid_scatter2(g, global, field, ierr)
    type(nuce_grid), intent(in) :: g
    real(c_double), intent(in), target, contiguous :: global(:, :)
    type(nuce_field), intent(in), target :: field
    integer, intent(out), optional :: ierr
    call grid_whole(g, field, global, size(global), .false., ierr)
  end subroutine grid_scatter2

  !> The shared body of the gathers (`gather`: `global` written) and
  !> scatters (read), on the `n` values of the whole array `global`. It is
  !> real(c_double), so the field's cells must be 8 bytes (else
  !> this rank refuses the call: the same error on every rank).
  subroutine grid_whole(g, field, global, n, gather, ierr)
    type(nuce_grid), intent(in) :: g
    type(nuce_field), intent(in), target :: field
    real(c_double), target :: global(*)
    integer, intent(in) :: n
    logical, intent(in) :: gather
    integer, intent(out), optional :: ierr
    character(len=:), allocatable :: why
    type(c_ptr) :: p
    p = c_null_ptr
    if (n > 0) p = c_loc(global(1))
    why = ''
    if (field%elem_size /= 8) why = 'the field''s cells are not real(c_double) like the whole array'
    call fortran_call(why)
    if (gather) then
      call done(c_grid_gather(g%ptr, c_loc(field), p, int(n, c_size_t)), 'nuce_grid_gather', ierr)
    else
      call done(c_grid_scatter(g%ptr, p, int(n, c_size_t), c_loc(field)), 'nuce_grid_scatter', ierr)
    end if
  end subroutine grid_whole

  ! --- Save files and restarts on another number of ranks ---------------------

  !> Saves the grid's `fields` (this rank's box of each; ghost cells are not
  !> saved), its cost per cell if one is set for the current box, and the
  !> application's own 64-bit integers `user` (e.g. the step; optional) to
  !> the file `path` (collective over the grid's ranks; the same path,
  !> number of fields and cell sizes on every rank). Written under
  !> path // '.nuce-tmp' and renamed once every rank succeeded: a job killed
  !> while saving keeps the previous file.
  subroutine nuce_grid_save(g, path, fields, user, ierr)
    type(nuce_grid), intent(in) :: g
    character(len=*), intent(in) :: path
    type(nuce_field), intent(in), target, contiguous :: fields(:)
    integer(c_int64_t), intent(in), target, contiguous, optional :: user(:)
    integer, intent(out), optional :: ierr
    type(c_ptr) :: pu
    integer(c_size_t) :: nu
    call user_bytes(user, pu, nu)
    call fortran_call()
    call done(c_grid_save(g%ptr, trim(path) // c_null_char, size(fields, kind=c_int), &
                          fields_address(fields), pu, nu), 'nuce_grid_save', ierr)
  end subroutine nuce_grid_save

  !> nuce_grid_save that also saves the balancer's speed state (collective
  !> over the balancer's ranks, the grid's): a restart on as many ranks as
  !> saved the file starts from those speeds (nothing measured); on another
  !> number they are reported (nuce_saved_speeds).
  subroutine nuce_grid_checkpoint(b, g, path, fields, user, ierr)
    type(nuce_balancer), intent(in) :: b
    type(nuce_grid), intent(in) :: g
    character(len=*), intent(in) :: path
    type(nuce_field), intent(in), target, contiguous :: fields(:)
    integer(c_int64_t), intent(in), target, contiguous, optional :: user(:)
    integer, intent(out), optional :: ierr
    type(c_ptr) :: pu
    integer(c_size_t) :: nu
    call user_bytes(user, pu, nu)
    call fortran_call()
    call done(c_grid_checkpoint(b%ptr, g%ptr, trim(path) // c_null_char, &
                                size(fields, kind=c_int), fields_address(fields), pu, nu), &
              'nuce_grid_checkpoint', ierr)
  end subroutine nuce_grid_checkpoint

  !> The speeds of the ranks that wrote a grid's checkpoint (local; empty
  !> for a plain nuce_grid_save or an older nuce's file).
  subroutine nuce_saved_speeds(s, speeds, ierr)
    type(nuce_saved), intent(in) :: s
    real(c_double), allocatable, target, intent(out) :: speeds(:)
    integer, intent(out), optional :: ierr
    call saved_speeds_of(s%ptr, .false., speeds, ierr)
  end subroutine nuce_saved_speeds

  !> The speeds of the ranks that wrote a graph's checkpoint (local; empty
  !> without).
  subroutine nuce_saved_graph_speeds(s, speeds, ierr)
    type(nuce_saved_graph), intent(in) :: s
    real(c_double), allocatable, target, intent(out) :: speeds(:)
    integer, intent(out), optional :: ierr
    call saved_speeds_of(s%ptr, .true., speeds, ierr)
  end subroutine nuce_saved_graph_speeds

  !> The body of nuce_saved_speeds (`graph` false) and nuce_saved_graph_speeds.
  subroutine saved_speeds_of(p, graph, speeds, ierr)
    type(c_ptr), intent(in) :: p
    logical, intent(in) :: graph
    real(c_double), allocatable, target, intent(out) :: speeds(:)
    integer, intent(out), optional :: ierr
    integer(c_int) :: count, got, rc
    count = 0
    got = 0
    call fortran_call()
    if (graph) then
      rc = c_saved_graph_speeds(p, 0_c_int, c_null_ptr, count)
    else
      rc = c_saved_speeds(p, 0_c_int, c_null_ptr, count)
    end if
    allocate (speeds(max(count, 0_c_int)))
    if (rc == NUCE_OK .and. count > 0) then
      if (graph) then
        rc = c_saved_graph_speeds(p, count, c_loc(speeds), got)
      else
        rc = c_saved_speeds(p, count, c_loc(speeds), got)
      end if
    end if
    call done(rc, 'nuce_saved_speeds', ierr)
  end subroutine saved_speeds_of

  !> The address and byte count of a save's optional `user` words
  !> (c_null_ptr and 0 when absent or empty).
  subroutine user_bytes(user, p, nbytes)
    integer(c_int64_t), intent(in), target, contiguous, optional :: user(:)
    type(c_ptr), intent(out) :: p
    integer(c_size_t), intent(out) :: nbytes
    p = c_null_ptr
    nbytes = 0
    if (.not. present(user)) return
    if (size(user) == 0) return
    p = c_loc(user)
    nbytes = int(size(user), c_size_t) * 8_c_size_t
  end subroutine user_bytes

  !> The `nbytes / 8` 64-bit words at `p` (a save file's user bytes; a
  !> trailing part of fewer than 8 bytes is left out).
  function user_words(p, nbytes) result(user)
    type(c_ptr), intent(in) :: p
    integer(c_size_t), intent(in) :: nbytes
    integer(c_int64_t), allocatable :: user(:)
    integer(c_int64_t), pointer :: words(:)
    allocate (user(nbytes / 8))
    if (size(user) == 0) return
    call c_f_pointer(p, words, [size(user)])
    user = words
  end function user_words

  !> Opens the save file `path` (collective over the balancer's ranks, any
  !> number of them): a missing, truncated or corrupt file, or another
  !> format, is the same error on every rank.
  subroutine nuce_saved_open(b, path, s, ierr)
    type(nuce_balancer), intent(in) :: b
    character(len=*), intent(in) :: path
    type(nuce_saved), intent(out) :: s
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_saved_open(b%ptr, trim(path) // c_null_char, s%ptr), 'nuce_saved_open', ierr)
  end subroutine nuce_saved_open

  !> The saved grid (local): extents n(3) in Fortran order, ghost width,
  !> stencil (NUCE_STENCIL_FACES or NUCE_STENCIL_BOX), number of fields,
  !> and the number of ranks that saved it; every output but n optional.
  subroutine nuce_saved_grid(s, n, ghost, stencil, nfields, saved_ranks, ierr)
    type(nuce_saved), intent(in) :: s
    integer(c_int64_t), intent(out) :: n(3)
    integer(c_int64_t), intent(out), optional :: ghost
    integer, intent(out), optional :: stencil, nfields, saved_ranks
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: cn(3), g
    integer(c_int) :: st, nf, sr
    call fortran_call()
    call done(c_saved_grid(s%ptr, cn, g, st, nf, sr), 'nuce_saved_grid', ierr)
    n = cn(3:1:-1)
    if (present(ghost)) ghost = g
    if (present(stencil)) stencil = int(st)
    if (present(nfields)) nfields = int(nf)
    if (present(saved_ranks)) saved_ranks = int(sr)
  end subroutine nuce_saved_grid

  !> The 64-bit integers given to nuce_grid_save as `user` (local; empty
  !> when none were).
  subroutine nuce_saved_user(s, user, ierr)
    type(nuce_saved), intent(in) :: s
    integer(c_int64_t), allocatable, intent(out) :: user(:)
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    integer(c_size_t) :: nbytes
    integer(c_int) :: rc
    p = c_null_ptr
    nbytes = 0
    call fortran_call()
    rc = c_saved_user(s%ptr, p, nbytes)
    if (rc /= NUCE_OK) nbytes = 0
    user = user_words(p, nbytes)
    call done(rc, 'nuce_saved_user', ierr)
  end subroutine nuce_saved_user

  !> A grid of the saved extents and stencil planned for the balancer's
  !> current speeds (collective, a balance point; call nuce_measure first).
  !> Then ask the box (nuce_grid_box), allocate, and nuce_saved_read.
  subroutine nuce_saved_grid_create(s, b, g, ierr)
    type(nuce_saved), intent(in) :: s
    type(nuce_balancer), intent(in) :: b
    type(nuce_grid), intent(out) :: g
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_saved_grid_create(s%ptr, b%ptr, g%ptr), 'nuce_saved_grid_create', ierr)
  end subroutine nuce_saved_grid_create

  !> Reads this rank's box of every saved field into `fields` (collective
  !> over the grid's ranks; ghost cells untouched) and sets the saved cost
  !> on the grid; corrupt data is the same error on every rank.
  subroutine nuce_saved_read(s, g, fields, ierr)
    type(nuce_saved), intent(in) :: s
    type(nuce_grid), intent(in) :: g
    type(nuce_field), intent(in), target, contiguous :: fields(:)
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_saved_read(s%ptr, g%ptr, size(fields, kind=c_int), fields_address(fields)), &
              'nuce_saved_read', ierr)
  end subroutine nuce_saved_read

  !> Frees a save-file handle (local).
  subroutine nuce_saved_free(s, ierr)
    type(nuce_saved), intent(inout) :: s
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_saved_free(s%ptr), 'nuce_saved_free', ierr)
    s%ptr = c_null_ptr
  end subroutine nuce_saved_free

  ! --- Graphs' save files -------------------------------------------------------

  !> Saves graph `g` (every vertex's global id, neighbours, weights,
  !> coordinates and record, the owned records read from the slot buffer
  !> `values(m, :)`), how it is balanced, and the application's own 64-bit
  !> integers `user` (optional) to the file `path` (collective over the
  !> graph's ranks; the same path on every rank), through
  !> path // '.nuce-tmp' renamed once every rank succeeded.
  subroutine nuce_graph_save(g, path, values, user, ierr)
    type(nuce_graph), intent(in) :: g
    character(len=*), intent(in) :: path
    real(c_double), intent(in), target, contiguous :: values(:, :)
    integer(c_int64_t), intent(in), target, contiguous, optional :: user(:)
    integer, intent(out), optional :: ierr
    character(len=:), allocatable :: why
    integer(c_size_t) :: count, nu
    type(c_ptr) :: pu
    why = ''
    count = records_of(g, values, 'values', why)
    call user_bytes(user, pu, nu)
    call fortran_call(why, NUCE_ERR_SHAPE_MISMATCH, g%base)
    call done(c_graph_save(g%ptr, trim(path) // c_null_char, address(values), count, pu, nu), &
              'nuce_graph_save', ierr)
  end subroutine nuce_graph_save

  !> nuce_graph_save that also saves the balancer's speed state (collective
  !> over the balancer's ranks, the graph's); see nuce_grid_checkpoint.
  subroutine nuce_graph_checkpoint(b, g, path, values, user, ierr)
    type(nuce_balancer), intent(in) :: b
    type(nuce_graph), intent(in) :: g
    character(len=*), intent(in) :: path
    real(c_double), intent(in), target, contiguous :: values(:, :)
    integer(c_int64_t), intent(in), target, contiguous, optional :: user(:)
    integer, intent(out), optional :: ierr
    character(len=:), allocatable :: why
    integer(c_size_t) :: count, nu
    type(c_ptr) :: pu
    why = ''
    count = records_of(g, values, 'values', why)
    call user_bytes(user, pu, nu)
    call fortran_call(why, NUCE_ERR_SHAPE_MISMATCH, g%base)
    call done(c_graph_checkpoint(b%ptr, g%ptr, trim(path) // c_null_char, address(values), &
                                 count, pu, nu), 'nuce_graph_checkpoint', ierr)
  end subroutine nuce_graph_checkpoint

  !> Opens the graph's save file `path` (collective over the balancer's
  !> ranks, any number of them): a missing, truncated or corrupt file, a
  !> grid's save file or another format is the same error on every rank.
  subroutine nuce_saved_graph_open(b, path, s, ierr)
    type(nuce_balancer), intent(in) :: b
    character(len=*), intent(in) :: path
    type(nuce_saved_graph), intent(out) :: s
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_saved_graph_open(b%ptr, trim(path) // c_null_char, s%ptr), &
              'nuce_saved_graph_open', ierr)
  end subroutine nuce_saved_graph_open

  !> The saved graph (local): its number of vertices `n`, the number of
  !> ranks that saved it and the 64-bit integers given to nuce_graph_save
  !> as `user` (empty when none were); every output but n optional.
  subroutine nuce_saved_graph_info(s, n, saved_ranks, user, ierr)
    type(nuce_saved_graph), intent(in) :: s
    integer(c_int64_t), intent(out) :: n
    integer, intent(out), optional :: saved_ranks
    integer(c_int64_t), allocatable, intent(out), optional :: user(:)
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: cn
    integer(c_int) :: sr, rc
    type(c_ptr) :: p
    integer(c_size_t) :: nbytes
    cn = 0
    sr = 0
    p = c_null_ptr
    nbytes = 0
    call fortran_call()
    rc = c_saved_graph_info(s%ptr, cn, sr, p, nbytes)
    if (rc /= NUCE_OK) nbytes = 0
    n = cn
    if (present(saved_ranks)) saved_ranks = int(sr)
    if (present(user)) user = user_words(p, nbytes)
    call done(rc, 'nuce_saved_graph_info', ierr)
  end subroutine nuce_saved_graph_info

  !> The saved graph on the balancer's ranks, distributed for its current
  !> speeds, with `m` real(c_double) values per vertex (the record length
  !> it was saved with; the same on every rank), numbered from `numflag`
  !> (optional, 1 by default) in `g` (collective, a balance point). Then
  !> nuce_graph_sizes, allocate, nuce_graph_read and exchange ghosts.
  !> Records of another length are the same error on every rank.
  subroutine nuce_saved_graph_create(s, b, m, g, numflag, ierr)
    type(nuce_saved_graph), intent(in) :: s
    type(nuce_balancer), intent(in) :: b
    integer, intent(in) :: m
    type(nuce_graph), intent(out) :: g
    integer, intent(in), optional :: numflag
    integer, intent(out), optional :: ierr
    character(len=:), allocatable :: why
    why = ''
    if (m < 1) why = 'm must be at least 1 (real(c_double) values per vertex)'
    g%m = max(m, 1)
    g%base = base_of(numflag)
    call fortran_call(why, base=g%base)
    call done(c_saved_graph_create(s%ptr, b%ptr, int(8 * g%m, c_size_t), g%ptr), &
              'nuce_saved_graph_create', ierr)
  end subroutine nuce_saved_graph_create

  !> Frees a graph's save-file handle (local).
  subroutine nuce_saved_graph_free(s, ierr)
    type(nuce_saved_graph), intent(inout) :: s
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_saved_graph_free(s%ptr), 'nuce_saved_graph_free', ierr)
    s%ptr = c_null_ptr
  end subroutine nuce_saved_graph_free

  ! --- Ranks that leave --------------------------------------------------------

  !> Catches the signal named `name` ('SIGTERM', 'SIGINT', 'SIGHUP',
  !> 'SIGUSR1', 'SIGUSR2' or 'SIGXCPU') as this rank's leave notice (local):
  !> it then sets a flag, calls the handler installed before (if any), and
  !> nuce_depart counts this rank as leaving.
  subroutine nuce_catch_leave_signal(name, ierr)
    character(len=*), intent(in) :: name
    integer, intent(out), optional :: ierr
    call done(c_catch_leave_signal_name(trim(name) // c_null_char), &
              'nuce_catch_leave_signal', ierr)
  end subroutine nuce_catch_leave_signal

  !> Whether a leave notice (nuce_catch_leave_signal) arrived on this rank (local).
  subroutine nuce_leave_signalled(signalled, ierr)
    logical, intent(out) :: signalled
    integer, intent(out), optional :: ierr
    integer(c_int) :: f
    f = 0
    call done(c_leave_signalled(f), 'nuce_leave_signalled', ierr)
    signalled = f /= 0
  end subroutine nuce_leave_signalled

  !> A balance point where every rank says whether it leaves (collective);
  !> `nleaving` ranks leave (the same on every rank); a rank whose leave
  !> notice arrived leaves whatever `leaving` says.
  subroutine nuce_depart(b, leaving, nleaving, ierr)
    type(nuce_balancer), intent(in) :: b
    logical, intent(in) :: leaving
    integer, intent(out) :: nleaving
    integer, intent(out), optional :: ierr
    integer(c_int) :: n
    n = 0
    call fortran_call()
    call done(c_depart(b%ptr, merge(1_c_int, 0_c_int, leaving), n), 'nuce_depart', ierr)
    nleaving = int(n)
  end subroutine nuce_depart

  !> Plans grid `g` for the ranks that stay, a move pending (collective):
  !> then nuce_grid_box, allocate, nuce_grid_move, as after a remap.
  subroutine nuce_grid_depart(b, g, ierr)
    type(nuce_balancer), intent(in) :: b
    type(nuce_grid), intent(in) :: g
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_grid_depart(b%ptr, g%ptr), 'nuce_grid_depart', ierr)
  end subroutine nuce_grid_depart

  !> Completes the departure (collective) after every grid of `grids`
  !> moved. On a rank that stays, `b` and `grids` now work on the ranks that
  !> stay, `comm` is their communicator (free it with MPI_Comm_free) and
  !> `released` is .false.; on a leaving rank `released` is .true. and
  !> `comm` is MPI_COMM_NULL: free the handles and call nuce no more.
  subroutine nuce_depart_finish(b, grids, comm, released, ierr)
    type(nuce_balancer), intent(in) :: b
    type(nuce_grid), intent(in) :: grids(:)
    type(MPI_Comm), intent(out) :: comm
    logical, intent(out) :: released
    integer, intent(out), optional :: ierr
    type(nuce_graph) :: no_graphs(0)
    call finish_departure(b, grids, no_graphs, comm, released, 'nuce_depart_finish', ierr)
  end subroutine nuce_depart_finish

  !> Moves graph `g`'s vertices to the ranks that stay, in proportion to
  !> their speeds, their records read from the slot buffer `values(m, :)`
  !> (collective; a leaving rank owns no vertex afterwards). After
  !> nuce_depart_finish_all, on a rank that stays: nuce_graph_sizes,
  !> reallocate `values`, nuce_graph_read and exchange ghosts.
  subroutine nuce_graph_depart(b, g, values, ierr)
    type(nuce_balancer), intent(in) :: b
    type(nuce_graph), intent(in) :: g
    real(c_double), intent(in), target, contiguous :: values(:, :)
    integer, intent(out), optional :: ierr
    character(len=:), allocatable :: why
    integer(c_size_t) :: count
    why = ''
    count = records_of(g, values, 'values', why)
    call fortran_call(why, NUCE_ERR_SHAPE_MISMATCH, g%base)
    call done(c_graph_depart(b%ptr, g%ptr, address(values), count), 'nuce_graph_depart', ierr)
  end subroutine nuce_graph_depart

  !> nuce_depart_finish with the balancer's graphs too, each moved with
  !> nuce_graph_depart: on a rank that stays the same handles `graphs` work
  !> on the ranks that stay (ask the sizes and read the records again). A
  !> graph not moved for the departure is the same error on every rank.
  subroutine nuce_depart_finish_all(b, grids, graphs, comm, released, ierr)
    type(nuce_balancer), intent(in) :: b
    type(nuce_grid), intent(in) :: grids(:)
    type(nuce_graph), intent(in) :: graphs(:)
    type(MPI_Comm), intent(out) :: comm
    logical, intent(out) :: released
    integer, intent(out), optional :: ierr
    call finish_departure(b, grids, graphs, comm, released, 'nuce_depart_finish_all', ierr)
  end subroutine nuce_depart_finish_all

  !> nuce_depart_finish_all, reported as the call `what`.
  subroutine finish_departure(b, grids, graphs, comm, released, what, ierr)
    type(nuce_balancer), intent(in) :: b
    type(nuce_grid), intent(in) :: grids(:)
    type(nuce_graph), intent(in) :: graphs(:)
    type(MPI_Comm), intent(out) :: comm
    logical, intent(out) :: released
    character(len=*), intent(in) :: what
    integer, intent(out), optional :: ierr
    type(c_ptr), allocatable, target :: grid_ptrs(:), graph_ptrs(:)
    integer(c_int) :: fcomm, rel
    ! Never empty: C reads no handle when the count is 0.
    allocate (grid_ptrs(max(size(grids), 1)), graph_ptrs(max(size(graphs), 1)))
    grid_ptrs(1:size(grids)) = grids%ptr
    graph_ptrs(1:size(graphs)) = graphs%ptr
    fcomm = 0
    rel = 0
    call fortran_call()
    call done(c_depart_finish_all_f(b%ptr, size(grids, kind=c_int), c_loc(grid_ptrs), &
                                    size(graphs, kind=c_int), c_loc(graph_ptrs), fcomm, rel), &
              what, ierr)
    comm%MPI_VAL = fcomm
    released = rel /= 0
  end subroutine finish_departure

  ! --- Ranks that join from a standby pool --------------------------------------

  !> Splits the ranks of `comm` into active ranks and a standby pool
  !> (collective; `standby` is each rank's choice). On an active rank
  !> `active` is the active ranks' communicator (create the balancer on it;
  !> free it with MPI_Comm_free); on a standby rank it is MPI_COMM_NULL:
  !> call nuce_pool_wait.
  subroutine nuce_pool_create(comm, standby, active, pool, ierr)
    type(MPI_Comm), intent(in) :: comm
    logical, intent(in) :: standby
    type(MPI_Comm), intent(out) :: active
    type(nuce_pool), intent(out) :: pool
    integer, intent(out), optional :: ierr
    integer(c_int) :: a
    a = 0
    call fortran_call()
    call done(c_pool_create_f(int(comm%MPI_VAL, c_int), merge(1_c_int, 0_c_int, standby), a, &
                              pool%ptr), 'nuce_pool_create', ierr)
    active%MPI_VAL = a
  end subroutine nuce_pool_create

  !> On a standby rank: sleeps until the active ranks admit it (`joined`
  !> .true.: `comm` the grown communicator, `b` a balancer on it, `grids`
  !> the active ranks' grids, each with a move pending: nuce_grid_box,
  !> allocate, nuce_grid_move from an empty field) or release the pool
  !> (`joined` .false.).
  subroutine nuce_pool_wait(pool, joined, comm, b, grids, ierr)
    type(nuce_pool), intent(in) :: pool
    logical, intent(out) :: joined
    type(MPI_Comm), intent(out) :: comm
    type(nuce_balancer), intent(out) :: b
    type(nuce_grid), allocatable, intent(out) :: grids(:)
    integer, intent(out), optional :: ierr
    integer, parameter :: room = 64
    type(c_ptr), target :: ptrs(room)
    integer(c_int) :: j, c, n
    integer :: k
    j = 0
    c = 0
    n = 0
    call fortran_call()
    call done(c_pool_wait_f(pool%ptr, j, c, b%ptr, int(room, c_int), c_loc(ptrs), n), &
              'nuce_pool_wait', ierr)
    joined = j /= 0
    comm%MPI_VAL = c
    allocate (grids(n))
    do k = 1, n
      grids(k)%ptr = ptrs(k)
    end do
  end subroutine nuce_pool_wait

  !> On the active ranks, at a balance point: admits `count` standby ranks.
  !> `b` and `grids` now work on the grown communicator `comm` (free it with
  !> MPI_Comm_free); every speed is measured and each grid has a move
  !> pending (nuce_grid_box, allocate, nuce_grid_move).
  subroutine nuce_pool_admit(pool, b, count, grids, comm, ierr)
    type(nuce_pool), intent(in) :: pool
    type(nuce_balancer), intent(in) :: b
    integer, intent(in) :: count
    type(nuce_grid), intent(in) :: grids(:)
    type(MPI_Comm), intent(out) :: comm
    integer, intent(out), optional :: ierr
    type(c_ptr), allocatable, target :: ptrs(:)
    integer(c_int) :: c
    integer :: k
    allocate (ptrs(max(size(grids), 1)))
    do k = 1, size(grids)
      ptrs(k) = grids(k)%ptr
    end do
    c = 0
    call fortran_call()
    call done(c_pool_admit_f(pool%ptr, b%ptr, int(count, c_int), size(grids, kind=c_int), &
                             c_loc(ptrs), c), 'nuce_pool_admit', ierr)
    comm%MPI_VAL = c
  end subroutine nuce_pool_admit

  !> nuce_pool_wait with the active ranks' graphs too (nuce_pool_admit_all):
  !> on an admitted rank `graphs` are the graphs in the active ranks' order,
  !> this rank's vertices moved in (nuce_graph_sizes, allocate the slot
  !> buffer, nuce_graph_read, exchange ghosts); `numflag` the numbering of
  !> their ids as on the active ranks (default 1).
  subroutine nuce_pool_wait_all(pool, joined, comm, b, grids, graphs, ierr, numflag)
    type(nuce_pool), intent(in) :: pool
    logical, intent(out) :: joined
    type(MPI_Comm), intent(out) :: comm
    type(nuce_balancer), intent(out) :: b
    type(nuce_grid), allocatable, intent(out) :: grids(:)
    type(nuce_graph), allocatable, intent(out) :: graphs(:)
    integer, intent(out), optional :: ierr
    integer, intent(in), optional :: numflag
    integer, parameter :: room = 64
    type(c_ptr), target :: ptrs(room), gptrs(room)
    integer(c_int) :: j, c, n, ng, rc
    integer(c_size_t) :: elem
    integer :: k
    j = 0
    c = 0
    n = 0
    ng = 0
    call fortran_call()
    rc = c_pool_wait_all_f(pool%ptr, j, c, b%ptr, int(room, c_int), c_loc(ptrs), n, &
                           int(room, c_int), c_loc(gptrs), ng)
    joined = j /= 0
    comm%MPI_VAL = c
    allocate (grids(n), graphs(ng))
    do k = 1, n
      grids(k)%ptr = ptrs(k)
    end do
    do k = 1, ng
      graphs(k)%ptr = gptrs(k)
      graphs(k)%base = base_of(numflag)
      elem = 0
      if (rc == NUCE_OK) rc = c_graph_record_size(gptrs(k), elem)
      graphs(k)%m = int(elem / 8, c_int64_t)
    end do
    call done(rc, 'nuce_pool_wait_all', ierr)
  end subroutine nuce_pool_wait_all

  !> nuce_pool_admit with graph `g` too, its records read from its slot
  !> buffer `values(m, owned + ghosts)`: cut again for every rank and moved
  !> at once (then nuce_graph_sizes, reallocate, nuce_graph_read, exchange
  !> ghosts, as after a remap). The admitted ranks take it from
  !> nuce_pool_wait_all. (One graph; C's nuce_pool_admit_all takes several.)
  subroutine nuce_pool_admit_all(pool, b, count, grids, g, values, comm, ierr)
    type(nuce_pool), intent(in) :: pool
    type(nuce_balancer), intent(in) :: b
    integer, intent(in) :: count
    type(nuce_grid), intent(in) :: grids(:)
    type(nuce_graph), intent(in) :: g
    real(c_double), intent(in), target, contiguous :: values(:, :)
    type(MPI_Comm), intent(out) :: comm
    integer, intent(out), optional :: ierr
    type(c_ptr), allocatable, target :: ptrs(:)
    type(c_ptr), target :: gptr(1), vptr(1)
    integer(c_size_t), target :: lens(1)
    character(len=:), allocatable :: why
    integer(c_int) :: c
    integer :: k
    allocate (ptrs(max(size(grids), 1)))
    do k = 1, size(grids)
      ptrs(k) = grids(k)%ptr
    end do
    why = ''
    lens(1) = records_of(g, values, 'values', why)
    gptr(1) = g%ptr
    vptr(1) = address(values)
    c = 0
    call fortran_call(why, NUCE_ERR_SHAPE_MISMATCH, g%base)
    call done(c_pool_admit_all_f(pool%ptr, b%ptr, int(count, c_int), size(grids, kind=c_int), &
                                 c_loc(ptrs), 1_c_int, c_loc(gptr), c_loc(vptr), c_loc(lens), c), &
              'nuce_pool_admit_all', ierr)
    comm%MPI_VAL = c
  end subroutine nuce_pool_admit_all

  !> On the active ranks: releases the pool (every waiting rank returns
  !> with `joined` .false.). Call it before the active ranks finalize.
  subroutine nuce_pool_release(pool, b, ierr)
    type(nuce_pool), intent(in) :: pool
    type(nuce_balancer), intent(in) :: b
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_pool_release(pool%ptr, b%ptr), 'nuce_pool_release', ierr)
  end subroutine nuce_pool_release

  !> Frees a pool handle (local).
  subroutine nuce_pool_free(pool, ierr)
    type(nuce_pool), intent(inout) :: pool
    integer, intent(out), optional :: ierr
    call fortran_call()
    call done(c_pool_free(pool%ptr), 'nuce_pool_free', ierr)
    pool%ptr = c_null_ptr
  end subroutine nuce_pool_free

end module nuce
