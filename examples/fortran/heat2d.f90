! heat2d.f90 — the Jacobi heat-diffusion solver of examples/heat2d.rs and
! examples/c/heat2d.c, in Fortran, load-balanced by nuce through its Fortran
! module (docs/fortran-api.md).
!
! The grid has `rows` rows of `cols` cells; in Fortran it is u(cols, rows)
! (column c, row r), so its memory is the C example's row-major grid. Row 1
! is held at 1, a Gaussian bump lies inside, the boundary is Dirichlet. The
! grid is decomposed in proportion to the ranks' measured speeds; the solver
! runs `phases` phases of `iters` iterations (4-point update, ghost width 1);
! between phases nuce_maybe_remap measures every rank's compute time by itself
! and remaps the grid when it pays off. At the end the grid is gathered on
! rank 0 and compared bit for bit with a serial solve.
!
! `--slowdown R:F@P[,...]` makes rank R really do F times the work from phase
! P on (nuce is not told: it measures). `--record` reports every phase with
! nuce_record_phase instead of nuce's automatic timing.
!
!   cmake -S examples/fortran -B build -DCMAKE_PREFIX_PATH=$PREFIX && cmake --build build
!   mpirun -np 2 build/heat2d --rows 256 --cols 256 --phases 6 --iters 40 --slowdown 1:3@2
program heat2d
  use, intrinsic :: iso_c_binding, only: c_double, c_int64_t
  use, intrinsic :: iso_fortran_env, only: error_unit
  use mpi_f08
  use nuce
  implicit none

  integer, parameter :: dp = c_double, i8 = c_int64_t, max_slow = 16
  integer(i8) :: rows = 256, cols = 256, phases = 6, iters = 40
  integer :: slow(3, max_slow), nslow = 0 ! (rank, factor, phase) per item
  logical :: record = .false., remapped, ok
  integer :: rank, nranks, remaps, factor, f, r
  integer(i8) :: phase, it, lo(2), hi(2), ahead
  type(nuce_balancer) :: b
  type(nuce_array) :: a
  real(dp), allocatable :: global(:, :), result(:, :), u(:, :), next(:, :), speeds(:), s(:, :)
  real(dp), allocatable, volatile :: scratch(:, :) ! stores the compiler must not drop
  real(dp) :: t0, tc, compute, per_iter(2), worst(2)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call parse_args()

  call nuce_balancer_create(MPI_COMM_WORLD, b)
  call nuce_measure(b) ! built-in kernel: the first plan's speeds

  if (rank == 0) then
    allocate (global(cols, rows))
    call fill_initial(global)
  else
    allocate (global(0, 0))
  end if
  call nuce_array_scatter(b, cols, rows, 1_i8, global, a)
  call load_block()

  if (rank == 0) write (*, '(a5, 1x, a12, 1x, a12, 1x, a6, 2x, a)') 'phase', 's/iter', 'compute/iter', &
    'remap', 'speeds'
  remaps = 0
  allocate (speeds(nranks))
  do phase = 0, phases - 1
    factor = factor_at(rank, int(phase))
    t0 = MPI_Wtime()
    compute = 0
    do it = 1, iters
      call nuce_array_exchange_ghosts(a, u)
      tc = MPI_Wtime()
      do f = 1, factor ! every repetition really computes (sweep is not pure)
        call sweep(u, next, lo, hi)
      end do
      ! The copy back is part of an iteration's work too: a slowed rank
      ! repeats it (into scratch) so that its per-cell cost is really F x.
      do f = 2, factor
        scratch = next
      end do
      u(lo(1):hi(1), lo(2):hi(2)) = next
      compute = compute + (MPI_Wtime() - tc)
    end do
    per_iter = [(MPI_Wtime() - t0) / real(iters, dp), compute / real(iters, dp)]
    if (record) call nuce_record_phase(b, real(size(next, kind=i8) * iters, dp), compute)
    ! A remap must pay off within the iterations left (at least one phase).
    ahead = iters * max(phases - phase - 1, 1_i8)
    call nuce_maybe_remap(b, a, iters, u, remapped, ahead=ahead)
    if (remapped) then
      call load_block() ! ghosts are refreshed by the next exchange
      remaps = remaps + 1
    end if
    call nuce_speeds(b, speeds)
    ! Right after a nuce collective, so that this reduction hardly waits
    ! (time outside nuce's calls counts as compute for its automatic timing).
    call MPI_Reduce(per_iter, worst, 2, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD)
    if (rank == 0) then
      write (*, '(i5, 1x, f12.6, 1x, f12.6, 1x, a6, 1x)', advance='no') phase, worst, &
        merge('yes', 'no ', remapped)
      do r = 1, nranks
        write (*, '(1x, es10.3)', advance='no') speeds(r)
      end do
      write (*, *)
    end if
  end do

  if (rank == 0) then
    allocate (result(cols, rows))
  else
    allocate (result(0, 0))
  end if
  call nuce_array_gather(a, u, result)
  ok = .true.
  if (rank == 0) then
    allocate (s(0:cols + 1, 0:rows + 1))
    call serial(s, phases * iters)
    ! Bit for bit: the same operations in the same order as the serial solve.
    ok = all(transfer(result, 0_i8, size(result)) == &
             transfer(s(1:cols, 1:rows), 0_i8, size(result)))
    write (*, '(a, a, a, i0, a, i0, a, i0, a, i0, a, i0, a)') 'heat2d: nuce ', nuce_version(), &
      ', ', nranks, ' ranks, ', cols, 'x', rows, ' (cols x rows), ', phases, ' phases of ', &
      iters, ' iterations'
    write (*, '(a, i0)') 'heat2d: remaps: ', remaps
    if (ok) then
      write (*, '(a)') 'heat2d: serial check: identical'
    else
      write (*, '(a, i0, a, es10.3, a)') 'heat2d: serial check: FAILED (', &
        count(result /= s(1:cols, 1:rows)), ' cells differ, max |diff| = ', &
        maxval(abs(result - s(1:cols, 1:rows))), ')'
    end if
  end if
  call MPI_Bcast(ok, 1, MPI_LOGICAL, 0, MPI_COMM_WORLD)
  call nuce_array_free(a)
  call nuce_balancer_free(b)
  call MPI_Finalize()
  if (.not. ok) error stop 1

contains

  !> The initial value of global cell (c, r), 1-based.
  pure function initial(c, r) result(v)
    integer(i8), intent(in) :: c, r
    real(dp) :: v, x, y, dx, dy
    if (r == 1) then
      v = 1
      return
    end if
    x = real(r - 1, dp) / real(rows, dp)
    y = real(c - 1, dp) / real(cols, dp)
    dx = x - 0.6_dp
    dy = y - 0.3_dp
    v = 0.5_dp * exp(-((dx * dx + dy * dy) * 40.0_dp))
  end function initial

  subroutine fill_initial(g)
    real(dp), intent(out) :: g(:, :)
    integer(i8) :: c, r
    do r = 1, rows
      do c = 1, cols
        g(c, r) = initial(c, r)
      end do
    end do
  end subroutine fill_initial

  !> One Jacobi sweep of the cells lo..hi of the padded block `src` into `dst`.
  !> Global boundary cells keep their value.
  subroutine sweep(src, dst, lo, hi)
    integer(i8), intent(in) :: lo(2), hi(2)
    real(dp), intent(in) :: src(lo(1) - 1:, lo(2) - 1:)
    real(dp), intent(out) :: dst(lo(1):, lo(2):)
    integer(i8) :: c, r
    do r = lo(2), hi(2)
      do c = lo(1), hi(1)
        if (r == 1 .or. c == 1 .or. r == rows .or. c == cols) then
          dst(c, r) = src(c, r)
        else
          dst(c, r) = 0.25_dp * (src(c, r - 1) + src(c, r + 1) + src(c - 1, r) + src(c + 1, r))
        end if
      end do
    end do
  end subroutine sweep

  !> The serial solve into the padded global grid s(0:cols+1, 0:rows+1).
  subroutine serial(s, steps)
    real(dp), intent(out) :: s(0:, 0:)
    integer(i8), intent(in) :: steps
    real(dp), allocatable :: nxt(:, :)
    integer(i8) :: t
    s = 0
    call fill_initial(s(1:cols, 1:rows))
    allocate (nxt(cols, rows))
    do t = 1, steps
      call sweep(s, nxt, [1_i8, 1_i8], [cols, rows])
      s(1:cols, 1:rows) = nxt
    end do
  end subroutine serial

  !> (Re)allocates this rank's padded block for the array's current layout
  !> and copies nuce's block into it: after the scatter and every remap.
  subroutine load_block()
    if (allocated(u)) deallocate (u, next, scratch)
    call nuce_array_box(a, rank, lo, hi)
    allocate (u(lo(1) - 1:hi(1) + 1, lo(2) - 1:hi(2) + 1), next(lo(1):hi(1), lo(2):hi(2)), &
              scratch(lo(1):hi(1), lo(2):hi(2)))
    call nuce_array_read(a, u)
  end subroutine load_block

  !> The work factor of rank `r` in phase `p` (--slowdown).
  integer function factor_at(r, p)
    integer, intent(in) :: r, p
    integer :: i, best
    factor_at = 1
    best = -1
    do i = 1, nslow
      if (slow(1, i) == r .and. slow(3, i) <= p .and. slow(3, i) > best) then
        best = slow(3, i)
        factor_at = max(slow(2, i), 1)
      end if
    end do
  end function factor_at

  subroutine parse_args()
    character(len=256) :: arg, val
    integer :: i, n, stat
    n = command_argument_count()
    i = 1
    do while (i <= n)
      call get_command_argument(i, arg)
      val = ''
      if (i < n) call get_command_argument(i + 1, val)
      stat = 0
      select case (trim(arg))
      case ('--rows')
        read (val, *, iostat=stat) rows
        i = i + 1
      case ('--cols')
        read (val, *, iostat=stat) cols
        i = i + 1
      case ('--phases')
        read (val, *, iostat=stat) phases
        i = i + 1
      case ('--iters')
        read (val, *, iostat=stat) iters
        i = i + 1
      case ('--record')
        record = .true.
      case ('--slowdown')
        call parse_slowdown(trim(val), stat)
        i = i + 1
      case default
        stat = 1
      end select
      if (stat /= 0) call usage(trim(arg) // ' ' // trim(val))
      i = i + 1
    end do
    if (rows < 1 .or. cols < 1 .or. phases < 1 .or. iters < 1) call usage('sizes must be >= 1')
  end subroutine parse_args

  !> Items R:F@P separated by commas (P defaults to 0).
  subroutine parse_slowdown(spec, stat)
    character(len=*), intent(in) :: spec
    integer, intent(out) :: stat
    integer :: start, comma, colon, at
    stat = 0
    start = 1
    do while (start <= len(spec) .and. stat == 0)
      comma = index(spec(start:), ',')
      if (comma == 0) then
        comma = len(spec) + 1
      else
        comma = start + comma - 1
      end if
      if (nslow == max_slow) then
        stat = 1
        return
      end if
      nslow = nslow + 1
      slow(:, nslow) = [0, 1, 0]
      colon = index(spec(start:comma - 1), ':')
      at = index(spec(start:comma - 1), '@')
      if (colon == 0) then
        stat = 1
        return
      end if
      colon = start + colon - 1
      read (spec(start:colon - 1), *, iostat=stat) slow(1, nslow)
      if (at == 0) then
        if (stat == 0) read (spec(colon + 1:comma - 1), *, iostat=stat) slow(2, nslow)
      else
        at = start + at - 1
        if (stat == 0) read (spec(colon + 1:at - 1), *, iostat=stat) slow(2, nslow)
        if (stat == 0) read (spec(at + 1:comma - 1), *, iostat=stat) slow(3, nslow)
      end if
      start = comma + 1
    end do
  end subroutine parse_slowdown

  subroutine usage(what)
    character(len=*), intent(in) :: what
    if (rank == 0) write (error_unit, '(a, a, a)') 'heat2d: bad argument: ', what, &
      ' (usage: --rows N --cols N --phases N --iters N --slowdown R:F@P[,...] --record)'
    call MPI_Finalize()
    stop 2
  end subroutine usage

end program heat2d
