! errors.f90 — misuse of the Fortran module returns the same code on every
! rank (through `ierr`), and correct use round-trips an array and fills a
! 3D grid's ghost cells in Fortran order (nuce_grid_*). Run under
! mpirun with any number of ranks; prints "errors: all N checks passed on P
! ranks" and exits 0, or names every failed check and exits 1.
program errors
  use, intrinsic :: iso_c_binding, only: c_double, c_int, c_int64_t, c_ptr, c_size_t
  use mpi_f08
  use nuce
  use checks
  implicit none

  integer, parameter :: dp = c_double, i8 = c_int64_t
  integer :: rank, nranks, ierr, r, fcomm
  integer(i8) :: lo(2), hi(2), area, n1 = 30, n2 = 20
  type(nuce_balancer) :: b
  type(nuce_array) :: a
  type(MPI_Comm) :: mine
  real(dp), allocatable :: speeds(:), global(:, :), back(:, :), u(:, :)
  logical :: remapped
  type(nuce_decision) :: decision
  integer :: procs(3)
  integer(i8), allocatable :: lx(:), ly(:), lz(:)
  real(dp) :: imbalance

  interface
    !> The C API's nuce_set_speeds, called directly, as C code in the same
    !> program would (no announcement of the module before it).
    function c_set_speeds(b, speeds, n) bind(c, name='nuce_set_speeds') result(rc)
      import :: c_double, c_int, c_ptr, c_size_t
      type(c_ptr), value :: b
      real(c_double), intent(in) :: speeds(*)
      integer(c_size_t), value :: n
      integer(c_int) :: rc
    end function c_set_speeds
  end interface

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)

  call expect(merge(NUCE_OK, -1, len(nuce_version()) > 0), NUCE_OK, .false., 'nuce_version')
  call nuce_balancer_create(MPI_COMM_NULL, b, ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'create(MPI_COMM_NULL)', &
                    'comm is MPI_COMM_NULL in nuce_balancer_create')
  ! An integer handle (the mpi module's); the caller's communicator survives the free.
  call MPI_Comm_dup(MPI_COMM_WORLD, mine)
  fcomm = mine%MPI_VAL
  call nuce_balancer_create(fcomm, b, ierr)
  call expect(ierr, NUCE_OK, .true., 'create(integer handle)')
  call nuce_balancer_free(b, ierr)
  call expect(ierr, NUCE_OK, .false., 'free')
  call MPI_Barrier(mine, ierr)
  call expect(merge(NUCE_OK, -1, ierr == MPI_SUCCESS), NUCE_OK, .true., &
              "the caller's communicator survives")
  call MPI_Comm_free(mine)

  call nuce_balancer_create(MPI_COMM_WORLD, b, ierr)
  call expect(ierr, NUCE_OK, .true., 'create(type(MPI_Comm))')
  allocate (speeds(nranks))
  speeds = 1
  speeds(nranks) = -1
  call nuce_set_speeds(b, speeds, ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_SPEED, .true., 'set_speeds(negative speed)', &
                    'invalid speed -1 at index ' // str(nranks) // ':')
  speeds = [(real(r + 1, dp), r = 0, nranks - 1)]
  call nuce_set_speeds(b, [speeds, 1.0_dp], ierr)
  call expect_error(ierr, NUCE_ERR_SHAPE_MISMATCH, .true., 'set_speeds(wrong count)', &
                    str(nranks + 1) // ' speeds for ' // str(nranks) // ' ranks')
  ! A procedure that refuses on its own (a negative task count: it makes no
  ! C call) reports its reason, and leaves no announcement behind: a C call
  ! made directly right after it speaks C (a 0-based index), not Fortran,
  ! and reports its own message.
  block
    integer(i8) :: counts(1), send(1), ret(1)
    call nuce_tasks_min_time([1.0_dp], 0.1_dp, 0.1_dp, -1_i8, counts, send, ret, ierr=ierr)
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .false., 'tasks_min_time(negative tasks)', &
                      'tasks is negative')
    speeds = 1
    speeds(nranks) = -1
    call nuce_tasks_min_time([1.0_dp], 0.1_dp, 0.1_dp, -1_i8, counts, send, ret, ierr=ierr)
    ierr = c_set_speeds(b%ptr, speeds, int(nranks, c_size_t))
    call expect_error(ierr, NUCE_ERR_INVALID_SPEED, .true., &
                      'C nuce_set_speeds right after a refused Fortran call (C words)', &
                      'invalid speed -1 at index ' // str(nranks - 1) // ':')
    speeds = [(real(r + 1, dp), r = 0, nranks - 1)]
  end block
  ! Size sweeps: a negative size on the last rank, a size beyond the bound,
  ! no size (refused before anything is measured); then a sweep of two
  ! sizes on a balancer of its own gives every rank a speed.
  call nuce_measure_sizes(b, [256_i8, merge(-5_i8, 256_i8, rank == nranks - 1)], ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'measure_sizes(negative size)', &
                    'sizes(2) is -5 cells')
  call nuce_measure_sizes(b, [256_i8, 2_i8**40], ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'measure_sizes(2**40 cells)', &
                    'sizes(2) is 1099511627776 cells: a block size must be between 16 and')
  call nuce_measure_sizes(b, [integer(i8) ::], ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'measure_sizes(no size)', &
                    'nuce_measure_sizes takes 1 to 64 block sizes, not 0')
  block
    type(nuce_balancer) :: swept
    real(dp) :: measured(nranks)
    call nuce_balancer_create(MPI_COMM_WORLD, swept, ierr)
    call nuce_measure_sizes(swept, [256_i8, 4096_i8], ierr)
    call expect(ierr, NUCE_OK, .true., 'measure_sizes(256, 4096 cells)')
    measured = 0
    call nuce_speeds(swept, measured, ierr)
    call expect(merge(NUCE_OK, -1, ierr == NUCE_OK .and. all(measured > 0)), NUCE_OK, .true., &
                'speeds after measure_sizes')
    call nuce_balancer_free(swept)
  end block
  call nuce_set_speeds(b, speeds, ierr)
  call expect(ierr, NUCE_OK, .true., 'set_speeds')
  speeds = 0
  call nuce_speeds(b, speeds, ierr)
  call expect(merge(NUCE_OK, -1, ierr == NUCE_OK .and. &
              all(speeds == [(real(r + 1, dp), r = 0, nranks - 1)])), NUCE_OK, .false., 'speeds')

  ! The plan's boxes tile the n1 x n2 array.
  call nuce_plan(b, -n1, n2, ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'plan(negative n1)', &
                    'n1 = -30 is negative')
  call nuce_plan(b, n1, n2, ierr)
  call expect(ierr, NUCE_OK, .true., 'plan')
  call nuce_plan_box(b, nranks, lo, hi, ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .false., 'plan_box(rank out of range)', &
                    'rank ' // str(nranks) // ' is out of range')
  area = 0
  do r = 0, nranks - 1
    call nuce_plan_box(b, r, lo, hi, ierr)
    if (any(lo < 1) .or. hi(1) > n1 .or. hi(2) > n2) ierr = -1
    area = area + max(hi(1) - lo(1) + 1, 0_i8) * max(hi(2) - lo(2) + 1, 0_i8)
  end do
  call expect(merge(NUCE_OK, -1, ierr == NUCE_OK .and. area == n1 * n2), NUCE_OK, .false., &
              'the plan tiles 30 x 20')
  call plan1d_checks()
  call plan1d_weighted_checks()
  call memory_checks()

  if (rank == 0) then
    allocate (global(n1, n2))
    call random_number(global)
  else
    allocate (global(0, 0))
  end if
  if (rank == 0) then
    call nuce_array_scatter(b, n1, n2, 1_i8, global(:, 1:n2 - 1), a, ierr)
  else
    call nuce_array_scatter(b, n1, n2, 1_i8, global, a, ierr)
  end if
  call expect_error(ierr, NUCE_ERR_SHAPE_MISMATCH, .true., 'scatter(global too small on rank 0)', &
                    'global has 570 elements, 600 expected')
  if (nranks > 1) then
    call nuce_array_scatter(b, n1 + merge(1_i8, 0_i8, rank == 1), n2, 1_i8, global, a, ierr)
    call expect_error(ierr, NUCE_ERR_DISAGREEMENT, .true., 'scatter(n1 differs on rank 1)', &
                      'rank(s) [1] call nuce_array_scatter(n1 31, n2 20, ghost 1)')
  end if
  call nuce_array_scatter(b, n1, n2, 1_i8, global, a, ierr)
  call expect(ierr, NUCE_OK, .true., 'scatter')
  call nuce_array_box(a, rank, lo, hi, ierr)
  allocate (u(lo(1) - 1:hi(1) + 1, lo(2) - 1:hi(2) + 1))
  call nuce_array_read(a, u, ierr)
  call expect(ierr, NUCE_OK, .false., 'read')
  if (rank == 0 .and. size(u) > 0) then
    call expect(merge(NUCE_OK, -1, all(u(lo(1):hi(1), lo(2):hi(2)) == &
                global(lo(1):hi(1), lo(2):hi(2)))), NUCE_OK, .false., 'the block holds the global cells')
  end if
  if (rank == nranks - 1) then
    call nuce_array_exchange_ghosts(a, u(:, lo(2):), ierr)
  else
    call nuce_array_exchange_ghosts(a, u, ierr)
  end if
  call expect_error(ierr, NUCE_ERR_SHAPE_MISMATCH, .true., 'exchange_ghosts(wrong block on the last rank)', &
                    'shape mismatch: u has ')
  call nuce_array_exchange_ghosts(a, u, ierr)
  call expect(ierr, NUCE_OK, .true., 'exchange_ghosts')
  if (rank == 0) then
    allocate (back(n1, n2))
  else
    allocate (back(0, 0))
  end if
  call nuce_array_gather(a, u, back, ierr)
  call expect(ierr, NUCE_OK, .true., 'gather')
  if (rank == 0) call expect(merge(NUCE_OK, -1, all(back == global)), NUCE_OK, .false., &
                             'gather returns what was scattered')
  call nuce_set_decomposer(b, 'foo', ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'set_decomposer(unknown name)', &
                    'unknown array algorithm "foo"')
  call nuce_set_decomposer(b, 'rb', ierr)
  call expect(ierr, NUCE_OK, .true., 'set_decomposer(rb)')
  call nuce_set_decomposer3(b, 'octree', ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'set_decomposer3(unknown name)', &
                    'unknown grid3 algorithm "octree"')
  call nuce_set_decomposer3(b, 'rb', ierr)
  call expect(ierr, NUCE_OK, .true., 'set_decomposer3(rb)')
  call nuce_set_hysteresis(b, merge(-0.1_dp, 0.1_dp, rank == nranks - 1), ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'set_hysteresis(negative on the last rank)', &
                    'hysteresis = -0.1 is not')
  call nuce_set_timeout(b, 30.0_dp, ierr)
  call expect(ierr, NUCE_OK, .true., 'set_timeout(30 s)')
  call nuce_waiting_end(ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .false., 'waiting_end without begin', &
                    'no waiting section is open')
  call nuce_waiting_begin(ierr)
  call MPI_Barrier(MPI_COMM_WORLD)
  call nuce_waiting_end(ierr)
  call expect(ierr, NUCE_OK, .false., 'a waiting section around a barrier')
  call nuce_record_phase(b, -1.0_dp, 1.0_dp, ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .false., 'record_phase(negative work)', &
                    'work = -1')
  call nuce_maybe_remap(b, a, 10_i8, u, remapped, ahead=merge(-1_i8, 10_i8, rank == 0), ierr=ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'maybe_remap(negative ahead on rank 0)', &
                    'ahead = -1 is negative')
  call nuce_maybe_remap(b, a, 10_i8, u, remapped, ierr=ierr)
  call expect(ierr, NUCE_OK, .true., 'maybe_remap')
  call nuce_last_decision(b, decision, ierr)
  call expect(ierr, NUCE_OK, .false., 'last_decision')
  call expect(merge(NUCE_OK, -1, ((decision%remapped /= 0) .eqv. remapped) .and. &
              nuce_rule_name(decision%rule) /= 'unknown' .and. decision%iterations == 10), &
              NUCE_OK, .false., 'last_decision(matches the balance point)')
  ! PETSc DMDA ownership ranges: a bad grid, then ranges summing to the extents.
  procs = [nranks + 1, 1, 1]
  call nuce_ownership_ranges(b, [12_i8, 10_i8, 8_i8], procs, lx, ly, lz, ierr=ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'ownership_ranges(procs product /= ranks)', &
                    'does not multiply to the ' // str(nranks) // ' ranks')
  procs = 0
  call nuce_ownership_ranges(b, [12_i8, 10_i8, 8_i8], procs, lx, ly, lz, imbalance, ierr)
  call expect(ierr, NUCE_OK, .true., 'ownership_ranges')
  call expect(merge(NUCE_OK, -1, product(procs) == nranks .and. sum(lx) == 12 .and. &
                    sum(ly) == 10 .and. sum(lz) == 8 .and. size(lx) == procs(1) .and. &
                    imbalance >= 0), NUCE_OK, .false., 'ownership ranges sum to the extents')
  call nuce_array_free(a, ierr)
  call expect(ierr, NUCE_OK, .false., 'array_free')
  call grid_checks()
  call nuce_balancer_free(b, ierr)
  call expect(ierr, NUCE_OK, .false., 'balancer_free')

  call finish('errors')

contains

  !> nuce_plan_1d: bad input (negative n, a count array of the wrong size on
  !> one rank, n differing on the last rank) is the same code on every rank;
  !> a good call gives counts(r + 1) for rank r that sum to n, each within
  !> one unit of its share of the speeds 1, 2, ..., nranks.
  subroutine plan1d_checks()
    integer(i8), allocatable :: counts(:)
    real(dp) :: total
    logical :: within
    allocate (counts(nranks + 1))
    call nuce_plan_1d(b, -3_i8, counts(1:nranks), ierr)
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'plan_1d(negative n)', &
                      'n = -3 is negative')
    call nuce_plan_1d(b, 100_i8, counts(1:merge(nranks + 1, nranks, rank == nranks - 1)), ierr)
    call expect(ierr, NUCE_ERR_SHAPE_MISMATCH, .true., 'plan_1d(size(counts) wrong on the last rank)')
    if (nranks > 1) then
      call nuce_plan_1d(b, merge(101_i8, 100_i8, rank == nranks - 1), counts(1:nranks), ierr)
      call expect_error(ierr, NUCE_ERR_DISAGREEMENT, .true., 'plan_1d(n differs on the last rank)', &
                        'nuce_plan_1d(n 101')
    end if
    counts = -1
    call nuce_plan_1d(b, 1000_i8, counts(1:nranks), ierr)
    call expect(ierr, NUCE_OK, .true., 'plan_1d')
    total = real(nranks, dp) * real(nranks + 1, dp) / 2
    within = all([(abs(real(counts(r + 1), dp) - 1000 * real(r + 1, dp) / total) < 1, &
                   r = 0, nranks - 1)])
    call expect(merge(NUCE_OK, -1, sum(counts(1:nranks)) == 1000 .and. within), NUCE_OK, .false., &
                'plan_1d counts: sum n, each within 1 of its share')
  end subroutine plan1d_checks

  !> nuce_plan_1d_weighted (p4est counts): a NaN weight on the last rank is the
  !> same code on every rank; a good call (speeds 1, 2, ..., nranks, nothing
  !> timed) gives counts that sum to the global number of items, each rank's
  !> weight within the heaviest item (3) of its share.
  subroutine plan1d_weighted_checks()
    integer(i8), allocatable :: counts(:)
    real(dp), allocatable :: w(:)
    real(dp) :: imb, wsum, share, load
    integer(i8) :: first, k
    integer :: q
    logical :: within
    allocate (counts(nranks), w(10 + 7 * rank))
    w = [(real(mod(k, 4_i8), dp), k = 1, size(w, kind=i8))]
    if (rank == nranks - 1) w(1) = -1
    call nuce_plan_1d_weighted(b, w, 0_i8, counts, imb, ierr)
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'plan_1d_weighted(negative weight)', &
                      'weight 0 is -1')
    w(1) = 1
    call nuce_plan_1d_weighted(b, w, 0_i8, counts, imb, ierr)
    call expect(ierr, NUCE_OK, .true., 'plan_1d_weighted')
    ! Every rank's pieces are known here: rank q has 10 + 7 q weights mod(k, 4), first 1.
    wsum = 0
    do q = 0, nranks - 1
      wsum = wsum + 1 + sum([(real(mod(k, 4_i8), dp), k = 2, 10 + 7 * q)])
    end do
    within = .true.
    first = 0
    do q = 0, nranks - 1
      load = piece_weight(first, counts(q + 1))
      share = wsum * real(q + 1, dp) / (real(nranks, dp) * real(nranks + 1, dp) / 2)
      within = within .and. abs(load - share) <= 3
      first = first + counts(q + 1)
    end do
    call expect(merge(NUCE_OK, -1, sum(counts) == sum([(10 + 7 * q, q = 0, nranks - 1)]) &
                      .and. within .and. imb >= 0), NUCE_OK, .false., &
                'plan_1d_weighted counts: sum the items, each within the heaviest of its share')
  end subroutine plan1d_weighted_checks

  !> The weight of items first + 1 .. first + count of the global sequence
  !> (rank 0's 10 weights, rank 1's 17, ...; rank q's k-th weight mod(k, 4), its first 1).
  real(dp) function piece_weight(first, count) result(wt)
    integer(i8), intent(in) :: first, count
    integer(i8) :: g, start, k
    integer :: q
    wt = 0
    start = 0
    do q = 0, nranks - 1
      do k = 1, 10 + 7 * q
        g = start + k
        if (g > first .and. g <= first + count) then
          if (k == 1) then
            wt = wt + 1
          else
            wt = wt + real(mod(k, 4_i8), dp)
          end if
        end if
      end do
      start = start + 10 + 7 * q
    end do
  end function piece_weight

  !> nuce_set_memory_limit_from_machine on a balancer of its own: bytes per
  !> cell NaN on the last rank and a fraction of 0 are the same code on
  !> every rank; 8-byte cells in 40 % of the machine give a positive limit,
  !> and limits too small for 1000 units (cells that make the limit about
  !> 1000 / (nranks + 1)) make nuce_plan_1d fail on every rank.
  subroutine memory_checks()
    use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
    type(nuce_balancer) :: m
    integer(i8) :: cells, counts(nranks)
    real(dp) :: nan
    nan = ieee_value(nan, ieee_quiet_nan)
    call nuce_balancer_create(MPI_COMM_WORLD, m, ierr)
    call nuce_set_memory_limit_from_machine(m, merge(nan, 8.0_dp, rank == nranks - 1), 0.4_dp, &
                                            cells, ierr)
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'memory_limit_from_machine(NaN bytes)', &
                      'bytes_per_cell = NaN is not a finite number > 0')
    call nuce_set_memory_limit_from_machine(m, 8.0_dp, 0.0_dp, ierr=ierr)
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'memory_limit_from_machine(fraction 0)', &
                      'fraction = 0 is not in (0, 1]')
    cells = 0
    call nuce_set_memory_limit_from_machine(m, 8.0_dp, 0.4_dp, cells, ierr)
    call expect(merge(ierr, -1, cells > 0), NUCE_OK, .true., 'memory_limit_from_machine')
    ! About 1000 / (nranks + 1) cells per rank: below 1000 in all.
    call nuce_set_memory_limit_from_machine(m, 8.0_dp * real(cells, dp) / 250 * (nranks + 1) / 4, &
                                            0.4_dp, cells, ierr)
    call expect(merge(ierr, -1, cells > 0 .and. cells * nranks < 1000), NUCE_OK, .true., &
                'memory_limit_from_machine(big cells)')
    call nuce_plan_1d(m, 1000_i8, counts, ierr)
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'plan_1d(beyond the memory limits)', &
                      'memory')
    call nuce_balancer_free(m)
  end subroutine memory_checks

  !> The grid API in Fortran order: boxes tile the grid, ghosts (with
  !> paddings that differ per dimension) hold the neighbours' cells at the
  !> same global indices, misuse is the same code on every rank.
  subroutine grid_checks()
    integer(i8), parameter :: n(3) = [9_i8, 7_i8, 5_i8], pad(3) = [2_i8, 1_i8, 3_i8]
    integer(i8) :: glo(3), ghi(3), volume, i, j, k
    real(dp), allocatable, target :: v(:, :, :)
    type(nuce_grid) :: g
    type(nuce_field) :: none(0)
    integer, allocatable :: nb(:)
    logical :: good
    ! Equal speeds: every rank gets cells, so ghosts come from other ranks.
    call nuce_set_speeds(b, [(1.0_dp, r = 1, nranks)], ierr)
    call expect(ierr, NUCE_OK, .true., 'set_speeds(equal)')
    if (nranks > 1) then
      call nuce_grid_create(b, merge(n + [1_i8, 0_i8, 0_i8], n, rank == nranks - 1), 1_i8, &
                            NUCE_STENCIL_BOX, g, ierr)
      call expect_error(ierr, NUCE_ERR_DISAGREEMENT, .true., 'grid_create(n(1) differs on the last rank)', &
                        'rank(s) [' // str(nranks - 1) // '] call nuce_grid_create(n [10, 7, 5], ')
    end if
    call nuce_grid_create(b, [-9_i8, 7_i8, 5_i8], 1_i8, NUCE_STENCIL_BOX, g, ierr)
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'grid_create(negative n(1))', &
                      'n(1) = -9 is negative')
    call nuce_grid_create(b, n, 1_i8, NUCE_STENCIL_BOX, g, ierr)
    call expect(ierr, NUCE_OK, .true., 'grid_create')
    volume = 0
    good = .true.
    do r = 0, nranks - 1
      call nuce_grid_box(g, r, glo, ghi, ierr)
      if (any(ghi < glo)) cycle
      volume = volume + product(ghi - glo + 1)
      good = good .and. all(glo >= 1 .and. ghi <= n)
    end do
    call expect(merge(NUCE_OK, -1, good .and. volume == product(n)), NUCE_OK, .false., &
                'grid boxes tile the grid (1-based, in bounds)')
    call nuce_grid_box(g, rank, glo, ghi, ierr)
    allocate (v(glo(1) - pad(1):ghi(1) + pad(1), glo(2) - pad(2):ghi(2) + pad(2), &
                glo(3) - pad(3):ghi(3) + pad(3)))
    v = -1
    do k = glo(3), ghi(3)
      do j = glo(2), ghi(2)
        do i = glo(1), ghi(1)
          v(i, j, k) = real(i + 100 * j + 10000 * k, dp)
        end do
      end do
    end do
    call nuce_grid_exchange(g, [nuce_grid_field(v, pad)], ierr)
    call expect(ierr, NUCE_OK, .true., 'grid_exchange')
    ! Every cell within one layer of the box and inside the grid is filled.
    good = .true.
    do k = max(glo(3) - 1, 1_i8), min(ghi(3) + 1, n(3))
      do j = max(glo(2) - 1, 1_i8), min(ghi(2) + 1, n(2))
        do i = max(glo(1) - 1, 1_i8), min(ghi(1) + 1, n(1))
          if (any(ghi < glo)) cycle
          good = good .and. v(i, j, k) == real(i + 100 * j + 10000 * k, dp)
        end do
      end do
    end do
    call expect(merge(NUCE_OK, -1, good), NUCE_OK, .false., 'grid ghosts in Fortran order')
    call nuce_grid_neighbours(g, nb, ierr)
    call expect(merge(ierr, -1, all(nb /= rank) .and. all(nb >= 0 .and. nb < nranks) .and. &
                (nranks == 1 .or. size(nb) > 0)), NUCE_OK, .false., &
                'grid_neighbours')
    call nuce_grid_exchange(g, none, ierr)
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'grid_exchange(no field)', &
                      '0 fields')
    call nuce_grid_move(g, [nuce_grid_field(v, pad)], [nuce_grid_field(v, pad)], ierr)
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'grid_move(no move pending)', &
                      'no remap is pending')
    call nuce_grid_free(g, ierr)
    call expect(ierr, NUCE_OK, .false., 'grid_free')
  end subroutine grid_checks

end program errors
